// lspci -vvv text: the config space it states, rebuilt, must decide as the hex dump of the same
// machine does; what it does not state stays unknown (never absent), and hostile text is bounded.
#include <gtest/gtest.h>

#include "import_fixture.h"
#include "lspci_text.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

using testing::as_source;
using testing::bridge;
using testing::ConfigSpace;
using testing::hex_dump;
using testing::input_notes;

const char* kRedir = "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-";
const char* kNone = "SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-";
const char* kAll = "SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans+";

// A bridge's block as lspci -nnDvvvk prints it: Express port `type` at [70], AER and ACS (ACSCtl `ctl`).
std::string bridge_text(const std::string& bdf, const std::string& ids, int primary, int sec, int sub,
                        const std::string& type, const char* ctl) {
  char bus[96];
  std::snprintf(bus, sizeof bus, "\tBus: primary=%02x, secondary=%02x, subordinate=%02x, sec-latency=0\n", primary, sec,
                sub);
  std::string out = bdf + " PCI bridge [0604]: Some Vendor Bridge [" + ids + "] (prog-if 00 [Normal decode])\n" +
                    "\tNUMA node: 1\n\tIOMMU group: 7\n" + bus +
                    "\tCapabilities: [40] Power Management version 3\n\t\tFlags: PMEClk- DSI- D1- D2-\n" +
                    "\tCapabilities: [70] Express (v2) " + type + ", MSI 00\n" +
                    "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L1, Exit Latency L1 <64us\n" +
                    "\t\tLnkSta:\tSpeed 16GT/s, Width x16\n\tCapabilities: [100 v2] Advanced Error Reporting\n";
  if (ctl)
    out += "\tCapabilities: [150 v1] Access Control Services\n\t\tACSCap:\t" + std::string(kAll) + "\n\t\tACSCtl:\t" +
           ctl + "\n";
  return out + "\tKernel driver in use: pcieport\n\n";
}

std::string endpoint_text(const std::string& bdf, const std::string& cls, const std::string& ids,
                          const std::string& driver, const std::string& extra = "") {
  std::string prog_if = cls.find("[0108]") != std::string::npos ? " (prog-if 02 [NVM Express])" : "";
  return bdf + " " + cls + ": Some Vendor Device [" + ids + "]" + prog_if + "\n\tSubsystem: Some Vendor Device [" +
         ids + "]\n\tNUMA node: 1\n\tIOMMU group: 9\n" + extra +
         "\tCapabilities: [70] Express (v2) Endpoint, MSI 00\n\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16\n"
         "\t\tLnkSta:\tSpeed 16GT/s, Width x16\n\tCapabilities: [100 v2] Advanced Error Reporting\n"
         "\tKernel driver in use: " +
         driver + "\n\n";
}

// The machine of import_fixture.h's small_lspci(), with ACSCtl `down` on the switch's downstream ports.
std::string small_text(const char* down) {
  return "0000:00:00.0 Host bridge [0600]: AMD Root Complex [1022:14a4]\n\tNUMA node: 1\n\n" +
         bridge_text("0000:00:01.1", "1022:14ab", 0, 1, 4, "Root Port (Slot+)",
                     "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-") +
         bridge_text("0000:01:00.0", "1000:c030", 1, 2, 4, "Upstream Port", kNone) +
         bridge_text("0000:02:00.0", "1000:c030", 2, 3, 3, "Downstream Port (Slot+)", down) +
         bridge_text("0000:02:01.0", "1000:c030", 2, 4, 4, "Downstream Port (Slot+)", down) +
         endpoint_text("0000:03:00.0", "Processing accelerators [1200]", "1002:74a1", "amdgpu",
                       "\tRegion 0: Memory at 10000000000 (64-bit, prefetchable) [size=256G]\n"
                       "\tRegion 5: Memory at c0000000 (32-bit, non-prefetchable) [size=512K]\n") +
         endpoint_text("0000:04:00.0", "Non-Volatile memory controller [0108]", "144d:a826", "nvme");
}

