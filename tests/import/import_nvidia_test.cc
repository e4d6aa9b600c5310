// nvidia-bug-report.log imports, the older layout: NVIDIA and PLX functions dumped (lspci -d ... -v
// -xxx), every function listed (lspci -nn) and drawn (lspci -t).
#include <gtest/gtest.h>

#include "import_fixture.h"
#include "lspci_listing.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

using testing::as_source;
using testing::ConfigSpace;
using testing::hex_dump;

const std::string kRule = "____________________________________________\n\n";

std::string section(const std::string& header, const std::string& body) {
  return kRule + header + "\n\n" + body + "\n";
}

std::string prologue() {
  return section("Start of NVIDIA bug report log file.  Please include this file, along",
                 "uname: Linux gpu-host 5.15.0-91-generic #101 SMP x86_64 GNU/Linux\n") +
         section("/usr/sbin/dmidecode",
                 "System Information\n\tManufacturer: Dell Inc.\n\tProduct Name: PowerEdge "
                 "R750\n") +
         section("*** /proc/driver/nvidia/version",
                 "*** ls: -r--r--r-- 1 root root 0 /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 "
                 "Kernel Module  470.82.01\n");
}

// Root complex 00:00.0, root port 00:01.0 -> switch 01:00.0 -> ports 02:00.0/02:01.0 -> GPU 03:00.0,
// NVMe 04:00.0; only the GPU is dumped (256 bytes, as -xxx prints).
const std::string kListing =
    "00:00.0 Host bridge [0600]: AMD Root Complex [1022:14a4]\n"
    "00:01.0 PCI bridge [0604]: AMD GPP Bridge [1022:14ab]\n"
    "01:00.0 PCI bridge [0604]: Broadcom / LSI PEX890xx [1000:c030] (rev b0)\n"
    "02:00.0 PCI bridge [0604]: Broadcom / LSI PEX890xx [1000:c030] (rev b0)\n"
    "02:01.0 PCI bridge [0604]: Broadcom / LSI PEX890xx [1000:c030] (rev b0)\n"
    "03:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 PCIe 80GB] [10de:20b5] (rev a1)\n"
    "04:00.0 Non-Volatile memory controller [0108]: Samsung Electronics Co Ltd PM174X [144d:a826]\n";
const std::string kTree =
    "-[0000:00]-+-00.0\n"
    "           \\-01.0-[01-04]----00.0-[02-04]--+-00.0-[03]----00.0\n"
    "                                           \\-01.0-[04]----00.0\n";

std::string gpu_dump() {
  return hex_dump(
      "03:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 80GB] (rev a1)\n"
      "\tMemory at e0000000 (32-bit, non-prefetchable) [size=16M]\n\tKernel driver in use: nvidia",
      ConfigSpace(0x10de, 0x20b5, 0x030200, false).pcie(0).bytes(256));
}

std::string older_report(const std::string& listing, const std::string& tree) {
  std::string out = prologue() + section("/usr/bin/lspci -d \"10de:*\" -v -xxx", gpu_dump()) +
                    section("/usr/bin/lspci -d \"10b5:*\" -v -xxx", "");
  if (!tree.empty()) out += section("/usr/bin/lspci -t", tree);
  if (!listing.empty()) out += section("/usr/bin/lspci -nn", listing);
  return out;
}

std::string notes_of(Source& src) {
  auto info = read_capture_info(src);
  std::string out;
  for (const auto& n : info->notes) out += n + "\n";
  for (const auto& n : info->input_notes) out += "left out: " + n + "\n";
  return out;
}

