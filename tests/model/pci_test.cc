#include "p2pcheck/model/pci.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::ConfigSpace;

TEST(Bdf, ParsesAndPrintsLikeTheKernel) {
  auto bdf = Bdf::parse("0000:41:00.1");
  ASSERT_TRUE(bdf);
  EXPECT_EQ(bdf->bus, 0x41);
  EXPECT_EQ(bdf->fn, 1);
  EXPECT_EQ(bdf->str(), "0000:41:00.1");
  EXPECT_EQ(Bdf::parse("c1:00.0")->str(), "0000:c1:00.0");
  EXPECT_EQ(Bdf::parse("10000:00:02.0")->domain, 0x10000u);  // VMD domains
  EXPECT_FALSE(Bdf::parse("nvme0"));
  EXPECT_FALSE(Bdf::parse("0000:41:00.8"));
  EXPECT_FALSE(Bdf::parse("0000:41:20.0"));
  EXPECT_FALSE(Bdf::parse("0000:41:00.0x"));
}

TEST(Bdf, PrintsAsPrintfWouldForEveryWidthOfNumber) {
  // The kernel's "%04x:%02x:%02x.%x", for addresses parse() refuses too (a struct can hold them).
  for (std::uint32_t domain : {0u, 1u, 0xabcu, 0xffffu, 0x10000u, 0x1234567u, 0xffffffffu})
    for (unsigned bus : {0u, 0xau, 0xc1u, 0xffu})
      for (unsigned dev : {0u, 0x1fu, 0x20u, 0xffu})
        for (unsigned fn : {0u, 7u, 8u, 0x10u, 0xffu}) {
          Bdf b{domain, static_cast<std::uint8_t>(bus), static_cast<std::uint8_t>(dev), static_cast<std::uint8_t>(fn)};
          char expected[32];
          std::snprintf(expected, sizeof expected, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
          EXPECT_EQ(b.str(), expected);
        }
}

TEST(Bdf, ShapeAndBoundsWithoutARegex) {
  EXPECT_TRUE(Bdf::shaped("0000:41:20.0"));  // shaped like an address...
  EXPECT_FALSE(Bdf::parse("0000:41:20.0"));  // ...but device 0x20 is not one
  EXPECT_TRUE(Bdf::shaped("41:00.0"));
  EXPECT_FALSE(Bdf::shaped("000:41:00.0"));  // a domain has 4 to 8 digits
  EXPECT_FALSE(Bdf::shaped("123456789:41:00.0"));
  EXPECT_EQ(Bdf::parse("ffffffff:ff:1f.7")->domain, 0xffffffffu);
  EXPECT_FALSE(Bdf::shaped("10000:00:02.0", 4, 4));
  EXPECT_FALSE(Bdf::parse("0000:4g:00.0"));
  EXPECT_FALSE(Bdf::parse(" 0000:41:00.0"));
  EXPECT_FALSE(Bdf::parse(std::string(200000, '0') + ":41:00.0"));
}

TEST(Bdf, KeyIsOneIntegerPerAddressInAddressOrder) {
  const Bdf a = *Bdf::parse("0000:41:00.0"), b = *Bdf::parse("0000:41:00.1"), c = *Bdf::parse("0001:00:00.0"),
            top = *Bdf::parse("ffffffff:ff:1f.7");
  EXPECT_LT(a.key(), b.key());
  EXPECT_LT(b.key(), c.key());  // the domain counts first, as in Bdf's own order
  EXPECT_LT(c.key(), top.key());
  EXPECT_EQ(top.key(), 0xffffffffff1f07ull);  // a 32-bit domain fits without folding into the bus
  EXPECT_EQ(Bdf::parse(a.str())->key(), a.key());
}

// Resizable BAR at 0x100 whose control register asks for BAR size code `code` (2^(code+20) bytes).
std::string rebar_config(unsigned code, size_t at = 0x100) {
  std::string c = ConfigSpace(0x1002, 0x73bf, 0x030000, false).pcie(0).bytes();
  auto put32 = [&](size_t where, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) c[where + i] = static_cast<char>(v >> (8 * i));
  };
  if (at != 0x100) put32(0x100, 0x0001 | 1u << 16 | static_cast<std::uint32_t>(at) << 20);  // AER, then ReBAR
  put32(at, 0x0015 | 1u << 16);
  if (at + 12 <= c.size()) {
    put32(at + 4, 0xfffffff0);
    put32(at + 8, 1u << 5 | code << 8);
  }
  return c;
}