// The same machine as an lspci -xxxx dump.
std::string small_hex(std::uint16_t down) {
  return hex_dump("00:00.0 Host bridge", ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256)) +
         hex_dump("00:01.1 PCI bridge", bridge(0, 1, 4, 4, 0x1d)) +
         hex_dump("01:00.0 PCI bridge", bridge(1, 2, 4, 5, 0)) +
         hex_dump("02:00.0 PCI bridge", bridge(2, 3, 3, 6, down)) +
         hex_dump("02:01.0 PCI bridge", bridge(2, 4, 4, 6, down)) +
         hex_dump("03:00.0 accel", ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes()) +
         hex_dump("04:00.0 nvme", ConfigSpace(0x144d, 0xa826, 0x010802, false).pcie(0).bytes());
}

std::unique_ptr<Source> text_source(const std::string& text) {
  return as_source(import_lspci_text(text, nullptr, "", "lspci.txt", ImportOptions{"amd-zen"}));
}

Topology topology_of(Source& src) {
  PciDecoder decoder;
  return read_topology(src, decoder);
}

TEST(ImportLspciText, SniffedApartFromPlainLspciAndHexDumps) {
  EXPECT_EQ(sniff_text(small_text(kNone)), TextFormat::kLspciText);
  EXPECT_EQ(sniff_text("00:00.0 Host bridge: Intel\n00:01.0 VGA compatible controller: AMD\n"),
            TextFormat::kLspciNoHex);
  EXPECT_EQ(sniff_text(small_text(kNone) + small_hex(0)), TextFormat::kLspciDump);
}

TEST(ImportLspciText, AcsRedirectRefusesThePairExactlyAsTheHexDump) {
  for (bool redirect : {false, true}) {
    auto text = text_source(small_text(redirect ? kRedir : kNone));
    auto hex = as_source(import_lspci(small_hex(redirect ? 0x1d : 0), nullptr, "", "x.txt", ImportOptions{"amd-zen"}));
    auto a = run_check(*text, CheckOptions{{}, std::string("6.8")});
    auto b = run_check(*hex, CheckOptions{{}, std::string("6.8")});
    ASSERT_EQ(a->pairs.size(), 1u);
    ASSERT_EQ(b->pairs.size(), 1u);
    EXPECT_EQ(a->pairs[0].verdict, b->pairs[0].verdict) << redirect;
    EXPECT_EQ(a->pairs[0].map_type, b->pairs[0].map_type) << redirect;
    EXPECT_EQ(a->pairs[0].walk.acs_redirect.size(), b->pairs[0].walk.acs_redirect.size()) << redirect;
    EXPECT_TRUE(a->pairs[0].walk.acs_unknown.empty());
    // Redirected: never bus addresses (the host bridge decides, as for the hex dump); else BUS_ADDR.
    EXPECT_EQ(a->pairs[0].map_type == MapType::kBusAddr, !redirect);
    EXPECT_EQ(a->pairs[0].walk.acs_redirect.size(), redirect ? 2u : 0u);
  }
  Topology topo = topology_of(*text_source(small_text(kRedir)));
  const Function& port = topo.at(*Bdf::parse("02:00.0"));
  EXPECT_EQ(port.port_type, PortType::kDownstreamPort);
  EXPECT_EQ(port.acs.presence, Presence::kPresent);
  EXPECT_EQ(port.acs.capability, 0x5f);
  EXPECT_EQ(port.acs.control, 0x1d);
  EXPECT_EQ(port.link.max_speed, 16.0);
  EXPECT_EQ(port.link.cur_width, 16);
  EXPECT_EQ(topo.at(*Bdf::parse("04:00.0")).class_code, 0x010802u);  // "(prog-if 02 [NVM Express])"
  EXPECT_EQ(topo.at(*Bdf::parse("03:00.0")).class_code, 0x120000u);  // no "(prog-if": 0
  EXPECT_EQ(topo.at(*Bdf::parse("03:00.0")).sysfs_path,
            "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0");
}