TEST(ImportNvidiaOlder, EveryListedFunctionPlacedByTheTreeConfigSpaceOnlyWhereDumped) {
  auto src = as_source(import_nvidia_bug_report(older_report(kListing, kTree), "nvidia-bug-report.log", {}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  ASSERT_EQ(topo.functions.size(), 7u);
  const Function& gpu = topo.at(*Bdf::parse("03:00.0"));
  EXPECT_EQ(gpu.sysfs_path, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
  EXPECT_EQ(gpu.config_size, 256u);
  EXPECT_EQ(gpu.driver, "nvidia");
  const Function& nvme = topo.at(*Bdf::parse("04:00.0"));
  EXPECT_EQ(nvme.class_code, 0x010802u);
  EXPECT_EQ(nvme.config_not_carried, "not in this nvidia-bug-report");  // unknown, not absent
  EXPECT_EQ(topo.at(*Bdf::parse("02:01.0")).acs.presence, Presence::kUnknown);
  std::string notes = notes_of(*src);
  EXPECT_NE(notes.find("no NVMe config space in this report (its lspci sections dump only NVIDIA and PLX devices)"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("`sudo lspci -xxxx` and `lspci -tv`"), std::string::npos) << notes;
  EXPECT_NE(notes.find("hierarchy from its lspci -t section"), std::string::npos) << notes;
  // The pair crosses switch ports without config space: their ACS decides, so it stays unknown.
  auto report = run_check(*src, CheckOptions{{}, std::string("5.15")});
  ASSERT_EQ(report->pairs.size(), 1u);
  EXPECT_EQ(report->pairs[0].verdict, Verdict::kUnknown);
}

// lspci -v prints a BAR's line without its number ("Memory at ... [size=128G]"): each is placed by
// the address the same section's dump holds in a BAR, never by its order.
TEST(ImportNvidiaOlder, BarSizesFromTheVerboseLinesPlacedByTheDumpedAddresses) {
  std::string c = ConfigSpace(0x10de, 0x20b5, 0x030200, false).pcie(0).bytes(256);
  auto put32 = [&](unsigned at, std::uint32_t v) {
    for (unsigned i = 0; i < 4; ++i) c[at + i] = static_cast<char>(v >> (8 * i));
  };
  put32(0x10, 0x9d000000);  // BAR 0: 32-bit memory
  put32(0x14, 0x0000000c);  // BAR 1: 64-bit prefetchable at 0x3820_0000_0000 (BAR 2 its upper half)
  put32(0x18, 0x3820);
  put32(0x1c, 0x0000000c);  // BAR 3: 64-bit prefetchable at 0x3840_0000_0000
  put32(0x20, 0x3840);
  std::string dump = hex_dump(
      "03:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 80GB] (rev a1)\n"
      "\tSubsystem: NVIDIA Corporation Device 1533\n"
      "\tMemory at 384000000000 (64-bit, prefetchable) [size=32M]\n"
      "\tMemory at 9d000000 (32-bit, non-prefetchable) [size=16M]\n"
      "\tMemory at 382000000000 (64-bit, prefetchable) [size=128G]\n"
      "\tMemory at 77000000 (32-bit, non-prefetchable) [size=1M]\n"  // no BAR holds it: left unplaced
      "\tCapabilities: [78] Express Endpoint, MSI 00\n"
      "\tCapabilities: [100] Advanced Error Reporting\n"  // -v prints no "v1": still the BARs count
      "\tKernel driver in use: nvidia",
      c);
  std::string report = prologue() + section("/usr/bin/lspci -d \"10de:*\" -v -xxx", dump) +
                       section("/usr/bin/lspci -t", kTree) + section("/usr/bin/lspci -nn", kListing);
  auto src = as_source(import_nvidia_bug_report(report, "nvidia-bug-report.log", {}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  Function gpu = topo.at(*Bdf::parse("03:00.0"));
  read_function_bars(*src, gpu);
  ASSERT_EQ(gpu.bars.size(), 3u);
  EXPECT_EQ(gpu.bars[0].index, 0);
  EXPECT_EQ(gpu.bars[0].size, 16ull << 20);
  EXPECT_EQ(gpu.bars[1].index, 1);
  EXPECT_EQ(gpu.bars[1].size, 128ull << 30);
  EXPECT_TRUE(gpu.bars[1].prefetchable());
  EXPECT_EQ(gpu.bars[2].index, 3);
  EXPECT_EQ(gpu.bars[2].size, 32ull << 20);
  // A function the report only lists has no resource file: its BAR sizes stay unknown.
  EXPECT_FALSE(src->exists(topo.at(*Bdf::parse("04:00.0")).sysfs_path + "/resource"));
  EXPECT_NE(notes_of(*src).find("BAR sizes of the functions it does not dump"), std::string::npos) << notes_of(*src);
}

TEST(ImportNvidiaOlder, WithoutATreeOnlyWhatBusNumbersPlaceIsKeptAndTheNoteSaysWhy) {
  auto src = as_source(import_nvidia_bug_report(older_report(kListing, ""), "nvidia-bug-report.log", {}));
  PciDecoder decoder;
  Topology topo = read_topology(*src, decoder);
  EXPECT_EQ(topo.functions.size(), 2u);  // 00:00.0 and 00:01.0, on the root bus
  std::string notes = notes_of(*src);
  EXPECT_NE(notes.find("no usable lspci -t section"), std::string::npos) << notes;
  auto info = read_capture_info(*src);
  ASSERT_EQ(info->input_note_groups.size(), 1u);
  EXPECT_EQ(info->input_note_groups[0].count, 5u);
  EXPECT_EQ(info->input_note_groups[0].subjects[0], "0000:01:00.0");
}

TEST(ImportNvidiaOlder, WithoutAListingOnlyTheDumpedFunctionsAreKnown) {
  auto src = as_source(import_nvidia_bug_report(older_report("", kTree), "nvidia-bug-report.log", {}));
  std::string notes = notes_of(*src);
  EXPECT_NE(notes.find("no lspci -nn section"), std::string::npos) << notes;
  // The GPU's bridges are not in the report: it goes too, rather than a path without them.
  EXPECT_NE(notes.find("left out: nvidia-bug-report.log: 0000:03:00.0: a bridge above it"), std::string::npos) << notes;
}

TEST(ImportNvidiaOlder, AGarbageAddressAndADrawingThatDisagreesCostThoseLinesOnly) {
  std::string listing = kListing + "zz:00.0 Non-Volatile memory controller [0108]: X [144d:a826]\n" +
                        "05:00.0 Non-Volatile memory controller [0108]: Samsung [144d:a826]\n";
  auto src = as_source(import_nvidia_bug_report(older_report(listing, kTree), "nvidia-bug-report.log", {}));
  std::string notes = notes_of(*src);
  EXPECT_NE(notes.find("zz:00.0"), std::string::npos) << notes;
  EXPECT_NE(notes.find("0000:05:00.0 is not in its lspci -t drawing"), std::string::npos) << notes;
  PciDecoder decoder;
  EXPECT_EQ(read_topology(*src, decoder).functions.size(), 7u);
}

TEST(ImportNvidiaOlder, AMillionLinesAreRefusedNamingFileAndLine) {
  std::string listing;
  for (int i = 0; i < 1000000; ++i) listing += "00:00.0 x\n";
  try {
    import_nvidia_bug_report(older_report(listing, kTree), "nvidia-bug-report.log", {});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvidia-bug-report.log: line "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("longer than"), std::string::npos) << e.what();
  }
}

TEST(ImportNvidiaOlder, NoLspciAtAllIsRefusedSayingWhatTheReportShowsAndWhatToAskFor) {
  try {
    import_nvidia_bug_report(prologue(), "nvidia-bug-report.log", {});
    FAIL() << "accepted";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("kernel 5.15.0-91-generic"), std::string::npos) << what;
    EXPECT_NE(what.find("470.82.01"), std::string::npos) << what;
    EXPECT_NE(what.find("DMI product PowerEdge R750"), std::string::npos) << what;
    EXPECT_NE(what.find("ask for `sudo lspci -xxxx`"), std::string::npos) << what;
  }
}

TEST(LspciListing, ClassIdsRevisionAndProgIfFromEachLine) {
  LspciListing l = parse_lspci_listing(
      "0000:41:00.0 Non-Volatile memory controller [0108]: Samsung [PM9A3] [144d:a80a] (rev 01) (prog-if 02 "
      "[NVM Express])\n\n03:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100] [10de:20b5] (rev a1)\n"
      "03:00.0 3D controller [0302]: again [10de:20b5]\nno address here\n",
      "r.log", 10);
  ASSERT_EQ(l.functions.size(), 2u);
  EXPECT_EQ(l.functions[0].class_code, 0x010802u);
  EXPECT_TRUE(l.functions[0].prog_if_shown);
  EXPECT_EQ(l.functions[0].revision, 0x01);
  EXPECT_EQ(l.functions[1].vendor, 0x10de);
  EXPECT_EQ(l.functions[1].device, 0x20b5);
  EXPECT_EQ(l.functions[1].line, 12);
  ASSERT_EQ(l.skipped.size(), 2u);
  EXPECT_EQ(l.skipped[0].subject, "line 13");
  EXPECT_NE(l.skipped[0].text.find("lists 0000:03:00.0 again"), std::string::npos);
}

}  // namespace
}  // namespace p2pcheck
