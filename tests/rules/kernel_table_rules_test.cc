// The kernel's own allowlist in the decision (issue 47): read rows decide instead of upstream's table
// by version, the step names its source and the rows that differ, and a distribution kernel whose
// table was not read gets UNKNOWN, never a refusal built on upstream's table.
#include "verdict_machine.h"

namespace p2pcheck {
namespace {

using testing::Machine;

KernelTable own_table(std::vector<KernelTableRow> rows, KernelTableOrigin origin = KernelTableOrigin::kRunningKernel) {
  KernelTable t;
  t.origin = origin;
  t.rows = std::move(rows);
  t.how = "/proc/kallsyms pci_p2pdma_whitelist at 0xffffffff82000040, rows read from /proc/kcore";
  return t;
}

const std::vector<KernelTableRow> k612 = {
    {0x8086, 0x3c00, 1}, {0x8086, 0x3c01, 1}, {0x8086, 0x2f00, 1}, {0x8086, 0x2f01, 1}, {0x8086, 0x2030, 0},
    {0x8086, 0x2031, 0}, {0x8086, 0x2032, 0}, {0x8086, 0x2033, 0}, {0x8086, 0x2020, 0}, {0x8086, 0x09a2, 0}};

class KernelTableRules : public Machine {
 protected:
  void q35() {
    std::string hb = host_bridge("0000:00", 0x8086, 0x29c0);
    endpoint(port(hb, "0000:00:10.0", 4), "0000:01:00.0", 0x030000);
    endpoint(port(hb, "0000:00:11.0", 4), "0000:02:00.0", 0x010802);
    cpu("GenuineIntel", 6);
  }
};

TEST_F(KernelTableRules, TheRunningKernelsRowsDecide) {
  q35();
  PairDecision plain = decide("0000:01:00.0", "0000:02:00.0", "6.12.118");
  EXPECT_EQ(plain.verdict, Verdict::kNotSupported);
  EXPECT_EQ(plain.host.table_source, AllowlistSource::kUpstreamTable);
  std::vector<KernelTableRow> rows = k612;
  rows.push_back({0x8086, 0x29c0, 0});
  machine_.kernel_table = own_table(rows);
  PairDecision own = decide("0000:01:00.0", "0000:02:00.0", "6.12.118");
  EXPECT_EQ(own.verdict, Verdict::kSupported);
  EXPECT_EQ(own.decided_by, DecidedBy::kAllowlistAllows);
  EXPECT_EQ(own.host.table_source, AllowlistSource::kRunningKernel);
  KernelRules rules = kernel_rules_for(machine_, std::nullopt);
  ASSERT_EQ(rules.rows_added.size(), 1u);
  EXPECT_EQ(row_ids(rules.rows_added[0]), "8086:29c0");
  EXPECT_TRUE(rules.rows_missing.empty());
  EXPECT_EQ(allowlist_source_text(rules.allowlist.source, rules.version), "running kernel");
}

TEST_F(KernelTableRules, OwnRowsRefuseWhatUpstreamAllows) {
  // A kernel without the 0x09a2 row (an old RHEL build, say): its own table decides, not 6.12's.
  std::string hb = host_bridge("0000:00", 0x8086, 0x09a2);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  machine_.kernel_table = own_table({k612.begin(), k612.end() - 1}, KernelTableOrigin::kCapture);
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0", "6.12.118");
  EXPECT_EQ(d.verdict, Verdict::kNotSupported);
  KernelRules rules = kernel_rules_for(machine_, std::nullopt);
  ASSERT_EQ(rules.rows_missing.size(), 1u);
  EXPECT_EQ(row_ids(rules.rows_missing[0]), "8086:09a2");
  EXPECT_EQ(allowlist_source_text(rules.allowlist.source, rules.version), "capture");
}

TEST_F(KernelTableRules, ADistributionKernelWithoutItsTableIsUnknownNotRefused) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x09a2);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  // RHEL 9.6's release says 5.14, whose upstream table lacks 0x09a2 (5.18): that is no refusal.
  PairDecision rhel = decide("0000:01:00.0", "0000:02:00.0", "5.14.0-570.58.1.el9_6.x86_64");
  EXPECT_EQ(rhel.verdict, Verdict::kUnknown);
  EXPECT_EQ(rhel.decided_by, DecidedBy::kCannotDecide);
  ASSERT_TRUE(rhel.undecided_by);
  EXPECT_EQ(rhel.undecided_by->fact, UnknownFact::kKernelTable);
  // Plain upstream 5.14 is refused by its table, as before.
  EXPECT_EQ(decide("0000:01:00.0", "0000:02:00.0", "5.14.21").verdict, Verdict::kNotSupported);
  // RHEL with its own table read: the rows decide.
  std::vector<KernelTableRow> rows = {k612.begin(), k612.end()};
  machine_.kernel_table = own_table(rows);
  PairDecision read = decide("0000:01:00.0", "0000:02:00.0", "5.14.0-570.58.1.el9_6.x86_64");
  EXPECT_EQ(read.verdict, Verdict::kSupported);
  KernelRules rules = kernel_rules_for(machine_, std::nullopt);
  ASSERT_EQ(rules.rows_added.size(), 1u);  // 0x09a2: in this 5.14 kernel, upstream from 5.18
  EXPECT_EQ(row_ids(rules.rows_added[0]), "8086:09a2");
  // An AMD Zen CPU does not need the allowlist: nothing is unknown then.
  machine_.kernel_table = {};
  cpu("AuthenticAMD", 0x19);
  EXPECT_EQ(decide("0000:01:00.0", "0000:02:00.0", "5.14.0-570.58.1.el9_6.x86_64").verdict, Verdict::kSupported);
}

TEST_F(KernelTableRules, AWhatIfKernelImageBringsItsOwnTableAndConfig) {
  q35();
  KernelImage image;
  image.file = "vmlinuz-6.12.118";
  image.release = "6.12.118";
  image.config = parse_kernel_config("CONFIG_PCI_P2PDMA=y\n", "vmlinuz-6.12.118 (IKCONFIG)");
  std::vector<KernelTableRow> rows = k612;
  rows.push_back({0x8086, 0x29c0, 0});
  image.table = own_table(rows, KernelTableOrigin::kKernelImage);
  machine_.kernel_release = "5.14.0-570.58.1.el9_6.x86_64";
  machine_.kernel_table = own_table(k612);  // the running kernel's own: not the what-if kernel's
  KernelRules rules = kernel_rules_for(machine_, std::nullopt, &image);
  EXPECT_TRUE(rules.what_if());
  EXPECT_EQ(rules.release, "6.12.118");
  EXPECT_EQ(rules.p2pdma_basis, P2pdmaBasis::kConfig);
  EXPECT_EQ(rules.config_file, "vmlinuz-6.12.118 (IKCONFIG)");
  EXPECT_EQ(allowlist_source_text(rules.allowlist.source, rules.version), "kernel image");
  ASSERT_EQ(rules.rows_added.size(), 1u);
  // A what-if release alone has no table of its own: upstream's, or unknown for a distribution kernel.
  KernelRules release_only = kernel_rules_for(machine_, std::string("5.14.0-570.58.1.el9_6.x86_64"));
  EXPECT_EQ(release_only.allowlist.source, AllowlistSource::kUpstreamTable);
  EXPECT_TRUE(release_only.allowlist.distro_unread);
}

}  // namespace
}  // namespace p2pcheck