TEST(ImportLspciText, NumaNodeIommuGroupDriverAndRegionSizesAreRead) {
  auto src = text_source(small_text(kNone));
  Topology topo = topology_of(*src);
  const Function& gpu = topo.at(*Bdf::parse("03:00.0"));
  EXPECT_EQ(gpu.numa_node, 1);
  EXPECT_EQ(gpu.iommu_group, 9);
  EXPECT_EQ(gpu.driver, "amdgpu");
  auto bar = gpu.largest_mem_bar();
  ASSERT_TRUE(bar);
  EXPECT_EQ(bar->index, 0);
  EXPECT_EQ(bar->size, 256ull << 30);
  EXPECT_TRUE(bar->prefetchable());
  EXPECT_TRUE(bar->is_64bit());
  ASSERT_EQ(gpu.bars.size(), 2u);
  EXPECT_EQ(gpu.bars[1].size, 512u << 10);
  // The host bridge printed no IOMMU group: it has none, as lspci prints the line only where one is.
  EXPECT_EQ(topo.at(*Bdf::parse("00:00.0")).iommu_group, std::nullopt);
  EXPECT_EQ(read_capture_info(*src)->format, "lspci -vvv");
  EXPECT_EQ(src->read("/proc/cmdline").error, "not in this lspci output");
}

TEST(ImportLspciText, WithoutNumaOrSizeLinesThoseStayNotInThisOutput) {
  std::string text = small_text(kNone);
  for (const char* line : {"\tNUMA node: 1\n", "\tRegion 0: Memory at 10000000000 (64-bit, prefetchable) [size=256G]\n",
                           "\tRegion 5: Memory at c0000000 (32-bit, non-prefetchable) [size=512K]\n"})
    for (size_t at = text.find(line); at != std::string::npos; at = text.find(line)) text.erase(at, strlen(line));
  auto src = text_source(text);
  Topology topo = topology_of(*src);
  const Function& gpu = topo.at(*Bdf::parse("03:00.0"));
  EXPECT_EQ(gpu.numa_unknown, "not in this lspci output");
  EXPECT_EQ(src->read(gpu.sysfs_path + "/resource").error, "not in this lspci output");
}

TEST(ImportLspciText, AccessDeniedKeepsOnlyTheHeaderAndAcsUnknown) {
  std::string text = small_text(kRedir);
  size_t at = text.find("0000:02:00.0 PCI bridge");
  size_t caps = text.find("\tCapabilities:", at), end = text.find("\tKernel driver", at);
  text.replace(caps, end - caps, "\tCapabilities: <access denied>\n");
  auto src = text_source(text);
  Topology topo = topology_of(*src);
  const Function& port = topo.at(*Bdf::parse("02:00.0"));
  EXPECT_EQ(port.config_size, 64u);
  EXPECT_EQ(port.acs.presence, Presence::kUnknown);
  EXPECT_EQ(port.port_type, PortType::kUnknown);
  auto report = run_check(*src, CheckOptions{{}, std::string("6.8")});
  ASSERT_EQ(report->pairs.size(), 1u);
  EXPECT_EQ(report->pairs[0].walk.acs_unknown.size(), 1u);  // never "no ACS": the pair is not decided by it
  EXPECT_NE(report->pairs[0].verdict, Verdict::kSupported);
  EXPECT_NE(read_capture_info(*src)->notes.back().find("<access denied>"), std::string::npos);
}

TEST(ImportLspciText, NoExtendedCapabilityListedMeans256BytesAndAcsUnknown) {
  std::string text = small_text(kNone);
  size_t at = text.find("0000:02:01.0 PCI bridge");
  size_t aer = text.find("\tCapabilities: [100", at), end = text.find("\tKernel driver", at);
  text.erase(aer, end - aer);
  Topology topo = topology_of(*text_source(text));
  const Function& port = topo.at(*Bdf::parse("02:01.0"));
  EXPECT_EQ(port.config_size, 256u);
  EXPECT_EQ(port.port_type, PortType::kDownstreamPort);
  EXPECT_EQ(port.acs.presence, Presence::kUnknown);
}

