#include "p2pcheck/import/import.h"

#include <cstdio>
#include <gtest/gtest.h>

#include "import_fixture.h"
#include "p2pcheck/capture/capture.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/source/error.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::as_source;
using testing::bridge;
using testing::ConfigSpace;
using testing::hex_dump;
using testing::input_notes;
using testing::small_lspci;

TEST(Sniff, RecognisesEachFormatByContent) {
  EXPECT_EQ(sniff_text(small_lspci()), TextFormat::kLspciDump);
  EXPECT_EQ(sniff_text("00:00.0 Host bridge: Intel\n\tSubsystem: x\n"), TextFormat::kLspciText);  // lspci -v
  EXPECT_EQ(sniff_text("00:00.0 Host bridge: Intel\n00:01.0 VGA compatible controller: AMD\n"),
            TextFormat::kLspciNoHex);
  EXPECT_EQ(sniff_text("-[0000:00]-+-00.0\n           \\-01.0\n"), TextFormat::kLspciTree);
  EXPECT_EQ(sniff_text("P: /devices/pci0000:00/0000:00:00.0\nM: x\nE: DEVPATH=/devices/pci0000:00\n"),
            TextFormat::kUdevDb);
  EXPECT_EQ(
      sniff_text("<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">"),
      TextFormat::kHwlocXml);
  EXPECT_EQ(sniff_text("processor\t: 0\nvendor_id\t: AuthenticAMD\n"), TextFormat::kCpuinfo);
  EXPECT_EQ(sniff_text("hello world\n"), TextFormat::kUnknown);
  EXPECT_EQ(sniff_text(std::string("\x7f"
                                   "ELF\0\0",
                                   6)),
            TextFormat::kUnknown);
}

TEST(ImportLspci, HierarchyFromBridgeBusNumbersAndConfigSpaceThroughLibpci) {
  auto src = as_source(import_lspci(small_lspci(), nullptr, "", "lspci.txt", ImportOptions{"amd-zen"}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  ASSERT_EQ(topo.functions.size(), 7u);
  const Function& gpu = topo.at(*Bdf::parse("03:00.0"));
  EXPECT_EQ(gpu.sysfs_path, "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0");
  EXPECT_EQ(gpu.driver, "amdgpu");
  EXPECT_EQ(gpu.config_size, 4096u);
  EXPECT_EQ(topo.at(*Bdf::parse("02:01.0")).acs.presence, Presence::kPresent);
  EXPECT_EQ(topo.at(*Bdf::parse("00:01.1")).acs.control, 0x1d);
  EXPECT_EQ(topo.at(*Bdf::parse("00:01.1")).port_type, PortType::kRootPort);
  ASSERT_EQ(topo.host_bridges.size(), 1u);
  EXPECT_EQ(topo.host_bridges.begin()->second.bridge_device, Bdf::parse("00:00.0"));
  auto info = read_capture_info(*src);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->format, "lspci");
  EXPECT_EQ(src->read("/proc/cmdline").status, ReadStatus::kNotCarried);  // unknown, not absent
  EXPECT_EQ(src->read("/proc/cmdline").error, "not in this lspci output");
  auto report = run_check(*src, CheckOptions{{}, std::string("6.8")});
  ASSERT_EQ(report->pairs.size(), 1u);
  ASSERT_TRUE(report->pairs[0].walk.common);
  EXPECT_EQ(report->pairs[0].walk.common->bdf, Bdf::parse("01:00.0"));
  EXPECT_EQ(report->pairs[0].map_type, MapType::kBusAddr);
  EXPECT_EQ(report->pairs[0].verdict, Verdict::kSupported);
  // lspci does not say whether an IOMMU is on: unknown, never "no IOMMU active".
  bool iommu_unknown = false;
  for (const auto& f : report->findings)
    if (f.id == "iommu.state")
      iommu_unknown = f.message.find("is not in this lspci output") != std::string::npos && !f.not_carried.empty();
  EXPECT_TRUE(iommu_unknown);
}

// What a dump cannot carry is UNKNOWN (or INFO) "not in this lspci output", never FAIL or WARN:
// drivers without -k, KFD, modules, mounts, libraries; and 8 GPUs' one cause is one finding.
TEST(ImportLspci, WhatTheFormatCannotCarryIsNeverAFailure) {
  std::string dump = small_lspci();
  size_t driver = dump.find("\tKernel driver in use: amdgpu\n");
  ASSERT_NE(driver, std::string::npos);
  dump.erase(driver, std::string("\tKernel driver in use: amdgpu\n").size());
  dump.erase(dump.find("\tKernel driver in use: nvme\n"), std::string("\tKernel driver in use: nvme\n").size());
  auto src = as_source(import_lspci(dump, nullptr, "", "lspci.txt", ImportOptions{"amd-zen"}));
  EXPECT_EQ(src->not_carried("/sys/bus/pci/devices/0000:03:00.0/driver"), "not in this lspci output");
  EXPECT_EQ(src->not_carried("/sys/devices/pci0000:00/0000:00:01.1/0000:03:00.0/driver"), "not in this lspci output");
  EXPECT_EQ(src->not_carried("/sys/bus/pci/devices/0000:03:00.0/vendor"), std::nullopt);  // it is there
  EXPECT_EQ(src->read("/opt/rocm/lib").status, ReadStatus::kNotCarried);
  auto report = run_check(*src, CheckOptions{{}, std::string("6.8")});
  ASSERT_EQ(report->pairs.size(), 1u);
  EXPECT_EQ(report->pairs[0].verdict, Verdict::kSupported);
  int not_carried = 0;
  for (const auto& f : report->findings) {
    if (f.not_carried.empty()) continue;
    ++not_carried;
    EXPECT_TRUE(f.level == Level::kUnknown || f.level == Level::kInfo) << f.id << ": " << f.message;
    EXPECT_NE(f.message.find("not in this lspci output"), std::string::npos) << f.id << ": " << f.message;
  }
  EXPECT_GE(not_carried, 4);  // driver, amdgpu module, HIP runtime, hipFile, IOMMU, mounts...
  for (const auto& f : report->findings) EXPECT_NE(f.level, Level::kFail) << f.id << ": " << f.message;
  // Every pair allowed, the stack unknown: UNKNOWN, not FAIL.
  EXPECT_EQ(report->result, Result::kUnknown);
}

// A capture of an import keeps what the format cannot carry: the replay still says so.
TEST(ImportLspci, NotCarriedSurvivesACapture) {
  auto src = as_source(import_lspci(small_lspci(), nullptr, "", "lspci.txt", ImportOptions{"amd-zen"}));
  CaptureSet set = collect_capture(*src, nullptr, false);
  ASSERT_TRUE(set.manifest.contains("not_carried"));
  EXPECT_EQ(set.manifest["not_carried"]["format"], "lspci");
  auto info = parse_capture_manifest(set.manifest.dump(), "manifest.json");
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->not_carried.covers("/proc/modules"));
  EXPECT_EQ(info->not_carried.phrase, "not in this lspci output");
}

TEST(NotCarried, PatternsMatchComponentsAndOneDoubleStar) {
  NotCarried nc{"plan", "not in a plan", {"/proc/modules", "/sys/devices/**/driver", "/sys/bus/pci/devices/*/driver"}};
  EXPECT_TRUE(nc.covers("/proc/modules"));
  EXPECT_TRUE(nc.covers("/proc/modules/x"));  // below it too
  EXPECT_FALSE(nc.covers("/proc/modules2"));
  EXPECT_TRUE(nc.covers("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/driver"));
  EXPECT_TRUE(nc.covers("/sys/bus/pci/devices/0000:01:00.0/driver"));
  EXPECT_FALSE(nc.covers("/sys/bus/pci/devices/0000:01:00.0/vendor"));
  EXPECT_FALSE(nc.covers("/sys/devices/pci0000:00/0000:00:01.0/vendor"));
  EXPECT_TRUE(valid_not_carried_pattern("/sys/devices/**/driver"));
  EXPECT_FALSE(valid_not_carried_pattern("/a/**/b/**/c"));
  EXPECT_FALSE(valid_not_carried_pattern("relative/path"));
  EXPECT_FALSE(valid_not_carried_pattern("/a/../b"));
}

TEST(ImportLspci, TreeDrawingGivesTheHierarchy) {
  const std::string tree =
      "-[0000:00]-+-00.0  AMD Root Complex\n"
      "           \\-01.1-[01-04]----00.0-[02-04]--+-00.0-[03]----00.0  AMD MI300X\n"
      "                                           \\-01.0-[04]----00.0  Samsung NVMe\n";
  auto src = as_source(import_lspci(small_lspci(), &tree, "", "lspci.txt", ImportOptions{}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  EXPECT_EQ(topo.at(*Bdf::parse("04:00.0")).parent, Bdf::parse("02:01.0"));
  EXPECT_EQ(topo.at(*Bdf::parse("02:00.0")).parent, Bdf::parse("01:00.0"));
  EXPECT_FALSE(topo.at(*Bdf::parse("00:01.1")).parent);
  auto info = read_capture_info(*src);
  EXPECT_NE(nlohmann::json(info->notes).dump().find("hierarchy from lspci -t"), std::string::npos);
  EXPECT_NE(nlohmann::json(info->notes).dump().find("CPU unknown"), std::string::npos);
}

TEST(ImportLspci, BrokenDumpsNameTheLine) {
  // Nothing usable left: the whole dump is refused, naming the file.
  std::string dump = small_lspci();
  try {
    import_lspci(dump.substr(0, dump.find("30:")) + "30: 00 zz 00\n", nullptr, "", "cut.txt", ImportOptions{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cut.txt"), std::string::npos) << e.what();
  }
  // A dump cut in the middle of a device: 48 bytes are no size lspci prints.
  std::string cut = hex_dump("00:00.0 Host bridge", ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(48));
  EXPECT_THROW(import_lspci(cut, nullptr, "", "cut.txt", ImportOptions{}), Error);
}

// One odd device costs that device, with a note naming the line; a device whose bridge was left
// out goes too (its path would miss that bridge's ACS); the rest of the machine is judged.
TEST(ImportLspci, DevicesWithoutHexOrWithBadLinesAreLeftOutNotTheMachine) {
  std::string dump = small_lspci();
  dump += "05:00.0 Ethernet controller: no hex dump for it\n\n";
  auto src = as_source(import_lspci(dump, nullptr, "", "l.txt", ImportOptions{}));
  PciDecoder decoder;
  EXPECT_EQ(read_topology(*src, decoder).functions.size(), 7u);
  EXPECT_NE(input_notes(*src).find("l.txt: line"), std::string::npos) << input_notes(*src);
  EXPECT_NE(input_notes(*src).find("0000:05:00.0 has no config space dump"), std::string::npos);
  // The switch port above the NVMe with a broken row: the port, and the NVMe below it, are left out.
  std::string port = "02:01.0 PCI bridge: Broadcom PEX890xx";
  std::size_t at = dump.find(port);
  std::size_t row = dump.find("\n10:", at);
  dump.replace(row + 1, 3, "10: zz");
  auto broken = as_source(import_lspci(dump, nullptr, "", "l.txt", ImportOptions{}));
  Topology topo = read_topology(*broken, decoder);
  EXPECT_EQ(topo.find(*Bdf::parse("02:01.0")), nullptr);
  EXPECT_EQ(topo.find(*Bdf::parse("04:00.0")), nullptr);
  EXPECT_NE(topo.find(*Bdf::parse("03:00.0")), nullptr);
  EXPECT_NE(input_notes(*broken).find("malformed hex line"), std::string::npos) << input_notes(*broken);
  EXPECT_NE(input_notes(*broken).find("0000:04:00.0: its upstream bridge is not in the dump"), std::string::npos);
}

TEST(ImportUdev, PathsGiveTheHierarchyAndNoConfigMeansAcsUnknown) {
  const std::string db =
      "P: /devices/pci0000:40/0000:40:01.1\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=1022:14AB\nE: "
      "PCI_SLOT_NAME=0000:40:01.1\nE: DRIVER=pcieport\n\n"
      "P: /devices/pci0000:40/0000:40:01.1/0000:41:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=120000\nE: PCI_ID=1002:74A1\n"
      "E: PCI_SUBSYS_ID=1002:74A1\nE: PCI_SLOT_NAME=0000:41:00.0\nE: DRIVER=amdgpu\n\n"
      "P: /devices/pci0000:80/0000:80:01.1/0000:81:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=10802\nE: PCI_ID=144D:A826\nE: "
      "PCI_SLOT_NAME=0000:81:00.0\nE: DRIVER=nvme\n\n"
      "P: /devices/pci0000:80/0000:80:01.1\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=1022:14AB\nE: "
      "PCI_SLOT_NAME=0000:80:01.1\n\n"
      "P: /devices/pci0000:80/0000:80:01.1/0000:81:00.0/nvme/nvme3\nE: SUBSYSTEM=nvme\n\n"
      "P: /devices/pci0000:80/0000:80:01.1/0000:81:00.0/nvme/nvme3/nvme3n1\nE: SUBSYSTEM=block\nE: DEVTYPE=disk\n"
      "E: ID_MODEL=SAMSUNG MZWLR7T6HALA-00007\nE: ID_SERIAL_SHORT=S4EWNX0R123456\n\n"
      "P: /devices/system/cpu/cpu0\nE: SUBSYSTEM=cpu\nE: "
      "MODALIAS=cpu:type:x86,ven0002fam0019mod0011:feature:,0000,009F\n\n";
  auto src = as_source(import_udev(db, "udev.txt", ImportOptions{}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  ASSERT_EQ(topo.functions.size(), 4u);
  const Function& gpu = topo.at(*Bdf::parse("41:00.0"));
  EXPECT_EQ(gpu.parent, Bdf::parse("40:01.1"));
  EXPECT_EQ(gpu.driver, "amdgpu");
  EXPECT_EQ(gpu.acs.presence, Presence::kUnknown);  // no config file: unknown, never absent
  EXPECT_EQ(topo.at(*Bdf::parse("40:01.1")).acs.presence, Presence::kUnknown);
  EXPECT_EQ(gpu.port_type, PortType::kUnknown);
  auto report = run_check(*src, CheckOptions{{}, std::string("6.8")});
  EXPECT_EQ(report->machine.cpu.vendor_id, "AuthenticAMD");
  EXPECT_EQ(report->machine.cpu.family, 0x19);
  EXPECT_TRUE(report->machine.cpu.hypervisor);
  ASSERT_EQ(report->inv.nvmes.size(), 1u);
  EXPECT_EQ(report->inv.nvmes[0].name, "nvme3");
  EXPECT_EQ(report->inv.nvmes[0].model, "SAMSUNG MZWLR7T6HALA-00007");
  // Two root complexes: the Zen rule decides without ACS.
  ASSERT_EQ(report->pairs.size(), 1u);
  EXPECT_EQ(report->pairs[0].verdict, Verdict::kSupported);
  // --cpu is a supplied fact the check applies where the input has no CPU; this one has its own.
  EXPECT_NO_THROW(import_udev(db, "udev.txt", ImportOptions{"intel"}));
}

TEST(ImportUdev, NothingUsableLeftIsAnError) {
  try {
    import_udev("P: /devices/pci0000:00/0000:00:00.0\ngarbage here\n", "u.txt", ImportOptions{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "u.txt");
    EXPECT_NE(std::string(e.what()).find("u.txt: line 2"), std::string::npos) << e.what();  // the first oddity
  }
}

// udev's own odd lines (a bare MODALIAS= line) and a record with a broken ID cost that line and
// that device; the DMI modalias names the machine; namespace sizes udev does not carry are unknown.
TEST(ImportUdev, OddLinesAndRecordsAreLeftOutAndDmiIsRead) {
  const std::string db =
      "P: /devices/pci0000:40/0000:40:01.1\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=1022:14AB\n\n"
      "P: /devices/pci0000:40/0000:40:01.1/0000:41:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=120000\nE: PCI_ID=1002:74A1\n"
      "E: DRIVER=amdgpu\n\n"
      "P: /devices/virtual/input/input7/hid\nE: SUBSYSTEM=hid\nMODALIAS=hid:b0003g0001v0000046Dp0000C52B\n\n"
      "P: /devices/pci0000:40/0000:40:03.1\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=zz:14AB\n\n"
      "P: /devices/pci0000:40/0000:40:01.2/0000:42:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=10802\nE: PCI_ID=144D:A826\n\n"
      "P: /devices/pci0000:40/0000:40:01.2\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=1022:14AB\n\n"
      "P: /devices/pci0000:40/0000:40:01.2/0000:42:00.0/nvme/nvme0\nE: SUBSYSTEM=nvme\n\n"
      "P: /devices/pci0000:40/0000:40:01.2/0000:42:00.0/nvme/nvme0/nvme0n1\nE: SUBSYSTEM=block\nE: DEVTYPE=disk\n\n"
      "P: /devices/virtual/dmi/id\nE: SUBSYSTEM=dmi\nE: "
      "MODALIAS=dmi:bvnAmericanMegatrendsInc.:bvr2.3:bd01/01/2023:svnNVIDIA:pnDGXA100:pvr1.0:rvnNVIDIA:rnDGXA100:\n\n";
  auto src = as_source(import_udev(db, "udev.txt", ImportOptions{}));
  const std::string notes = input_notes(*src);
  EXPECT_EQ(notes.find("MODALIAS=hid:"), std::string::npos) << notes;  // a HID record: not read, not said
  EXPECT_NE(notes.find("PCI_ID=zz is not the hex value"), std::string::npos) << notes;
  auto report = run_check(*src, {});
  EXPECT_EQ(report->topo.functions.size(), 4u);
  EXPECT_EQ(report->machine.identity.dmi_vendor, "NVIDIA");
  EXPECT_EQ(report->machine.identity.dmi_product, "DGXA100");
  EXPECT_FALSE(report->machine.identity.dmi_serial);
  ASSERT_EQ(report->inv.nvmes.size(), 1u);
  ASSERT_EQ(report->inv.nvmes[0].namespaces.size(), 1u);
  EXPECT_FALSE(report->inv.nvmes[0].namespaces[0].size_bytes);  // not in udev: unknown, not 0 B
  EXPECT_EQ(report->pairs.size(), 1u);
}

const char* kHwloc = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" gp_index="1">
    <info name="CPUVendor" value="GenuineIntel"/>
    <info name="CPUFamilyNumber" value="6"/>
    <info name="CPUModelNumber" value="79"/>
    <info name="CPUModel" value="Intel(R) Xeon(R) CPU E5-2680 v4"/>
    <info name="OSName" value="Linux"/>
    <info name="OSRelease" value="5.15.0-91-generic"/>
    <info name="HostName" value="node7"/>
    <object type="Bridge" gp_index="21" bridge_type="0-1" depth="0" bridge_pci="0000:[00-03]">
      <object type="PCIDev" gp_index="9" pci_busid="0000:00:00.0" pci_type="0600 [8086:6f00] [15d9:0832] 01"/>
      <object type="Bridge" gp_index="19" bridge_type="1-1" depth="1" bridge_pci="0000:[02-02]" pci_busid="0000:00:02.0" pci_type="0604 [8086:6f04] [15d9:0832] 01">
        <object type="PCIDev" gp_index="15" pci_busid="0000:02:00.0" pci_type="0380 [1002:738c] [1002:0c34] 01"/>
      </object>
      <object type="Bridge" gp_index="18" bridge_type="1-1" depth="1" bridge_pci="0000:[03-03]" pci_busid="0000:00:03.0" pci_type="0604 [8086:6f08] [15d9:0832] 01">
        <object type="PCIDev" gp_index="20" pci_busid="0000:03:00.0" pci_type="0108 [8086:0a54] [8086:4812] 00">
          <object type="OSDev" gp_index="22" name="nvme0n1" subtype="Disk" osdev_type="0"/>
        </object>
      </object>
    </object>
  </object>
</topology>
)";

TEST(ImportHwloc, NestingGivesTheHierarchyAndInfoTheCpuAndKernel) {
  auto src = as_source(import_hwloc(kHwloc, "topo.xml", ImportOptions{}));
  auto report = run_check(*src, CheckOptions{});
  EXPECT_EQ(report->machine.kernel_release, "5.15.0-91-generic");
  EXPECT_EQ(report->machine.cpu.vendor_id, "GenuineIntel");
  EXPECT_EQ(report->topo.at(*Bdf::parse("03:00.0")).parent, Bdf::parse("00:03.0"));
  EXPECT_EQ(report->topo.at(*Bdf::parse("03:00.0")).class_code, 0x010802u);
  ASSERT_EQ(report->pairs.size(), 1u);
  // Through the root complex on Broadwell (8086:6f00 is not allowlisted): refused without ACS.
  EXPECT_EQ(report->pairs[0].verdict, Verdict::kNotSupported);
  EXPECT_EQ(read_capture_info(*src)->manifest["hostname"], "node7");
}

// A POWER9 machine's hwloc XML names no CPU vendor, only its Architecture: not x86, so the
// kernel's CPU rule (AMD Zen, inside #ifdef CONFIG_X86) cannot pass; the host name is its identity.
TEST(ImportHwloc, NonX86ArchitectureDecidesTheCpuRule) {
  std::string xml = kHwloc;
  for (const char* line : {"    <info name=\"CPUVendor\" value=\"GenuineIntel\"/>\n",
                           "    <info name=\"CPUFamilyNumber\" value=\"6\"/>\n"})
    xml.erase(xml.find(line), std::string(line).size());
  xml.insert(xml.find("    <info name=\"OSName\""), "    <info name=\"Architecture\" value=\"ppc64le\"/>\n");
  auto src = as_source(import_hwloc(xml, "power9.xml", ImportOptions{}));
  auto report = run_check(*src, CheckOptions{});
  EXPECT_EQ(report->machine.cpu.architecture, "powerpc");
  ASSERT_EQ(report->pairs.size(), 1u);
  EXPECT_EQ(report->pairs[0].host.cpu_supports, Tri::kNo);
  EXPECT_EQ(report->machine.identity.hostname, "node7");
  for (const auto& f : report->findings) {
    if (f.id == "cpu.p2pdma_rule") {
      EXPECT_NE(f.level, Level::kUnknown) << f.message;
    }
  }
}

TEST(ImportHwloc, BrokenOrHostileXml) {
  try {
    import_hwloc("<?xml version=\"1.0\"?>\n<topology>\n<object type=\"Machine\">\n</topology>\n", "bad.xml",
                 ImportOptions{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xml: line"), std::string::npos) << e.what();
  }
  // External entities are never fetched or expanded.
  const std::string xxe =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE topology [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>\n"
      "<topology><object type=\"PCIDev\" pci_busid=\"0000:00:00.0\" pci_type=\"0600 [8086:6f00] [0000:0000] 01\">"
      "<info name=\"OSRelease\" value=\"&e;\"/></object></topology>";
  try {
    auto tree = import_hwloc(xxe, "xxe.xml", ImportOptions{});
    const MemoryTree::Node* release = tree.find("/proc/sys/kernel/osrelease");
    EXPECT_TRUE(!release || release->data.find("root:") == std::string::npos);
  } catch (const Error&) {
    // Refusing the document is just as good.
  }
  EXPECT_THROW(import_hwloc("<?xml version=\"1.0\"?><topology/>", "empty.xml", ImportOptions{}), Error);
}

// An object lstopo would not write (a bad pci_type) costs it and what is below it; the rest stays.
TEST(ImportHwloc, AnOddObjectIsLeftOutWithWhatIsBelowIt) {
  std::string xml = kHwloc;
  const std::string bridge = "pci_busid=\"0000:00:03.0\" pci_type=\"0604 [8086:6f08] [15d9:0832] 01\"";
  ASSERT_NE(xml.find(bridge), std::string::npos);
  xml.replace(xml.find(bridge), bridge.size(), "pci_busid=\"0000:00:03.0\" pci_type=\"bridge\"");
  auto src = as_source(import_hwloc(xml, "odd.xml", ImportOptions{}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  EXPECT_NE(topo.find(*Bdf::parse("02:00.0")), nullptr);
  EXPECT_EQ(topo.find(*Bdf::parse("00:03.0")), nullptr);
  EXPECT_EQ(topo.find(*Bdf::parse("03:00.0")), nullptr);  // below it
  EXPECT_NE(input_notes(*src).find("odd.xml: line "), std::string::npos) << input_notes(*src);
  EXPECT_NE(input_notes(*src).find("pci_type='bridge'"), std::string::npos);
}

TEST(ImportSosreport, UdevHierarchyProcBusPciConfigAndTheCopiedFiles) {
  MemoryTree sos;
  sos.add_file("/sos_commands/devices/udevadm_info_--export-db",
               "P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60000\nE: PCI_ID=1022:14A4\nE: "
               "PCI_SLOT_NAME=0000:00:00.0\n\n"
               "P: /devices/pci0000:00/0000:00:01.1\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=1022:14AB\nE: "
               "PCI_SLOT_NAME=0000:00:01.1\n\n");
  sos.add_file("/proc/bus/pci/00/00.0", ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256));
  sos.add_file("/proc/bus/pci/00/01.1", bridge(0, 1, 1, 4, 0x1d));
  sos.add_file(
      "/proc/cpuinfo",
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n\n");
  sos.add_file("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 iommu=pt\n");
  sos.add_file("/etc/os-release", "ID=ubuntu\nVERSION_ID=\"22.04\"\n");
  sos.add_file("/sos_commands/kernel/uname_-a", "Linux node7 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux\n");
  sos.add_file(
      "/sos_commands/kernel/lsmod",
      "Module                  Size  Used by\nnvme                   57344  3\namdgpu              12345678  0\n");
  sos.add_file("/hostname", "node7\n");
  auto src = as_source(import_sosreport(sos, "sosreport.tar.xz", ImportOptions{}));
  auto report = run_check(*src, CheckOptions{});
  EXPECT_EQ(report->machine.kernel_release, "6.8.0-45-generic");
  EXPECT_EQ(report->machine.cmdline, "BOOT_IMAGE=/vmlinuz root=/dev/sda1 iommu=pt");
  EXPECT_TRUE(report->machine.modules.count("amdgpu"));
  EXPECT_EQ(report->topo.at(*Bdf::parse("00:01.1")).acs.control, 0x1d);
  EXPECT_EQ(read_capture_info(*src)->format, "sosreport");
  MemoryTree no_db;
  no_db.add_file("/sos_commands/pci/lspci_-nnvv", "00:00.0 Host bridge\n");
  EXPECT_THROW(import_sosreport(no_db, "sos", ImportOptions{}), Error);
}

// A proc/bus/pci copy of a length no kernel gives (cut by a full disk) costs that function's config
// space, with a note naming the file; the machine and the other copies stay.
TEST(ImportSosreport, AConfigCopyOfTheWrongLengthIsLeftOutWithANote) {
  MemoryTree sos;
  sos.add_file("/sos_commands/devices/udevadm_info_--export-db",
               "P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60000\nE: PCI_ID=1022:14A4\nE: "
               "PCI_SLOT_NAME=0000:00:00.0\n\n"
               "P: /devices/pci0000:00/0000:00:01.1\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=1022:14AB\nE: "
               "PCI_SLOT_NAME=0000:00:01.1\n\n");
  sos.add_file("/proc/bus/pci/00/00.0", ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256).substr(0, 100));
  sos.add_file("/proc/bus/pci/00/01.1", bridge(0, 1, 1, 4, 0x1d));
  auto src = as_source(import_sosreport(sos, "sos.tar.xz", ImportOptions{}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  ASSERT_NE(topo.find(*Bdf::parse("00:00.0")), nullptr);
  EXPECT_EQ(topo.at(*Bdf::parse("00:00.0")).config_size, 0u);
  EXPECT_EQ(topo.at(*Bdf::parse("00:01.1")).acs.control, 0x1d);
  EXPECT_NE(input_notes(*src).find("sos.tar.xz:proc/bus/pci/00/00.0: 100 bytes; expected 4096, 256 or 64"),
            std::string::npos)
      << input_notes(*src);
}

// Lines and paths far longer than any tool writes: std::regex recursed once per character on
// them and overflowed the stack (issue 15). The plain parsers take them in their stride.
TEST(ImportSosreport, LsmodRowsAndProcessDirectories) {
  MemoryTree sos;
  sos.add_file("/sos_commands/devices/udevadm_info_--export-db",
               "P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60000\nE: PCI_ID=1022:14A4\n\n");
  sos.add_file("/sos_commands/kernel/lsmod", "Module Size Used by\n" + std::string(200000, 'm') +
                                                 " 1 0\nnvme 57344 3 nvme_core\r\nbad row here too long\n");
  sos.add_file("/proc/" + std::string(100000, '1') + "/status", "x");
  sos.add_file("/proc/1x/status", "y");
  auto src = as_source(import_sosreport(sos, "sos", ImportOptions{}));
  std::string modules = src->read("/proc/modules").bytes;
  EXPECT_NE(modules.find("nvme 57344 3 nvme_core, Live"), std::string::npos) << modules.substr(0, 100);
  EXPECT_EQ(modules.find("bad"), std::string::npos);
  EXPECT_FALSE(src->exists("/proc/" + std::string(100000, '1')));
  EXPECT_TRUE(src->exists("/proc/1x/status"));
}

TEST(CpuOption, KeywordsAndFiles) {
  EXPECT_NE(cpuinfo_for_option("amd-pre-zen").find("cpu family\t: 21"), std::string::npos);
  EXPECT_NE(cpuinfo_for_option("hygon").find("HygonGenuine"), std::string::npos);
  EXPECT_THROW(cpuinfo_for_option("m68k"), UsageError);
}

}  // namespace
}  // namespace p2pcheck
