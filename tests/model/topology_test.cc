#include "p2pcheck/model/topology.h"

#include <gtest/gtest.h>
#include <set>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/source/error.h"
#include "small_machine.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

using testing::ConfigSpace;
using testing::FakeRoot;
using testing::FakeSysfs;
using testing::SmallMachine;

// The Error read_topology throws for `root`'s tree; a test failure, and an empty one, when it throws none.
Error topology_error(FakeRoot& root) {
  PciDecoder decoder;
  auto src = root.source();
  try {
    read_topology(*src, decoder);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "read_topology accepted the tree";
  return Error("", "");
}

TEST_F(SmallMachine, HierarchyFollowsSysfsPaths) {
  EXPECT_EQ(topo_.functions.size(), 12u);
  EXPECT_EQ(fn("0000:03:00.0").parent, Bdf::parse("0000:02:01.0"));
  EXPECT_FALSE(fn("0000:00:01.0").parent);
  EXPECT_EQ(fn("0000:03:00.0").host_bridge, "0000:00");
  EXPECT_EQ(fn("0000:04:00.2").physfn, Bdf::parse("0000:04:00.0"));
  const HostBridge& hb = topo_.host_bridges.at("0000:00");
  EXPECT_EQ(hb.bridge_device, Bdf::parse("0000:00:00.0"));
  EXPECT_EQ(hb.root_devices.size(), 4u);
}

TEST_F(SmallMachine, RolesSkipAudioFunctionsAndMapNvmeNames) {
  ASSERT_EQ(inv_.gpus.size(), 1u);
  EXPECT_EQ(inv_.gpus[0].str(), "0000:03:00.0");
  ASSERT_EQ(inv_.ignored.size(), 1u);
  EXPECT_EQ(inv_.ignored[0].bdf.str(), "0000:03:00.1");
  ASSERT_EQ(inv_.nvmes.size(), 2u);  // 04:00.0 and 05:00.0; the VF bound to vfio-pci is no one's to use
  ASSERT_EQ(inv_.unusable.size(), 1u);
  EXPECT_EQ(inv_.unusable[0].bdf.str(), "0000:04:00.2");
  EXPECT_EQ(inv_.unusable[0].driver, "vfio-pci");
  EXPECT_NE(inv_.unusable[0].why().find("no host block device"), std::string::npos);
  const NvmeController* c = inv_.nvme_at(*Bdf::parse("0000:04:00.0"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->name, "nvme0");
  EXPECT_EQ(c->model, "SAMSUNG MZQL23T8HCLS-00A07");
  ASSERT_EQ(c->namespaces.size(), 1u);
  EXPECT_EQ(c->namespaces[0].size_bytes, 2048u * 512);
  EXPECT_EQ(c->namespaces[0].partitions, std::vector<std::string>{"nvme0n1p1"});
}

TEST_F(SmallMachine, SelectorsAcceptAddressesNamesAndDevicePaths) {
  PairSelection sel;
  sel.nvme = {"/dev/nvme0n1p1"};
  auto pairs = select_pairs(topo_, inv_, sel);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].nvme.str(), "0000:04:00.0");
  sel.nvme = {"nvme0"};
  EXPECT_EQ(select_pairs(topo_, inv_, sel).size(), 1u);
  sel.gpu = {"05:00.0"};  // any function may stand in for the GPU
  sel.nvme = {"0000:04:00.0"};
  EXPECT_EQ(select_pairs(topo_, inv_, sel)[0].gpu.str(), "0000:05:00.0");
  sel.nvme = {"nvme7"};
  EXPECT_THROW(select_pairs(topo_, inv_, sel), UsageError);
  EXPECT_EQ(select_pairs(topo_, inv_, PairSelection{}).size(), 2u);  // 1 GPU x 2 usable NVMe functions
  sel.gpu.clear();
  sel.nvme = {"0000:04:00.2"};  // named, an unusable function is judged all the same
  EXPECT_EQ(select_pairs(topo_, inv_, sel).size(), 1u);
}

