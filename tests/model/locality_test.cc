#include "p2pcheck/model/locality.h"

#include <gtest/gtest.h>

#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/source/error.h"
#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

// classify_locality() of two functions, meeting their chains as the kernel's loop does (rules/
// finds it so for a pair's walk; model/ has no walk).
Locality classify(const Topology& topo, const Function& a, const Function& b) {
  auto a_chain = topo.upstream_chain(a), b_chain = topo.upstream_chain(b);
  for (std::size_t i = 0; i < a_chain.size(); ++i)
    for (std::size_t j = 0; j < b_chain.size(); ++j)
      if (a_chain[i] == b_chain[j]) return classify_locality(topo, a, b, a_chain[i], i, j);
  return classify_locality(topo, a, b, nullptr, a_chain.size(), b_chain.size());
}

// A small tree by hand: two host bridges (00 and 80), each with root ports; below 00:01.0 a
// switch (02:00.0 up, 03:0x.0 down) with a nested one below 03:02.0.
class LocalityTree {
 public:
  LocalityTree() {
    add("00:01.0", "0000:00", std::nullopt, 0);  // root port
    add("02:00.0", "0000:00", "00:01.0", 0);     // switch upstream port
    add("03:00.0", "0000:00", "02:00.0", 0);     // downstream ports
    add("03:01.0", "0000:00", "02:00.0", 0);
    add("03:02.0", "0000:00", "02:00.0", 0);
    add("04:00.0", "0000:00", "03:00.0", 0);  // GPU below the switch
    add("05:00.0", "0000:00", "03:01.0", 0);  // NVMe below the same switch
    add("06:00.0", "0000:00", "03:02.0", 0);  // nested switch
    add("07:00.0", "0000:00", "06:00.0", 0);
    add("08:00.0", "0000:00", "07:00.0", 0);     // NVMe two switches down
    add("00:02.0", "0000:00", std::nullopt, 0);  // root port with a multi-function device below
    add("09:00.0", "0000:00", "00:02.0", 0);
    add("09:00.1", "0000:00", "00:02.0", 0);
    add("00:03.0", "0000:00", std::nullopt, 0);  // another root port of the same root bus
    add("0a:00.0", "0000:00", "00:03.0", 0);
    add("40:01.0", "0000:40", std::nullopt, 0);  // another host bridge, same node
    add("41:00.0", "0000:40", "40:01.0", 0);
    add("80:01.0", "0000:80", std::nullopt, 1);  // another socket
    add("81:00.0", "0000:80", "80:01.0", 1);
    topo.numa_nodes = 2;
  }
  Function& fn(const char* bdf) { return topo.functions.at(*Bdf::parse(bdf)); }
  Locality between(const char* a, const char* b) { return classify(topo, fn(a), fn(b)); }
  Topology topo;

 private:
  void add(const char* bdf, const char* hb, std::optional<const char*> parent, int node) {
    Function f;
    f.bdf = *Bdf::parse(bdf);
    f.host_bridge = hb;
    if (parent) f.parent = Bdf::parse(*parent);
    f.numa_node = node;
    topo.functions.emplace(f.bdf, f);
  }
};

TEST(Locality, BelowOneSwitchIsPixAndThroughANestedSwitchPxb) {
  LocalityTree t;
  Locality one = t.between("04:00.0", "05:00.0");
  EXPECT_EQ(one.cls, LocalityClass::kSameSwitch);
  EXPECT_STREQ(one.nvidia_smi, "PIX");
  EXPECT_EQ(locality_text(one), "same PCIe switch (nvidia-smi PIX)");
  Locality two = t.between("04:00.0", "08:00.0");
  EXPECT_EQ(two.cls, LocalityClass::kSameSwitch);
  EXPECT_STREQ(two.nvidia_smi, "PXB");
  EXPECT_STREQ(to_string(two.cls), "same_switch");
}

TEST(Locality, MeetingAtARootPortIsSameRootPort) {
  LocalityTree t;
  Locality l = t.between("09:00.0", "09:00.1");
  EXPECT_EQ(l.cls, LocalityClass::kSameRootPort);
  EXPECT_STREQ(l.nvidia_smi, "PHB");
  EXPECT_EQ(l.gpu_node, 0);
  EXPECT_STREQ(locality_code(l.cls), "RP");
}

TEST(Locality, DifferentRootPortsOfOneRootBusAreSameHostBridge) {
  LocalityTree t;
  Locality l = t.between("04:00.0", "0a:00.0");
  EXPECT_EQ(l.cls, LocalityClass::kSameHostBridge);
  EXPECT_STREQ(l.nvidia_smi, "PHB");
  EXPECT_STREQ(to_string(l.cls), "same_host_bridge");
}

TEST(Locality, HostBridgesOfOneNodeAreNodeAndOfTwoNodesSys) {
  LocalityTree t;
  Locality node = t.between("04:00.0", "41:00.0");
  EXPECT_EQ(node.cls, LocalityClass::kSameNumaNode);
  EXPECT_STREQ(node.nvidia_smi, "NODE");
  EXPECT_EQ(locality_text(node), "same NUMA node 0 (nvidia-smi NODE)");
  Locality sys = t.between("04:00.0", "81:00.0");
  EXPECT_EQ(sys.cls, LocalityClass::kAcrossNumaNodes);
  EXPECT_STREQ(sys.nvidia_smi, "SYS");
  EXPECT_EQ(sys.gpu_node, 0);
  EXPECT_EQ(sys.nvme_node, 1);
  EXPECT_EQ(locality_text(sys), "across NUMA nodes 0 and 1 (nvidia-smi SYS)");
}