TEST(PciDecoder, ResizableBarSizeCodesPastTheSpecAreNotShifted) {
  PciDecoder decoder;
  Function fn;
  fn.bdf = *Bdf::parse("0000:03:00.0");
  decoder.decode_config(fn, rebar_config(19));
  ASSERT_EQ(fn.rebar.size(), 1u);
  EXPECT_EQ(fn.rebar[0].current_size, 512ull << 30);
  fn = Function{};
  decoder.decode_config(fn, rebar_config(43));
  ASSERT_EQ(fn.rebar.size(), 1u);
  EXPECT_EQ(fn.rebar[0].current_size, 1ull << 63);
  for (unsigned code : {44u, 63u}) {  // 1 << (63 + 20) was undefined behaviour
    fn = Function{};
    decoder.decode_config(fn, rebar_config(code));
    EXPECT_EQ(fn.rebar_presence, Presence::kPresent);
    EXPECT_TRUE(fn.rebar.empty()) << code;
  }
  // A ReBAR capability in the last bytes of config space: its registers read past the end as 0xff.
  fn = Function{};
  decoder.decode_config(fn, rebar_config(5, 0xffc));
  EXPECT_EQ(fn.rebar_presence, Presence::kPresent);
}

TEST(PciDecoder, CapabilityListsThatLoopEnd) {
  std::string c = ConfigSpace(0x1002, 0x73bf, 0x030000, false).pcie(0).acs(0x5f, 0x1d).bytes();
  c[0x41] = 0x40;   // the PCIe capability's next pointer: itself
  c[0x103] = 0x10;  // ACS's next extended capability (bits 31:20 of its header): 0x100, itself
  PciDecoder decoder;
  Function fn;
  fn.bdf = *Bdf::parse("0000:03:00.0");
  decoder.decode_config(fn, c);
  EXPECT_EQ(fn.port_type, PortType::kEndpoint);
  EXPECT_EQ(fn.acs.presence, Presence::kPresent);
}

TEST(Helpers, LinkSpeedsOutsideAnyPcieGenerationAreUnknown) {
  EXPECT_EQ(parse_link_speed("32.0 GT/s PCIe"), 32.0);
  EXPECT_FALSE(parse_link_speed("1e300 GT/s"));  // format_speed's int conversion would be undefined
  EXPECT_FALSE(parse_link_speed("nan GT/s"));
  EXPECT_FALSE(parse_link_speed("inf GT/s"));
  EXPECT_FALSE(parse_link_speed("-8 GT/s"));
}

TEST(PciDecoder, DecodesPortTypeLinkAndAcs) {
  PciDecoder decoder;
  Function fn;
  fn.bdf = *Bdf::parse("0000:02:01.0");
  std::string config = ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6, 5, 16, 4, 8).acs(0x005f, 0x001d).bytes();
  decoder.decode_config(fn, config);
  EXPECT_EQ(fn.port_type, PortType::kDownstreamPort);
  EXPECT_EQ(fn.header_type, 1);
  EXPECT_EQ(fn.link.max_speed, 32.0);
  EXPECT_EQ(fn.link.cur_speed, 16.0);
  EXPECT_EQ(fn.link.cur_width, 8);
  EXPECT_TRUE(fn.link.downtrained());
  EXPECT_EQ(fn.acs.presence, Presence::kPresent);
  EXPECT_EQ(fn.acs.control, 0x001d);
  EXPECT_TRUE(fn.acs.redirect());
  EXPECT_EQ(fn.rebar_presence, Presence::kAbsent);
}

TEST(PciDecoder, AcsWithoutRedirectBits) {
  PciDecoder decoder;
  Function fn;
  decoder.decode_config(fn, ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(4).acs(0x005f, 0x0011).bytes());
  EXPECT_EQ(fn.acs.presence, Presence::kPresent);
  EXPECT_FALSE(fn.acs.redirect());  // SV and UF only: the kernel does not count them
}