TEST_F(SmallMachine, EachFileIsReadOnce) {
  // An empty log would pass the rule: first show the walk read every function's config and the model.
  const auto& reads = source_->access_log().file_reads;
  ASSERT_EQ(topo_.functions.size(), 12u);
  for (const auto& [bdf, f] : topo_.functions) EXPECT_TRUE(reads.count(f.sysfs_path + "/config")) << f.sysfs_path;
  EXPECT_TRUE(reads.count(fn("0000:04:00.0").sysfs_path + "/nvme/nvme0/model"));
  for (const auto& [path, count] : reads) EXPECT_EQ(count, 1) << path;
}

// The check's load (Load::kForCheck) reads every function as topo's does, less what only topo
// prints: no function's NUMA node (run_check reads its pairs' ends'), and BARs for the GPUs alone
// (the checks judge theirs).
TEST(Topology, TheChecksLoadLeavesOutOnlyTheBarsAndNumaNodesItDoesNotJudge) {
  int gpus_with_bars = 0;
  for (const char* fixture : {"epyc-mi300x-8gpu", "xeon-2socket-hostbridges", "opteron-6300-prezen"}) {
    const std::string root = std::string(P2PCHECK_FIXTURES) + "/" + fixture + "/root";
    auto all_source = open_tree_source(root), check_source = open_tree_source(root);
    MachineState all = load_machine_state(*all_source, Load::kEverything);
    MachineState check = load_machine_state(*check_source, Load::kForCheck);
    ASSERT_EQ(all.topo.functions.size(), check.topo.functions.size()) << fixture;
    std::set<Bdf> gpus(all.inv.gpus.begin(), all.inv.gpus.end());
    EXPECT_EQ(std::set<Bdf>(check.inv.gpus.begin(), check.inv.gpus.end()), gpus) << fixture;
    for (const auto& [bdf, fn] : all.topo.functions) {
      auto a = function_json(all.topo, fn, all.inv), b = function_json(check.topo, check.topo.at(bdf), check.inv);
      EXPECT_TRUE(b["numa_node"].is_null()) << fixture << " " << bdf.str();  // not read
      if (gpus.count(bdf)) {
        EXPECT_EQ(b["bars"], a["bars"]) << fixture << " " << bdf.str();
        gpus_with_bars += !a["bars"].empty();
      } else {
        EXPECT_TRUE(b["bars"].empty()) << fixture << " " << bdf.str();
      }
      for (auto* j : {&a, &b}) j->erase("numa_node"), j->erase("bars");
      EXPECT_EQ(a, b) << fixture << " " << bdf.str();
    }
  }
  EXPECT_GE(gpus_with_bars, 9);  // the fixtures' GPUs have BARs: the comparison saw some
}

TEST(Topology, BrokenInputGivesErrorsNamingTheFile) {
  FakeRoot root;
  FakeSysfs sys(root);
  std::string d = sys.add("sys/devices/pci0000:00", "0000:00:01.0", 0x1002, 0x74a1, 0x120000,
                          ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes(1000));
  Error short_config = topology_error(root);
  EXPECT_EQ(short_config.where(), "/sys/devices/pci0000:00/0000:00:01.0/config");
  EXPECT_NE(std::string(short_config.what()).find("1000 bytes"), std::string::npos);
  // A vendor file config space cannot stand in for (it reads all ones, as a VF's does), holding garbage.
  root.write(d + "/config", ConfigSpace(0xffff, 0xffff, 0x120000, false).bytes(64));
  root.write(d + "/vendor", "garbage\n");
  EXPECT_EQ(topology_error(root).where(), "/" + d + "/vendor");
  // A memory tree cannot delete: the same function again, in a new tree, without its class file.
  FakeRoot no_class;
  no_class.write(d + "/vendor", "0x1002\n");
  no_class.write(d + "/device", "0x74a1\n");
  no_class.write(d + "/config", ConfigSpace(0x1002, 0x74a1, 0x120000, false).bytes(64));
  no_class.write(d + "/numa_node", "-1\n");
  no_class.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(topology_error(no_class).where(), "/sys/devices/pci0000:00/0000:00:01.0/class");
}