TEST(ImportLspciText, AcsWithoutItsRegistersIsUnknownNotAbsent) {
  std::string text = small_text(kNone);
  size_t at = text.find("0000:02:01.0 PCI bridge");
  size_t cap = text.find("\t\tACSCap:", at), end = text.find("\tKernel driver", at);
  text.erase(cap, end - cap);  // lspci -v: the capability's name, no registers
  Topology topo = topology_of(*text_source(text));
  EXPECT_EQ(topo.at(*Bdf::parse("02:01.0")).acs.presence, Presence::kUnknown);
  EXPECT_EQ(topo.at(*Bdf::parse("02:00.0")).acs.presence, Presence::kPresent);
}

TEST(ImportLspciText, ResizableBarAndSriovRegisters) {
  std::string extra =
      "\tCapabilities: [150 v1] Physical Resizable BAR\n"
      "\t\tBAR 0: current size: 256GB, supported: 256MB 512MB 1GB 256GB\n"
      "\tCapabilities: [160 v1] Single Root I/O Virtualization (SR-IOV)\n"
      "\t\tInitial VFs: 32, Total VFs: 32, Number of VFs: 2, Function Dependency Link: 00\n"
      "\t\tVF offset: 1, stride: 1, Device ID: a824\n"
      "\t\tRegion 0: Memory at 00000000ee008000 (64-bit, non-prefetchable)\n";
  std::string text = small_text(kNone);
  size_t at = text.find("\tKernel driver in use: amdgpu");
  text.insert(at, extra);
  Topology topo = topology_of(*text_source(text));
  const Function& gpu = topo.at(*Bdf::parse("03:00.0"));
  ASSERT_EQ(gpu.rebar.size(), 1u);
  EXPECT_EQ(gpu.rebar[0].current_size, 256ull << 30);
  EXPECT_EQ(gpu.rebar[0].supported_sizes.size(), 4u);
  EXPECT_EQ(gpu.sriov_presence, Presence::kPresent);
  EXPECT_EQ(gpu.sriov.total_vfs, 32);
  EXPECT_EQ(gpu.sriov.num_vfs, 2);
  EXPECT_EQ(gpu.sriov.vf_device, 0xa824);
  EXPECT_EQ(gpu.bars.size(), 2u);  // the VF Region line below SR-IOV is not the function's own BAR
}

// lspci -nvvv: numbers instead of names ("0604: 1000:c030", "Subsystem: 1000:0048").
TEST(ImportLspciText, NumbersWithoutNamesAreReadToo) {
  std::string text =
      "00:00.0 0600: 1022:14a4 (rev 01)\n\tSubsystem: 1022:14a4\n\n"
      "00:01.1 0604: 1022:14ab (prog-if 00 [Normal decode])\n"
      "\tBus: primary=00, secondary=01, subordinate=01, sec-latency=0\n"
      "\tCapabilities: [70] Express (v2) Root Port (Slot+), MSI 00\n"
      "\tCapabilities: [c0] Subsystem: 1022:1453\n\n"
      "01:00.0 0108: 144d:a826 (prog-if 02 [NVM Express])\n\tSubsystem: 144d:a801\n";
  Topology topo = topology_of(*text_source(text));
  const Function& nvme = topo.at(*Bdf::parse("01:00.0"));
  EXPECT_EQ(nvme.class_code, 0x010802u);
  EXPECT_EQ(nvme.subsystem_device, 0xa801);
  EXPECT_EQ(nvme.parent, Bdf::parse("00:01.1"));
  EXPECT_EQ(nvme.port_type, PortType::kNotPcie);  // it lists no capability: Cap-, as lspci shows it
  const Function& port = topo.at(*Bdf::parse("00:01.1"));
  EXPECT_EQ(port.subsystem_vendor, 0x1022);  // from the bridge's Subsystem capability
  EXPECT_EQ(port.subsystem_device, 0x1453);
  EXPECT_EQ(port.acs.presence, Presence::kUnknown);  // a PCIe port listing no extended capability
  EXPECT_EQ(topo.at(*Bdf::parse("00:00.0")).revision, 1);
}

