// Supplied facts fill only what the input lacks, and say what they did.
#include "p2pcheck/model/supplied.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

SuppliedFacts everything() {
  SuppliedFacts s;
  s.kernel_release = "6.8.0-142-generic";
  s.kernel_config = supplied_kernel_config("--kernel-config p2pdma=y", std::nullopt);
  s.kernel_config_given = "p2pdma=y";
  CpuInfo cpu = parse_cpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n");
  cpu.evidence_file = "--cpu amd-zen";
  s.cpu = cpu;
  s.cpu_given = "amd-zen";
  return s;
}

TEST(Supplied, FillsWhatTheInputLacksAndMarksItSupplied) {
  Machine m;  // a udev database: no release, no config, no CPU
  auto uses = apply_supplied(m, everything());
  ASSERT_EQ(uses.size(), 3u);
  for (const auto& use : uses) EXPECT_TRUE(use.used) << use.option;
  EXPECT_EQ(uses[1].value, "p2pdma=y");
  EXPECT_EQ(uses[2].value, "amd-zen");
  EXPECT_EQ(m.kernel_release, "6.8.0-142-generic");
  EXPECT_TRUE(m.kernel_release_supplied);
  EXPECT_TRUE(m.config.supplied);
  EXPECT_EQ(m.config.get("CONFIG_PCI_P2PDMA"), "y");
  EXPECT_TRUE(m.cpu.supplied);
  EXPECT_EQ(m.cpu.family, 25);
}

TEST(Supplied, TheInputWinsAndTheReportSaysWhy) {
  Machine m;
  m.kernel_release = "5.14.0-687.49.1.el9_8.x86_64";
  m.config.file = "/boot/config-5.14.0-687.49.1.el9_8.x86_64";
  m.config.options["CONFIG_PCI_P2PDMA"] = "y";
  m.cpu.vendor_id = "GenuineIntel";
  m.cpu.evidence_file = "/proc/cpuinfo";
  auto uses = apply_supplied(m, everything());
  ASSERT_EQ(uses.size(), 3u);
  for (const auto& use : uses) EXPECT_FALSE(use.used) << use.option;
  EXPECT_EQ(uses[0].why_not_used, "the input shows its own kernel release (5.14.0-687.49.1.el9_8.x86_64)");
  EXPECT_EQ(m.kernel_release, "5.14.0-687.49.1.el9_8.x86_64");  // the RHEL 9.8 kernel stays what it is
  EXPECT_FALSE(m.kernel_release_supplied || m.config.supplied || m.cpu.supplied);
}

TEST(Supplied, KernelConfigIsAKeywordOrAConfigFile) {
  EXPECT_EQ(supplied_kernel_config("--kernel-config p2pdma=n", std::nullopt).get("CONFIG_PCI_P2PDMA"), "n");
  EXPECT_THROW(supplied_kernel_config("--kernel-config p2pdma=maybe", std::nullopt), UsageError);
  auto file = supplied_kernel_config("--kernel-config c", std::string("CONFIG_PCI_P2PDMA=y\nCONFIG_X=m\n"));
  EXPECT_EQ(file.get("CONFIG_PCI_P2PDMA"), "y");
  EXPECT_THROW(supplied_kernel_config("--kernel-config c", std::string("hello\n")), UsageError);
}

}  // namespace
}  // namespace p2pcheck