TEST(Topology, ResourceLinesCountBarsWhetherUsedOrNot) {
  FakeRoot root;
  FakeSysfs sys(root);
  std::string d = sys.add("sys/devices/pci0000:00", "0000:00:01.0", 0x1002, 0x74a1, 0x120000,
                          ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes(4096));
  const std::string unused = "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
  root.write(d + "/resource", unused + "0x0000460000000000 0x00004607ffffffff 0x000000000014220c\n" + unused +
                                  "  0x00000000f0000000   0x00000000f007ffff 0x0000000000040200\n" +  // spaced
                                  "0x0000000000000000 0x0000000000000000 0x0000000000000000 \n" +     // trailing blank
                                  "0x00000000000c0000 0x00000000000c0000 0x0000000000000200\n");      // one byte
  PciDecoder decoder;
  auto src = root.source();
  Topology topo = read_topology(*src, decoder);
  const std::vector<Bar>& bars = topo.at(*Bdf::parse("0000:00:01.0")).bars;
  ASSERT_EQ(bars.size(), 3u);
  EXPECT_EQ(bars[0].index, 1);
  EXPECT_EQ(bars[0].start, 0x460000000000u);
  EXPECT_EQ(bars[0].size, 0x800000000u);
  EXPECT_EQ(bars[0].flags, 0x14220cu);
  EXPECT_EQ(bars[1].index, 3);
  EXPECT_EQ(bars[1].size, 0x80000u);
  EXPECT_EQ(bars[2].index, 5);  // after the zeros with a trailing blank, parsed the long way
  EXPECT_EQ(bars[2].size, 1u);
  // Still hex, still three words: a line that only looks unused is read and refused.
  root.write(d + "/resource", unused + "0x0000000000000000 0x0000000000000000 0x000000000000000g\n");
  Error bad_line = topology_error(root);
  EXPECT_EQ(bad_line.where(), "/" + d + "/resource");
  EXPECT_NE(std::string(bad_line.what()).find("line 2"), std::string::npos) << bad_line.what();
}

// One endpoint below a root port, with every attribute file written as the kernel prints it, so
// the same function can be read from config space and from the files alone.
struct AttributeCase {
  FakeRoot root;
  std::string rp, ep;
  AttributeCase() {
    FakeSysfs sys(root);
    rp = sys.add("sys/devices/pci0000:00", "0000:00:01.0", 0x1022, 0x14ab, 0x060400,
                 ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4, 4, 16, 4, 16).bytes());
    std::string c = ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0, 5, 16, 4, 8).bytes();
    c[0x2c] = 0x02, c[0x2d] = 0x10, c[0x2e] = 0x0d, c[0x2f] = 0x0e;  // subsystem 1002:0e0d
    ep = sys.add(rp, "0000:01:00.0", 0x1002, 0x74a1, 0x120000, c);
    for (const std::string& d : {rp, ep}) root.write(d + "/revision", "0x01\n");
    root.write(ep + "/subsystem_vendor", "0x1002\n");
    root.write(ep + "/subsystem_device", "0x0e0d\n");
    root.write(ep + "/current_link_speed", "16.0 GT/s PCIe\n");
    root.write(ep + "/current_link_width", "8\n");
    root.write(ep + "/max_link_speed", "32.0 GT/s PCIe\n");
    root.write(ep + "/max_link_width", "16\n");
  }
  // The endpoint as read_topology() reads it, and which of its attribute files it opened.
  std::pair<Function, std::set<std::string>> read() const {
    PciDecoder decoder;
    auto src = root.source();
    Topology topo = read_topology(*src, decoder);
    std::set<std::string> opened;
    for (const auto& [path, count] : src->access_log().file_reads)
      if (path.rfind("/" + ep + "/", 0) == 0) opened.insert(path.substr(ep.size() + 2));
    return {topo.at(*Bdf::parse("0000:01:00.0")), opened};
  }
};

