#include "p2pcheck/model/topology.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/rules/p2pdma.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::ConfigSpace;
using testing::FakeSysfs;
using testing::TempDir;

// pci0000:00: root ports 00:01.0 and 00:02.0, an RCiEP 00:04.0 and a host bridge at 00:00.0.
// Below 00:01.0 a switch (01:00.0 up, 02:01.0 / 02:02.0 down) with a GPU (03:00.0, plus audio .1)
// and an NVMe (04:00.0 with a VF 04:00.2). Below 00:02.0 a second NVMe (05:00.0).
class SmallMachine : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeSysfs sys(dir_);
    std::string hb = "sys/devices/pci0000:00";
    sys.add(hb, "0000:00:00.0", 0x1022, 0x14a4, 0x060000, ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256));
    std::string rp1 = sys.add(hb, "0000:00:01.0", 0x1022, 0x14ab, 0x060400,
                              ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4).acs(0x5f, 0x1d).bytes());
    std::string rp2 = sys.add(hb, "0000:00:02.0", 0x1022, 0x14ab, 0x060400,
                              ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4).acs(0x5f, 0x1d).bytes());
    sys.add(hb, "0000:00:04.0", 0x1022, 0x14dc, 0x088000, ConfigSpace(0x1022, 0x14dc, 0x088000, false).pcie(9).bytes());
    std::string up = sys.add(rp1, "0000:01:00.0", 0x1000, 0xc030, 0x060400,
                             ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(5).bytes());
    std::string dn1 = sys.add(up, "0000:02:01.0", 0x1000, 0xc030, 0x060400,
                              ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6).acs(0x5f, 0x1d).bytes());
    std::string dn2 = sys.add(up, "0000:02:02.0", 0x1000, 0xc030, 0x060400,
                              ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6).bytes());
    sys.add(dn1, "0000:03:00.0", 0x1002, 0x74a1, 0x120000, ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes());
    sys.add(dn1, "0000:03:00.1", 0x1002, 0xab38, 0x040300, ConfigSpace(0x1002, 0xab38, 0x040300, false).pcie(0).bytes());
    std::string nvme = sys.add(dn2, "0000:04:00.0", 0x144d, 0xa824, 0x010802,
                               ConfigSpace(0x144d, 0xa824, 0x010802, false).pcie(0).bytes());
    std::string vf = sys.add(dn2, "0000:04:00.2", 0x144d, 0xa824, 0x010802,
                             ConfigSpace(0xffff, 0xffff, 0x010802, false).pcie(0).bytes());
    dir_.link(vf + "/physfn", "../0000:04:00.0");
    sys.add(rp2, "0000:05:00.0", 0x144d, 0xa824, 0x010802, ConfigSpace(0x144d, 0xa824, 0x010802, false).pcie(0).bytes());
    dir_.write(nvme + "/nvme/nvme0/model", "SAMSUNG MZQL23T8HCLS-00A07\n");
    dir_.write(nvme + "/nvme/nvme0/nvme0n1/size", "2048\n");
    dir_.link(nvme + "/nvme/nvme0/device", "../../../0000:04:00.0");
    dir_.link("sys/class/nvme/nvme0", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:04:00.0/nvme/nvme0");
    dir_.link("sys/block/nvme0n1", "../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:04:00.0/nvme/nvme0/nvme0n1");
    dir_.write(nvme + "/nvme/nvme0/nvme0n1/nvme0n1p1/partition", "1\n");
    source_ = open_tree_source(dir_.path());
    topo_ = read_topology(*source_, decoder_);
    inv_ = read_inventory(*source_, topo_);
  }
  const Function& fn(const char* bdf) { return topo_.at(*Bdf::parse(bdf)); }

  TempDir dir_;
  PciDecoder decoder_;
  std::unique_ptr<Source> source_;
  Topology topo_;
  Inventory inv_;
};

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

TEST_F(SmallMachine, WalkUnderOneSwitch) {
  P2pWalk w = calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:04:00.0"));
  ASSERT_TRUE(w.common);
  EXPECT_EQ(w.common->bdf.str(), "0000:01:00.0");
  EXPECT_EQ(w.distance, 4);
  // The kernel checks GPU, its downstream port and the common upstream port, then the NVMe side.
  ASSERT_EQ(w.acs_checked.size(), 5u);
  EXPECT_EQ(w.acs_checked[1]->bdf.str(), "0000:02:01.0");
  ASSERT_EQ(w.acs_redirect.size(), 1u);
  EXPECT_EQ(w.acs_redirect[0]->bdf.str(), "0000:02:01.0");
}

