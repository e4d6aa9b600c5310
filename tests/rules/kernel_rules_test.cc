// The kernel judged alike whatever its origin: the table of releases, input, supplied and what-if.
#include "p2pcheck/rules/kernel_rules.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

struct Row {
  const char* release;
  Tri p2pdma;
  P2pdmaBasis basis;
  bool known_bad;
};

// No config anywhere: what the release itself says.
constexpr Row kRows[] = {
    {"3.10.0-1160.el7.x86_64", Tri::kNo, P2pdmaBasis::kBeforeP2pdma, false},
    {"4.10", Tri::kNo, P2pdmaBasis::kBeforeP2pdma, false},
    {"4.18.0-553.166.1.el8_10.x86_64", Tri::kNo, P2pdmaBasis::kBeforeP2pdma, false},
    {"5.14.0-570.58.1.el9_6.x86_64", Tri::kYes, P2pdmaBasis::kDistroTable, false},
    {"5.14.0-687.49.1.el9_8.x86_64", Tri::kYes, P2pdmaBasis::kDistroTable, true},
    {"6.12.0-211.58.1.el10_2.x86_64", Tri::kYes, P2pdmaBasis::kDistroTable, true},
    {"6.1.0-13-amd64", Tri::kNo, P2pdmaBasis::kDistroTable, false},
    {"6.8.0-90-generic", Tri::kYes, P2pdmaBasis::kDistroTable, false},
};

TEST(KernelRules, ASuppliedReleaseIsJudgedLikeTheInputsOwn) {
  for (const Row& row : kRows)
    for (bool supplied : {false, true}) {
      Machine m;
      m.kernel_release = row.release;
      m.kernel_release_supplied = supplied;
      KernelRules rules = kernel_rules_for(m, std::nullopt);
      EXPECT_EQ(rules.origin, supplied ? KernelOrigin::kSupplied : KernelOrigin::kInput);
      EXPECT_EQ(rules.p2pdma_enabled, row.p2pdma) << row.release;
      EXPECT_EQ(rules.p2pdma_basis, row.basis) << row.release;
      EXPECT_EQ(rules.known_bad != nullptr, row.known_bad) << row.release;
    }
}

TEST(KernelRules, AWhatIfIsJudgedTooAndKeepsTheRunningKernelsDanger) {
  Machine m;  // a RHEL 9.8 machine with its own config saying P2PDMA=y
  m.kernel_release = "5.14.0-687.49.1.el9_8.x86_64";
  m.config.file = "/boot/config-5.14.0-687.49.1.el9_8.x86_64";
  m.config.options["CONFIG_PCI_P2PDMA"] = "y";
  for (const Row& row : kRows) {
    KernelRules rules = kernel_rules_for(m, std::string(row.release));
    EXPECT_TRUE(rules.what_if());
    EXPECT_EQ(rules.p2pdma_enabled, row.p2pdma) << row.release;  // the machine's config is another kernel's
    EXPECT_EQ(rules.known_bad != nullptr, row.known_bad) << row.release;
    ASSERT_NE(rules.input_known_bad, nullptr);
    EXPECT_STREQ(rules.input_known_bad->name, "RHEL 9.8");
  }
  KernelRules plain = kernel_rules_for(m, std::string("6.8"));
  EXPECT_EQ(plain.p2pdma_basis, P2pdmaBasis::kWhatIfAssumed);
  EXPECT_EQ(plain.p2pdma_enabled, Tri::kYes);
  EXPECT_EQ(plain.known_bad, nullptr);
}

TEST(KernelRules, AConfigDecidesBeforeTheReleaseDoes) {
  Machine m;
  m.kernel_release = "4.18.0-553.el8_10.x86_64";  // a vendor kernel with a backport shows it in its config
  m.config.file = "/boot/config-4.18.0-553.el8_10.x86_64";
  m.config.options["CONFIG_PCI_P2PDMA"] = "y";
  KernelRules rules = kernel_rules_for(m, std::nullopt);
  EXPECT_EQ(rules.p2pdma_basis, P2pdmaBasis::kConfig);
  EXPECT_EQ(rules.p2pdma_enabled, Tri::kYes);
  Machine custom;
  custom.kernel_release = "6.9.3-custom";
  EXPECT_EQ(kernel_rules_for(custom, std::nullopt).p2pdma_enabled, Tri::kUnknown);
}

}  // namespace
}  // namespace p2pcheck