void expect_same_attributes(const Function& a, const Function& b) {
  EXPECT_EQ(a.vendor, b.vendor);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.subsystem_vendor, b.subsystem_vendor);
  EXPECT_EQ(a.subsystem_device, b.subsystem_device);
  EXPECT_EQ(a.revision, b.revision);
  EXPECT_EQ(a.class_code, b.class_code);
  EXPECT_EQ(a.link.cur_speed, b.link.cur_speed);
  EXPECT_EQ(a.link.max_speed, b.link.max_speed);
  EXPECT_EQ(a.link.cur_width, b.link.cur_width);
  EXPECT_EQ(a.link.max_width, b.link.max_width);
}

TEST(Topology, AttributesShownByConfigSpaceAreNotReadAgain) {
  AttributeCase full;
  auto [fn, opened] = full.read();
  EXPECT_EQ(opened, (std::set<std::string>{"class", "config", "numa_node"}));
  EXPECT_EQ(fn.vendor, 0x1002);
  EXPECT_EQ(fn.subsystem_device, 0x0e0d);
  EXPECT_EQ(fn.revision, 0x01);
  EXPECT_EQ(fn.link.cur_speed, 16.0);
  EXPECT_EQ(fn.link.max_width, 16);

  // The same function with config space denied: every file is read, and they say the same.
  AttributeCase denied;
  denied.root.fail(denied.ep + "/config", ReadStatus::kDenied, "Permission denied");
  auto [from_files, read_files] = denied.read();
  expect_same_attributes(fn, from_files);
  EXPECT_TRUE(read_files.count("vendor") && read_files.count("subsystem_vendor") && read_files.count("revision") &&
              read_files.count("current_link_speed") && read_files.count("max_link_width"))
      << ::testing::PrintToString(read_files);
  EXPECT_NE(from_files.config_note.find("needs root"), std::string::npos);
}

TEST(Topology, SixtyFourByteConfigStillReadsTheLinkFiles) {
  AttributeCase nonroot;
  std::string c = ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0, 5, 16, 4, 8).bytes(64);
  c[0x2c] = 0x02, c[0x2d] = 0x10, c[0x2e] = 0x0d, c[0x2f] = 0x0e;
  nonroot.root.write(nonroot.ep + "/config", c);
  auto [fn, opened] = nonroot.read();
  EXPECT_EQ(opened, (std::set<std::string>{"class", "config", "numa_node", "current_link_speed", "current_link_width",
                                           "max_link_speed", "max_link_width"}));
  expect_same_attributes(fn, AttributeCase().read().first);
}

TEST(Topology, VirtualFunctionIdsComeFromTheFiles) {
  AttributeCase c;
  FakeSysfs sys(c.root);
  // Its own config space reads 0xffff, as a VF's does; the kernel gives it the PF's vendor.
  std::string vf = sys.add(c.rp, "0000:01:00.2", 0x1002, 0x74b5, 0x120000,
                           ConfigSpace(0xffff, 0xffff, 0x120000, false).pcie(0, 0, 0, 0, 0).bytes());
  c.root.link(vf + "/physfn", "../0000:01:00.0");
  c.root.write(vf + "/revision", "0x01\n");
  c.root.write(vf + "/subsystem_vendor", "0x1002\n");
  c.root.write(vf + "/current_link_speed", "Unknown\n");
  PciDecoder decoder;
  auto src = c.root.source();
  Topology topo = read_topology(*src, decoder);
  const Function& fn = topo.at(*Bdf::parse("0000:01:00.2"));
  EXPECT_EQ(fn.vendor, 0x1002);
  EXPECT_EQ(fn.device, 0x74b5);
  EXPECT_EQ(fn.revision, 0x01);
  EXPECT_EQ(fn.subsystem_vendor, 0x1002);
  EXPECT_FALSE(fn.link.cur_speed);
  const auto& reads = src->access_log().file_reads;
  for (const char* file : {"vendor", "device", "subsystem_vendor", "revision", "current_link_speed"})
    EXPECT_TRUE(reads.count("/" + vf + "/" + file)) << file;
}

