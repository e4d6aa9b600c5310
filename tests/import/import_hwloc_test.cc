// hwloc XML's facts beside the PCI tree: NUMA locality from nodesets, NVMe controller names and
// native multipath from OS device names, and no "root" in what a file cannot hold.
#include <gtest/gtest.h>

#include "hwloc_facts.h"
#include "import_fixture.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/model/topology.h"

namespace p2pcheck {
namespace {

using testing::as_source;

TEST(HwlocFacts, NodesetsAreWordsOfThirtyTwoBitsMostSignificantFirst) {
  EXPECT_EQ(parse_hwloc_nodeset("0x00000003"), (std::set<int>{0, 1}));
  EXPECT_EQ(parse_hwloc_nodeset("0x0"), std::set<int>{});
  // An empty word is a word of zeros, as lstopo writes them.
  EXPECT_EQ(parse_hwloc_nodeset("0x00000002,,0x0"), std::set<int>{65});
  EXPECT_EQ(parse_hwloc_nodeset("0x80000000,0x00000001"), (std::set<int>{0, 63}));
  // Infinite sets, junk, words past the kernel's 1024 nodes.
  EXPECT_FALSE(parse_hwloc_nodeset("0xf...f,0x00000001"));
  EXPECT_FALSE(parse_hwloc_nodeset("3"));
  EXPECT_FALSE(parse_hwloc_nodeset("0x123456789"));
  EXPECT_FALSE(parse_hwloc_nodeset("0x1" + std::string(32, ',')));
  EXPECT_TRUE(parse_hwloc_nodeset("0x1" + std::string(31, ',')));
  EXPECT_EQ(node_list_text({0, 1, 3, 5, 6, 7}), "0-1,3,5-7");
}

TEST(HwlocFacts, NvmeNamesGiveTheController) {
  auto ns = hwloc_nvme_device("nvme2n1");
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->controller, "nvme2");
  EXPECT_EQ(ns->block, "nvme2n1");
  EXPECT_FALSE(ns->exact);
  EXPECT_FALSE(ns->path_node);
  // nvme<subsystem>c<controller>n<namespace>: the controller is the number after c.
  auto path = hwloc_nvme_device("nvme0c3n1");
  ASSERT_TRUE(path);
  EXPECT_EQ(path->controller, "nvme3");
  EXPECT_TRUE(path->exact);
  EXPECT_TRUE(path->path_node);
  auto ctrl = hwloc_nvme_device("nvme7");
  ASSERT_TRUE(ctrl);
  EXPECT_EQ(ctrl->controller, "nvme7");
  EXPECT_EQ(ctrl->block, "");
  for (const char* other : {"nvme0n1p1", "sda", "nvme", "nvme0c", "nvme0c1", "nvmeXn1", "nvme1234567890n1", "nvme0n1 "})
    EXPECT_FALSE(hwloc_nvme_device(other)) << other;
}

// Two sockets, a NUMA node each (hwloc 2.x: memory children of the packages); a host bridge on each
// node and one at the top object (local to every CPU). NVMe nvme0 on node 0; nvme1 on node 1,
// seen through native multipath (nvme1c1n1); a third NVMe without a block device.
const char* kTwoNodes = R"(<?xml version="1.0" encoding="UTF-8"?>
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" nodeset="0x00000003" complete_nodeset="0x00000003">
    <info name="CPUVendor" value="AuthenticAMD"/>
    <info name="CPUFamilyNumber" value="25"/>
    <object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001">
      <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001"/>
      <object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[00-02]">
        <object type="PCIDev" pci_busid="0000:00:00.0" pci_type="0600 [1022:14a4] [0000:0000] 00"/>
        <object type="Bridge" bridge_type="1-1" depth="1" bridge_pci="0000:[01-01]" pci_busid="0000:00:01.1" pci_type="0604 [1022:14ab] [0000:0000] 00">
          <object type="PCIDev" pci_busid="0000:01:00.0" pci_type="1200 [1002:74a1] [1002:74a1] 00"/>
        </object>
        <object type="Bridge" bridge_type="1-1" depth="1" bridge_pci="0000:[02-02]" pci_busid="0000:00:01.2" pci_type="0604 [1022:14ab] [0000:0000] 00">
          <object type="PCIDev" pci_busid="0000:02:00.0" pci_type="0108 [144d:a826] [144d:a812] 00">
            <object type="OSDev" name="nvme0n1" subtype="Disk" osdev_type="0">
              <info name="Model" value="SAMSUNG MZQL23T8HCLS"/>
            </object>
          </object>
        </object>
      </object>
    </object>
    <object type="Package" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002">
      <object type="NUMANode" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002"/>
      <object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[80-81]">
        <object type="PCIDev" pci_busid="0000:80:00.0" pci_type="0600 [1022:14a4] [0000:0000] 00"/>
        <object type="Bridge" bridge_type="1-1" depth="1" bridge_pci="0000:[81-81]" pci_busid="0000:80:01.1" pci_type="0604 [1022:14ab] [0000:0000] 00">
          <object type="PCIDev" pci_busid="0000:81:00.0" pci_type="0108 [144d:a826] [144d:a812] 00">
            <object type="OSDev" name="nvme1c1n1" subtype="Disk" osdev_type="0"/>
          </object>
        </object>
      </object>
    </object>
    <object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[c0-c1]">
      <object type="PCIDev" pci_busid="0000:c0:00.0" pci_type="0600 [1022:14a4] [0000:0000] 00"/>
      <object type="Bridge" bridge_type="1-1" depth="1" bridge_pci="0000:[c1-c1]" pci_busid="0000:c0:01.1" pci_type="0604 [1022:14ab] [0000:0000] 00">
        <object type="PCIDev" pci_busid="0000:c1:00.0" pci_type="0108 [144d:a826] [144d:a812] 00"/>
      </object>
    </object>
  </object>
</topology>
)";