TEST_F(SmallMachine, WalkDistancesMatchTheKernel) {
  EXPECT_EQ(calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:03:00.0")).distance, 0);
  EXPECT_EQ(calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:03:00.1")).distance, 2);
  // A VF counts from its PF's upstream bridge.
  P2pWalk vf = calc_map_type_and_dist(topo_, fn("0000:04:00.0"), fn("0000:04:00.2"));
  EXPECT_EQ(vf.distance, 2);
  EXPECT_EQ(vf.common->bdf.str(), "0000:02:02.0");
  // Different root ports: no common bridge; both whole chains.
  P2pWalk split = calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:05:00.0"));
  EXPECT_FALSE(split.common);
  EXPECT_EQ(split.distance, 6);
  EXPECT_TRUE(split.acs_checked.empty());
  // Root-bus devices have no upstream bridge at all.
  P2pWalk root = calc_map_type_and_dist(topo_, fn("0000:00:04.0"), fn("0000:00:00.0"));
  EXPECT_FALSE(root.common);
  EXPECT_EQ(root.distance, 2);
}

TEST_F(SmallMachine, PathHopsGoUpThenDown) {
  PairPath p = describe_path(topo_, inv_, {*Bdf::parse("0000:03:00.0"), *Bdf::parse("0000:05:00.0")});
  std::vector<std::string> roles;
  for (const Hop& h : p.hops) roles.push_back(h.role);
  EXPECT_EQ(roles, (std::vector<std::string>{"GPU", "switch downstream port", "switch upstream port", "root port",
                                             "host bridge", "root port", "NVMe"}));
  EXPECT_EQ(p.host_bridges, std::vector<std::string>{"0000:00"});
  EXPECT_FALSE(p.common);
  EXPECT_EQ(p.distance, 6);
}

TEST_F(SmallMachine, RouteMeetsWhereTheKernelsWalkMeets) {
  const char* pairs[][2] = {{"0000:03:00.0", "0000:04:00.0"}, {"0000:03:00.0", "0000:03:00.1"},
                            {"0000:04:00.0", "0000:04:00.2"}, {"0000:03:00.0", "0000:05:00.0"}};
  for (const auto& [a, b] : pairs) {
    PairPath route = describe_path(topo_, inv_, {*Bdf::parse(a), *Bdf::parse(b)});
    P2pWalk walk = calc_map_type_and_dist(topo_, fn(a), fn(b));
    EXPECT_EQ(route.common, walk.common) << a << " " << b;
    EXPECT_EQ(route.distance, walk.distance) << a << " " << b;
    EXPECT_EQ(route.gpu_side, walk.provider_side) << a << " " << b;
    EXPECT_EQ(route.nvme_side, walk.client_side) << a << " " << b;
  }
}

TEST_F(SmallMachine, EachFileIsReadOnce) {
  for (const auto& [path, count] : source_->access_log().file_reads) EXPECT_EQ(count, 1) << path;
}

TEST(Topology, BrokenInputGivesErrorsNamingTheFile) {
  TempDir dir;
  FakeSysfs sys(dir);
  std::string d = sys.add("sys/devices/pci0000:00", "0000:00:01.0", 0x1002, 0x74a1, 0x120000,
                          ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes(1000));
  PciDecoder decoder;
  auto src = open_tree_source(dir.path());
  try {
    read_topology(*src, decoder);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/sys/devices/pci0000:00/0000:00:01.0/config");
    EXPECT_NE(std::string(e.what()).find("1000 bytes"), std::string::npos);
  }
  dir.write(d + "/config", ConfigSpace(0x1002, 0x74a1, 0x120000, false).bytes(64));
  dir.write(d + "/vendor", "garbage\n");
  src = open_tree_source(dir.path());
  EXPECT_THROW(read_topology(*src, decoder), Error);
  dir.write(d + "/vendor", "0x1002\n");
  std::filesystem::remove(dir.path() + "/" + d + "/class");
  src = open_tree_source(dir.path());
  try {
    read_topology(*src, decoder);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/sys/devices/pci0000:00/0000:00:01.0/class");
  }
}

TEST(Topology, VanishedDeviceIsAClearError) {
  TempDir dir;
  dir.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  PciDecoder decoder;
  auto src = open_tree_source(dir.path());
  EXPECT_THROW(read_topology(*src, decoder), Error);
}

TEST(Topology, NonRootCaptureMakesHostBridgeDeviceUnknown) {
  TempDir dir;
  FakeSysfs sys(dir);
  // First device on the root bus is not 00.0: only its port type (needs root) decides.
  sys.add("sys/devices/pci0000:40", "0000:40:01.1", 0x1022, 0x14ab, 0x060400,
          ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4).bytes(64));
  PciDecoder decoder;
  auto src = open_tree_source(dir.path());
  Topology topo = read_topology(*src, decoder);
  EXPECT_TRUE(topo.config_truncated);
  EXPECT_FALSE(topo.host_bridges.at("0000:40").bridge_device);
  EXPECT_TRUE(topo.host_bridges.at("0000:40").bridge_device_unknown);
}

}  // namespace
}  // namespace p2pcheck