TEST(ImportLspciText, NamesWithoutNumbersAreRefusedSayingWhatWasSeen) {
  std::string text =
      "00:00.0 Host bridge: Intel Corporation Device 0d57\n\tSubsystem: Intel Corporation Device 0000\n\n"
      "01:00.0 VGA compatible controller: NVIDIA Corporation GA100\n\tFlags: bus master\n\n"
      "02:00.0 Non-Volatile memory controller: Samsung Electronics Co Ltd NVMe SSD\n\tFlags: bus master\n";
  EXPECT_EQ(sniff_text(text), TextFormat::kLspciText);
  try {
    import_lspci_text(text, nullptr, "", "names.txt", ImportOptions{});
    FAIL();
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("names.txt"), std::string::npos) << what;
    EXPECT_NE(what.find("3 functions, 1 GPUs or accelerators and 1 NVMe"), std::string::npos) << what;
    EXPECT_NE(what.find("lspci -nnDvvvk"), std::string::npos) << what;
  }
}

std::string error_of(const std::string& text) {
  try {
    import_lspci_text(text, nullptr, "", "bad.txt", ImportOptions{});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ImportLspciText, MalformedBlocksAreLeftOutNamingTheLine) {
  // An absurd offset: that function is left out, with its line; the rest is read.
  std::string text = small_text(kNone);
  size_t at = text.find("[150 v1]", text.find("0000:02:01.0"));
  text.replace(at, 8, "[fff v1]");
  auto src = text_source(text);
  EXPECT_NE(input_notes(*src).find("capability offset [fff] is outside extended config space"), std::string::npos)
      << input_notes(*src);
  EXPECT_NE(input_notes(*src).find("0000:02:01.0"), std::string::npos);  // and the NVMe below it goes too
  EXPECT_FALSE(topology_of(*src).find(*Bdf::parse("04:00.0")));
  EXPECT_TRUE(topology_of(*src).find(*Bdf::parse("03:00.0")));
  // A capability listed twice, an ACS line cut short, a Bus line without numbers.
  for (auto [from, to, why] :
       {std::tuple{"[100 v2] Advanced", "[150 v2] Advanced", "listed twice"},
        std::tuple{"CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-", "CmpltRedir-", "with all seven flags"},
        std::tuple{"subordinate=04,", "subordinate=,", "expected 'Bus:"}}) {
    std::string t = small_text(kNone);
    size_t where = t.find(from, t.find("0000:02:01.0"));
    t.replace(where, strlen(from), to);
    EXPECT_NE(input_notes(*text_source(t)).find(why), std::string::npos) << why << ": " << input_notes(*text_source(t));
  }
  // Truncated in the middle of a block: what is there is read.
  std::string cut =
      small_text(kNone).substr(0, small_text(kNone).find("\t\tLnkSta", small_text(kNone).find("0000:04:00.0")));
  EXPECT_TRUE(topology_of(*text_source(cut)).find(*Bdf::parse("04:00.0")));
}

TEST(ImportLspciText, DuplicateAddressesAndTooManyFunctionsAreErrorsNamingTheLine) {
  std::string dup =
      small_text(kNone) + endpoint_text("0000:04:00.0", "Non-Volatile memory controller [0108]", "144d:a826", "nvme");
  EXPECT_NE(error_of(dup).find("0000:04:00.0 listed twice (first at line"), std::string::npos) << error_of(dup);
  EXPECT_EQ(error_of(dup).rfind("bad.txt: line ", 0), 0u) << error_of(dup);
  // A million functions: refused at the limit, naming the line, before the work.
  std::string many;
  many.reserve(1000000 * 40);
  char line[64];
  for (int i = 0; i < 1000000; ++i) {
    std::snprintf(line, sizeof line, "%04x:%02x:%02x.0 x [0600]: y [1022:14a4]\n", i >> 13, (i >> 5) & 0xff, i & 0x1f);
    many += line;
  }
  std::string why = error_of(many);
  EXPECT_NE(why.find("more than 65536 PCI functions"), std::string::npos) << why.substr(0, 200);
  EXPECT_EQ(why.rfind("bad.txt: line 65537", 0), 0u) << why.substr(0, 200);
}

}  // namespace
}  // namespace p2pcheck