TEST(Locality, ANodeTheInputCannotCarryIsUnknownSayingWhy) {
  LocalityTree t;
  for (Function* f : {&t.fn("04:00.0"), &t.fn("81:00.0")}) f->numa_unknown = "not in this lspci output";
  Locality l = t.between("04:00.0", "81:00.0");
  EXPECT_EQ(l.cls, LocalityClass::kUnknown);
  EXPECT_STREQ(l.nvidia_smi, "");
  EXPECT_EQ(l.why, "NUMA node not in this lspci output");
  EXPECT_EQ(locality_text(l), "unknown: NUMA node not in this lspci output");
  // Below one switch the NUMA node is not needed: the class is known.
  t.fn("05:00.0").numa_unknown = "not in this lspci output";
  EXPECT_EQ(t.between("04:00.0", "05:00.0").cls, LocalityClass::kSameSwitch);
}

TEST(Locality, NoNodeIsTheOneNodeOnAOneNodeMachineAndUnknownOnSeveral) {
  LocalityTree t;
  t.fn("41:00.0").numa_node = -1;
  Locality several = t.between("04:00.0", "41:00.0");
  EXPECT_EQ(several.cls, LocalityClass::kUnknown);
  EXPECT_EQ(several.why, "firmware gives 0000:41:00.0 no NUMA node (numa_node -1) and the machine has 2 NUMA nodes");
  t.topo.numa_nodes = 1;
  EXPECT_EQ(t.between("04:00.0", "41:00.0").cls, LocalityClass::kSameNumaNode);
  t.topo.numa_nodes.reset();
  t.topo.numa_nodes_unknown = "not in this lspci output";
  EXPECT_EQ(t.between("04:00.0", "41:00.0").why,
            "firmware gives 0000:41:00.0 no NUMA node (numa_node -1) and the machine has an unknown number of NUMA "
            "nodes (not in this lspci output)");
}

// The fixtures' two-socket machines: their trees give each host bridge a node (machine.toml).
TEST(Locality, TwoSocketFixturesCrossTheSocketInterconnect) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/xeon-2socket-hostbridges/root");
  MachineState s = load_machine_state(*source, Load::kEverything);
  EXPECT_EQ(s.topo.numa_nodes, 2);
  const Function& gpu = s.topo.at(*Bdf::parse("18:00.0"));
  EXPECT_EQ(classify(s.topo, gpu, s.topo.at(*Bdf::parse("d8:00.0"))).cls, LocalityClass::kAcrossNumaNodes);
  EXPECT_EQ(classify(s.topo, gpu, s.topo.at(*Bdf::parse("5e:00.0"))).cls, LocalityClass::kSameNumaNode);
}

TEST(Locality, NumaFilesReadAsTheKernelPrintsThemAndBadOnesNameTheFile) {
  testing::FakeRoot root;
  const std::string dir = "sys/devices/pci0000:00/0000:00:01.0";
  root.write("sys/devices/system/node/online", "0,2-3\n");
  root.write(dir + "/numa_node", "3\n");
  auto src = root.source();
  Function fn;
  fn.sysfs_path = "/" + dir;
  fn.numa_unknown = "not read";
  read_function_numa(*src, fn);
  EXPECT_EQ(fn.numa_node, 3);
  EXPECT_TRUE(fn.numa_unknown.empty());
  Topology topo;
  read_numa_nodes(*src, topo);
  EXPECT_EQ(topo.numa_nodes, 3);
  root.write(dir + "/numa_node", "9999999999\n");
  try {
    read_function_numa(*src, fn);
    ADD_FAILURE() << "no error for an out-of-range node";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("numa_node"), std::string::npos) << e.what();
  }
  // Missing: a kernel without CONFIG_NUMA has no such file, and one node: NUMA_NO_NODE, known.
  Function other;
  other.sysfs_path = "/sys/devices/pci0000:00/0000:00:02.0";
  read_function_numa(*src, other);
  EXPECT_EQ(other.numa_node, -1);
  EXPECT_TRUE(other.numa_unknown.empty());
  testing::FakeRoot empty;
  auto none = empty.source();
  read_numa_nodes(*none, topo);
  EXPECT_FALSE(topo.numa_nodes);
  EXPECT_EQ(topo.numa_nodes_unknown, "no /sys/devices/system/node/online");
}

// Issue 48: a node list repeating its ranges summed past INT_MAX ("the machine has -2147483648
// NUMA nodes"); the nodes are a set of the kernel's 1024 at most.
TEST(Locality, ARepeatedNodeListCountsEachNodeOnce) {
  testing::FakeRoot root;
  std::string list = "0-1023";
  for (int i = 0; i < 2100000; ++i) list += ",0-1023";
  root.write("sys/devices/system/node/online", list + "\n");
  auto src = root.source();
  Topology topo;
  read_numa_nodes(*src, topo);
  EXPECT_EQ(topo.numa_nodes, 1024);
  root.write("sys/devices/system/node/online", "0-1,1,0-1\n");
  read_numa_nodes(*src, topo);
  EXPECT_EQ(topo.numa_nodes, 2);
}

}  // namespace
}  // namespace p2pcheck