TEST(PciDecoder, NoAcsCapabilityIsAbsent) {
  PciDecoder decoder;
  Function fn;
  decoder.decode_config(fn, ConfigSpace(0x104c, 0x8233, 0x060400, true).pcie(6).bytes());
  EXPECT_EQ(fn.acs.presence, Presence::kAbsent);
}

TEST(PciDecoder, SixtyFourBytesMeansUnknownNeverAbsent) {
  PciDecoder decoder;
  Function fn;
  decoder.decode_config(fn, ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6).acs(0x5f, 0x1d).bytes(64));
  EXPECT_EQ(fn.config_size, 64u);
  EXPECT_EQ(fn.port_type, PortType::kUnknown);
  EXPECT_EQ(fn.acs.presence, Presence::kUnknown);
  EXPECT_FALSE(fn.acs.redirect());
  EXPECT_NE(fn.config_note.find("needs root"), std::string::npos);
}

TEST(PciDecoder, TwoHundredFiftySixBytesLeavesExtendedCapabilitiesUnknown) {
  PciDecoder decoder;
  Function fn;
  decoder.decode_config(fn, ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6).acs(0x5f, 0x1d).bytes(256));
  EXPECT_EQ(fn.port_type, PortType::kDownstreamPort);
  EXPECT_EQ(fn.acs.presence, Presence::kUnknown);
}

TEST(PciDecoder, ConventionalPciHasNoPcieCapability) {
  PciDecoder decoder;
  Function fn;
  decoder.decode_config(fn, ConfigSpace(0x8086, 0x7000, 0x060100, false).bytes(256));
  EXPECT_EQ(fn.port_type, PortType::kNotPcie);
  EXPECT_EQ(fn.acs.presence, Presence::kAbsent);
}

// Config bytes changed in place, little-endian, for the cases ConfigSpace does not build.
std::string poke(std::string c, size_t at, std::uint32_t value, int bytes) {
  std::string le;
  for (int i = 0; i < bytes; ++i) le += static_cast<char>(value >> (8 * i));
  return c.replace(at, le.size(), le);
}

TEST(ConfigAttributes, EndpointHeaderAndLinkAreWhatTheAttributeFilesSay) {
  // Subsystem 1002:0e0d at 0x2c; Gen5-capable x16 link running at Gen4 x8.
  std::string c = poke(ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0, 5, 16, 4, 8).bytes(), 0x2c, 0x0e0d1002, 4);
  ConfigAttributes a = config_attributes(c, false);
  EXPECT_EQ(a.vendor, 0x1002);
  EXPECT_EQ(a.device, 0x74a1);
  EXPECT_EQ(a.revision, 0x01);
  EXPECT_EQ(a.subsystem(0x120000), (std::pair<std::uint16_t, std::uint16_t>{0x1002, 0x0e0d}));
  ASSERT_TRUE(a.link);
  EXPECT_EQ(a.link->max_speed, 32.0);  // "32.0 GT/s PCIe"
  EXPECT_EQ(a.link->max_width, 16);
  EXPECT_EQ(a.link->cur_speed, 16.0);
  EXPECT_EQ(a.link->cur_width, 8);
}

TEST(ConfigAttributes, SixtyFourBytesGiveTheHeaderButNotTheLink) {
  // What a non-root reader sees: the IDs are there, the capabilities are not.
  ConfigAttributes a = config_attributes(ConfigSpace(0x144d, 0xa824, 0x010802, false).pcie(0).bytes(64), false);
  EXPECT_EQ(a.vendor, 0x144d);
  EXPECT_EQ(a.device, 0xa824);
  EXPECT_TRUE(a.subsystem(0x010802));
  EXPECT_FALSE(a.link);
  // A bridge's subsystem IDs live in a capability: not in 64 bytes.
  ConfigAttributes b = config_attributes(ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6).bytes(64), false);
  EXPECT_EQ(b.vendor, 0x1000);
  EXPECT_FALSE(b.subsystem(0x060400));
}

