#include "p2pcheck/model/topology.h"

#include <gtest/gtest.h>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/source/error.h"
#include "small_machine.h"

namespace p2pcheck {
namespace {

using testing::ConfigSpace;
using testing::FakeRoot;
using testing::FakeSysfs;
using testing::SmallMachine;

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
  ASSERT_EQ(inv_.nvmes.size(), 3u);
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
  EXPECT_EQ(select_pairs(topo_, inv_, PairSelection{}).size(), 3u);  // 1 GPU x 3 NVMe functions
}

TEST_F(SmallMachine, PathHopsGoUpThenDown) {
  PairPath p = describe_path(topo_, inv_, {*Bdf::parse("0000:03:00.0"), *Bdf::parse("0000:05:00.0")});
  std::vector<std::string> roles;
  for (const Hop& h : path_hops(inv_, p)) roles.push_back(h.role);
  EXPECT_EQ(roles, (std::vector<std::string>{"GPU", "switch downstream port", "switch upstream port", "root port",
                                             "host bridge", "root port", "NVMe"}));
  EXPECT_EQ(p.host_bridges, std::vector<std::string>{"0000:00"});
  EXPECT_FALSE(p.common);
  EXPECT_EQ(p.distance, 6);
}

TEST_F(SmallMachine, EachFileIsReadOnce) {
  // An empty log would pass the rule: first show the walk read every function's config and the model.
  const auto& reads = source_->access_log().file_reads;
  ASSERT_EQ(topo_.functions.size(), 12u);
  for (const auto& [bdf, f] : topo_.functions) EXPECT_TRUE(reads.count(f.sysfs_path + "/config")) << f.sysfs_path;
  EXPECT_TRUE(reads.count(fn("0000:04:00.0").sysfs_path + "/nvme/nvme0/model"));
  for (const auto& [path, count] : reads) EXPECT_EQ(count, 1) << path;
}

TEST(Topology, BrokenInputGivesErrorsNamingTheFile) {
  FakeRoot root;
  FakeSysfs sys(root);
  std::string d = sys.add("sys/devices/pci0000:00", "0000:00:01.0", 0x1002, 0x74a1, 0x120000,
                          ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes(1000));
  PciDecoder decoder;
  auto src = root.source();
  try {
    read_topology(*src, decoder);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/sys/devices/pci0000:00/0000:00:01.0/config");
    EXPECT_NE(std::string(e.what()).find("1000 bytes"), std::string::npos);
  }
  root.write(d + "/config", ConfigSpace(0x1002, 0x74a1, 0x120000, false).bytes(64));
  root.write(d + "/vendor", "garbage\n");
  src = root.source();
  EXPECT_THROW(read_topology(*src, decoder), Error);
  // A memory tree cannot delete: the same function again, in a new tree, without its class file.
  FakeRoot no_class;
  no_class.write(d + "/vendor", "0x1002\n");
  no_class.write(d + "/device", "0x74a1\n");
  no_class.write(d + "/config", ConfigSpace(0x1002, 0x74a1, 0x120000, false).bytes(64));
  no_class.write(d + "/numa_node", "-1\n");
  no_class.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  src = no_class.source();
  try {
    read_topology(*src, decoder);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/sys/devices/pci0000:00/0000:00:01.0/class");
  }
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
