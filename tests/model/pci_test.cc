#include "p2pcheck/model/pci.h"

#include <gtest/gtest.h>

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

TEST(PciDecoder, NamesComeFromPciIds) {
  PciDecoder decoder;
  Function fn;
  fn.vendor = 0x1002;
  fn.device = 0x74a1;
  decoder.lookup_names(fn);
  EXPECT_NE(fn.vendor_name.find("AMD"), std::string::npos);
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