TEST(ConfigAttributes, VirtualFunctionsAndAbsentDevicesGiveNothing) {
  // A VF's own config reads 0xffff; the kernel takes its IDs from the PF (iov.c), so: the files.
  ConfigAttributes vf = config_attributes(ConfigSpace(0xffff, 0xffff, 0x010802, false).pcie(0).bytes(), true);
  EXPECT_FALSE(vf.vendor || vf.device || vf.revision || vf.link || vf.subsystem(0x010802));
  // Even where a VF's config shows IDs (some emulations do), the physfn link decides.
  ConfigAttributes shown = config_attributes(ConfigSpace(0x144d, 0xa824, 0x010802, false).pcie(0).bytes(), true);
  EXPECT_FALSE(shown.vendor || shown.link);
  // A VF without a physfn link (an import), or a function that no longer answers: all ones.
  ConfigAttributes ones = config_attributes(std::string(4096, '\xff'), false);
  EXPECT_FALSE(ones.vendor || ones.device || ones.revision || ones.link || ones.subsystem(0x010802));
  EXPECT_FALSE(config_attributes(std::string(32, '\0'), false).vendor);  // shorter than a header
}

TEST(ConfigAttributes, BridgeSubsystemComesFromTheSsvidCapability) {
  std::string c = ConfigSpace(0x1000, 0xc030, 0x060400, true).pcie(6).bytes();
  // No SSVID capability: pci_setup_device() leaves them 0.
  EXPECT_EQ(config_attributes(c, false).subsystem(0x060400), (std::pair<std::uint16_t, std::uint16_t>{0, 0}));
  // 0x2c of a bridge is its prefetchable base: never the subsystem.
  c = poke(c, 0x2c, 0xdeadbeef, 4);
  // The PCIe capability at 0x40 now points on to SSVID at 0xc0.
  c = poke(poke(c, 0x41, 0xc0, 1), 0xc0, 0x000d, 2);
  c = poke(c, 0xc4, 0x10002000, 4);
  EXPECT_EQ(kernel_find_capability(c, 0x0d), 0xc0u);
  EXPECT_EQ(config_attributes(c, false).subsystem(0x060400), (std::pair<std::uint16_t, std::uint16_t>{0x2000, 0x1000}));
}

TEST(ConfigAttributes, RefusedClassLeavesSubsystemToTheFiles) {
  // pci_setup_device() refuses a header-type-0 function of class 0x0604 and reports class 0
  // without reading its subsystem IDs: only the files tell.
  std::string c = poke(ConfigSpace(0x8086, 0x1234, 0x060400, false).bytes(), 0x2c, 0x56788086, 4);
  ConfigAttributes a = config_attributes(c, false);
  EXPECT_FALSE(a.subsystem(0x000000));
  EXPECT_FALSE(a.subsystem(0x060400));
  EXPECT_TRUE(a.subsystem(0x010802));  // the class a quirk gave it
  EXPECT_EQ(a.vendor, 0x8086);         // the IDs were read before the class check
}

TEST(ConfigAttributes, MaxLinkSpeedOnlyWhereEveryKernelAgrees) {
  std::string c = ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0, 4, 16, 4, 16).bytes();
  auto at_lnkcap2 = [&](std::uint32_t v) { return config_attributes(poke(c, 0x40 + 0x2c, v, 4), false).link; };
  // An empty vector (PCIe 2.x devices): Max Link Speed, on every kernel.
  ASSERT_TRUE(at_lnkcap2(0));
  EXPECT_EQ(at_lnkcap2(0)->max_speed, 16.0);
  // The vector's highest speed is Max Link Speed: the same.
  ASSERT_TRUE(at_lnkcap2(0x1e));
  EXPECT_EQ(at_lnkcap2(0x1e)->max_speed, 16.0);
  // Vector beyond Max Link Speed: 4.17-6.12 say 32 GT/s, 6.13 caps at 16: read the file.
  EXPECT_FALSE(at_lnkcap2(0x3e));
  // Only a speed the kernel has no name for (bit 7): read the file.
  EXPECT_FALSE(at_lnkcap2(0x80));
  // A version-1 capability has no Link Capabilities 2; what follows it is another register.
  std::string v1 = poke(poke(c, 0x42, 0x0001, 2), 0x40 + 0x2c, 0x3e, 4);
  auto link = config_attributes(v1, false).link;
  ASSERT_TRUE(link);
  EXPECT_EQ(link->max_speed, 16.0);
}

