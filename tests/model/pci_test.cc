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