TEST(Topology, BridgeSubsystemFromTheSsvidCapabilityOrTheFiles) {
  AttributeCase c;
  std::string config = ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4, 4, 16, 4, 16).bytes();
  config[0x41] = static_cast<char>(0xc0);  // PCIe capability -> SSVID at 0xc0: 1022:1453
  config[0xc0] = 0x0d, config[0xc4] = 0x22, config[0xc5] = 0x10, config[0xc6] = 0x53, config[0xc7] = 0x14;
  c.root.write(c.rp + "/config", config);
  c.root.write(c.rp + "/subsystem_vendor", "0x1022\n");
  c.root.write(c.rp + "/subsystem_device", "0x1453\n");
  PciDecoder decoder;
  auto src = c.root.source();
  Topology topo = read_topology(*src, decoder);
  const Function& rp = topo.at(*Bdf::parse("0000:00:01.0"));
  EXPECT_EQ(rp.subsystem_vendor, 0x1022);
  EXPECT_EQ(rp.subsystem_device, 0x1453);
  EXPECT_FALSE(src->access_log().file_reads.count("/" + c.rp + "/subsystem_vendor"));

  // Without root only the header is there: the files.
  c.root.write(c.rp + "/config", config.substr(0, 64));
  src = c.root.source();
  topo = read_topology(*src, decoder);
  EXPECT_EQ(topo.at(*Bdf::parse("0000:00:01.0")).subsystem_device, 0x1453);
  EXPECT_TRUE(src->access_log().file_reads.count("/" + c.rp + "/subsystem_vendor"));
}

TEST(Topology, ImportWithoutConfigSpaceReadsEveryFile) {
  // As the udev and hwloc imports build it: no config file, declared not carried.
  auto tree = std::make_shared<MemoryTree>();
  std::string d = "/sys/devices/pci0000:00/0000:00:01.0";
  tree->add_file(d + "/vendor", "0x144d\n");
  tree->add_file(d + "/device", "0xa824\n");
  tree->add_file(d + "/class", "0x010802\n");
  tree->add_file(d + "/subsystem_vendor", "0x144d\n");
  tree->add_file(d + "/subsystem_device", "0xa801\n");
  tree->add_file(d + "/revision", "0x02\n");
  tree->add_link("/sys/bus/pci/devices/0000:00:01.0", "../../.." + d.substr(4));
  tree->set_not_carried(NotCarried{"udev", "not in this udev database", {"/sys/devices/**/config"}});
  PciDecoder decoder;
  auto src = open_memory_source(tree, "udev (test)");
  Topology topo = read_topology(*src, decoder);
  const Function& fn = topo.at(*Bdf::parse("0000:00:01.0"));
  EXPECT_EQ(fn.vendor, 0x144d);
  EXPECT_EQ(fn.subsystem_device, 0xa801);
  EXPECT_EQ(fn.revision, 0x02);
  EXPECT_EQ(fn.port_type, PortType::kUnknown);
  EXPECT_EQ(fn.config_note, "config space not in this udev database");
}

TEST(Topology, VanishedDeviceIsAClearError) {
  FakeRoot root;
  root.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  PciDecoder decoder;
  auto src = root.source();
  EXPECT_THROW(read_topology(*src, decoder), Error);
}

TEST(Topology, NonRootCaptureMakesHostBridgeDeviceUnknown) {
  FakeRoot root;
  FakeSysfs sys(root);
  // First device on the root bus is not 00.0: only its port type (needs root) decides.
  sys.add("sys/devices/pci0000:40", "0000:40:01.1", 0x1022, 0x14ab, 0x060400,
          ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4).bytes(64));
  PciDecoder decoder;
  auto src = root.source();
  Topology topo = read_topology(*src, decoder);
  EXPECT_TRUE(topo.config_truncated);
  EXPECT_FALSE(topo.host_bridges.at("0000:40").bridge_device);
  EXPECT_TRUE(topo.host_bridges.at("0000:40").bridge_device_unknown);
}

}  // namespace
}  // namespace p2pcheck