TEST(ConfigAttributes, FunctionsWithoutALink) {
  // Conventional PCI: no link attributes at all.
  auto pci = config_attributes(ConfigSpace(0x8086, 0x7000, 0x060100, false).bytes(256), false).link;
  ASSERT_TRUE(pci);
  EXPECT_FALSE(pci->max_speed || pci->cur_speed || pci->max_width || pci->cur_width);
  // A root-complex integrated endpoint: "Unknown" and 0 in the files.
  auto rciep = config_attributes(ConfigSpace(0x1022, 0x14dc, 0x088000, false).pcie(9, 0, 0, 0, 0).bytes(), false).link;
  ASSERT_TRUE(rciep);
  EXPECT_FALSE(rciep->max_speed || rciep->cur_speed || rciep->max_width || rciep->cur_width);
  // ...unless its link registers hold something, which 3.x kernels printed: the files.
  EXPECT_FALSE(config_attributes(ConfigSpace(0x1022, 0x14dc, 0x088000, false).pcie(9).bytes(), false).link);
  // A reserved port type: what the kernel made of it is in the files.
  EXPECT_FALSE(config_attributes(ConfigSpace(0x1022, 0x14dc, 0x088000, false).pcie(3).bytes(), false).link);
}

TEST(ConfigAttributes, CapabilityWalkIsTheKernels) {
  std::string c = ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes();
  EXPECT_EQ(kernel_find_capability(c, 0x10), 0x40u);
  EXPECT_EQ(kernel_find_capability(c.substr(0, 64), 0x10), 0u);         // the capabilities are not in 64 bytes
  EXPECT_EQ(kernel_find_capability(poke(c, 0x06, 0, 2), 0x10), 0u);     // no capability list in the status
  EXPECT_EQ(kernel_find_capability(poke(c, 0x34, 0x30, 1), 0x10), 0u);  // a pointer into the header ends it
  EXPECT_EQ(kernel_find_capability(poke(c, 0x40, 0xff, 1), 0x10), 0u);  // ID 0xff ends it
  // A list that loops: 48 entries, then absent (the kernel's PCI_FIND_CAP_TTL).
  std::string loop = poke(poke(c, 0x40, 0x4001, 2), 0x34, 0x40, 1);
  EXPECT_EQ(kernel_find_capability(loop, 0x10), 0u);
}

TEST(PciNames, ComeFromPciIdsAndAreEmptyWhenUnknown) {
  EXPECT_NE(pci_vendor_name(0x1002).find("AMD"), std::string::npos);
  EXPECT_NE(pci_device_name(0x1002, 0x740f).find("MI210"), std::string::npos);
  EXPECT_EQ(pci_device_name(0x1002, 0x0001), "");
  EXPECT_EQ(pci_vendor_name(0x0002), "");
}

// Fleet workers ask for names at once, the first lookups included (libpci loads pci.ids then,
// freeing and refilling its list): every thread gets the names one thread alone would.
TEST(PciNames, SeveralThreadsLookingUpAtOnceGetTheSameNames) {
  constexpr int kThreads = 4;
  std::vector<std::string> vendors(kThreads), devices(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        vendors[t] = pci_vendor_name(0x1002);
        devices[t] = pci_device_name(0x1002, 0x740f);
      }
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(vendors[t], pci_vendor_name(0x1002));
    EXPECT_NE(devices[t].find("MI210"), std::string::npos) << devices[t];
  }
}

TEST(Helpers, SizesSpeedsAndAcsBits) {
  EXPECT_EQ(format_size(256ull << 30), "256 GiB");
  EXPECT_EQ(format_size(16ull << 20), "16 MiB");
  EXPECT_EQ(format_speed(2.5), "2.5 GT/s");
  EXPECT_EQ(format_speed(16), "16 GT/s");
  EXPECT_EQ(parse_link_speed("16.0 GT/s PCIe\n"), 16.0);
  EXPECT_FALSE(parse_link_speed("Unknown\n"));
  EXPECT_EQ(acs_bits_str(0x001d), "SV RR CR UF");
  EXPECT_NEAR(lane_bytes_per_second(8) * 16 / 1e9, 15.75, 0.01);
  EXPECT_NEAR(lane_bytes_per_second(5) * 16 / 1e9, 8.0, 0.01);
}

}  // namespace
}  // namespace p2pcheck