TEST(ImportHwloc, NodesetsGiveEachFunctionItsNumaNode) {
  auto src = as_source(import_hwloc(kTwoNodes, "two.xml", ImportOptions{}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  EXPECT_EQ(topo.numa_nodes, 2);
  EXPECT_EQ(topo.at(*Bdf::parse("01:00.0")).numa_node, 0);
  EXPECT_EQ(topo.at(*Bdf::parse("02:00.0")).numa_node, 0);
  EXPECT_EQ(topo.at(*Bdf::parse("81:00.0")).numa_node, 1);
  // Below the whole machine: local to every CPU, the kernel's NUMA_NO_NODE.
  EXPECT_EQ(topo.at(*Bdf::parse("c1:00.0")).numa_node, -1);
  for (const auto& [bdf, fn] : topo.functions) EXPECT_EQ(fn.numa_unknown, "") << bdf.str();
}

TEST(ImportHwloc, OsDevicesNameTheControllersAndShowMultipath) {
  auto src = as_source(import_hwloc(kTwoNodes, "two.xml", ImportOptions{}));
  auto report = run_check(*src, CheckOptions{});
  std::map<std::string, std::string> names;
  for (const auto& c : report->inv.nvmes) names[c.bdf.str()] = c.name;
  EXPECT_EQ(names["0000:02:00.0"], "nvme0");
  EXPECT_EQ(names["0000:81:00.0"], "nvme1");
  EXPECT_EQ(names["0000:c1:00.0"], "");  // no block device below it: unknown
  for (const auto& c : report->inv.nvmes)
    if (c.name == "nvme0") {
      EXPECT_EQ(c.model, "SAMSUNG MZQL23T8HCLS");
      ASSERT_EQ(c.namespaces.size(), 1u);
      EXPECT_EQ(c.namespaces[0].name, "nvme0n1");
    }
  const Finding* multipath = nullptr;
  for (const auto& f : report->findings)
    if (f.id == "storage.nvme_multipath") multipath = &f;
  ASSERT_NE(multipath, nullptr);
  EXPECT_EQ(multipath->level, Level::kFail);
  EXPECT_NE(multipath->message.find("nvme1n1"), std::string::npos) << multipath->message;
  EXPECT_NE(multipath->message.find("nvme1c1n1"), std::string::npos) << multipath->message;
}

// Without path nodes the XML cannot tell whether multipath is on: unknown, as before.
TEST(ImportHwloc, NoPathNodeLeavesMultipathUnknown) {
  std::string xml = kTwoNodes;
  xml.replace(xml.find("nvme1c1n1"), 9, "nvme1n1");
  auto report = run_check(*as_source(import_hwloc(xml, "two.xml", ImportOptions{})), CheckOptions{});
  for (const auto& f : report->findings)
    if (f.id == "storage.nvme_multipath") {
      EXPECT_EQ(f.level, Level::kUnknown);
      EXPECT_EQ(f.not_carried, "not in this hwloc XML");
    }
}

// A name two functions claim (no kernel writes that) names neither; the rest stays.
TEST(ImportHwloc, AControllerNameTwoFunctionsClaimIsLeftUnknown) {
  std::string xml = kTwoNodes;
  xml.replace(xml.find("nvme1c1n1"), 9, "nvme2c0n1");
  auto src = as_source(import_hwloc(xml, "two.xml", ImportOptions{}));
  auto report = run_check(*src, CheckOptions{});
  for (const auto& c : report->inv.nvmes) EXPECT_EQ(c.name, "") << c.bdf.str();
  EXPECT_NE(testing::input_notes(*src).find("do not name one controller"), std::string::npos);
  // Both functions in one note of that kind, each named (issue 50).
  auto info = read_capture_info(*src);
  ASSERT_EQ(info->input_note_groups.size(), 1u);
  EXPECT_EQ(info->input_note_groups[0].kind,
            "NVMe functions have devices below them that name no one controller of their own");
  EXPECT_EQ(info->input_note_groups[0].count, 2u);
}

// Without 00.0 on a root bus the kernel's host bridge device is unknown because the XML has no
// config space, not because anyone lacked root.
TEST(ImportHwloc, AnUnknownHostBridgeDeviceIsNotInTheXmlNotANeedForRoot) {
  std::string xml = kTwoNodes;
  const std::string first =
      R"(<object type="PCIDev" pci_busid="0000:00:00.0" pci_type="0600 [1022:14a4] [0000:0000] 00"/>)";
  xml.erase(xml.find(first), first.size());
  xml.replace(xml.find("AuthenticAMD"), 12, "GenuineIntel");
  xml.replace(xml.find("\"25\""), 4, "\"6\"");
  auto src = as_source(import_hwloc(xml, "two.xml", ImportOptions{}));
  auto report = run_check(*src, CheckOptions{});
  ASSERT_EQ(report->topo.host_bridges.at("0000:00").bridge_device_not_carried, "not in this hwloc XML");
  bool seen = false;
  for (std::size_t i = 0; i < report->pairs.size(); ++i)
    for (const std::string& text : unknown_texts(report->pairs[i])) {
      if (text.find("host bridge device") == std::string::npos) continue;
      seen = true;
      EXPECT_EQ(text.find("root"), std::string::npos) << text;
      EXPECT_NE(text.find("not in this hwloc XML"), std::string::npos) << text;
    }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace p2pcheck
