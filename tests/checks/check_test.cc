#include "p2pcheck/checks/check.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <tuple>

#include "p2pcheck/checks/iommu.h"
#include "p2pcheck/checks/kernel.h"
#include "p2pcheck/checks/kernel_module.h"
#include "p2pcheck/source/error.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

const Finding* find(const std::vector<Finding>& findings, const std::string& id) {
  for (const auto& f : findings)
    if (f.id == id) return &f;
  return nullptr;
}

Machine machine_with(const std::string& release, const std::string& config_value) {
  Machine m;
  m.kernel_release = release;
  m.cpu.vendor_id = "GenuineIntel";
  m.cpu.family = 6;
  m.cpu.evidence_file = "/proc/cpuinfo";
  m.config.tried = {"/boot/config-" + release};
  if (!config_value.empty()) {
    m.config.file = "/boot/config-" + release;
    if (config_value != "n") m.config.options["CONFIG_PCI_P2PDMA"] = config_value;
  }
  return m;
}

TEST(CheckKernel, ConfigSetMissingOrUnknown) {
  Machine yes = machine_with("6.8.0-142-generic", "y");
  auto f = check_kernel(yes, kernel_rules_for(yes, std::nullopt));
  EXPECT_EQ(find(f, "kernel.config_p2pdma")->level, Level::kPass);
  EXPECT_EQ(find(f, "kernel.config_p2pdma")->evidence.at(0).file, "/boot/config-6.8.0-142-generic");

  Machine no = machine_with("6.1.0-31-amd64", "n");
  f = check_kernel(no, kernel_rules_for(no, std::nullopt));
  EXPECT_EQ(find(f, "kernel.config_p2pdma")->level, Level::kFail);
  EXPECT_FALSE(find(f, "kernel.config_p2pdma")->fix.empty());

  Machine unknown = machine_with("6.1.55-custom", "");
  f = check_kernel(unknown, kernel_rules_for(unknown, std::nullopt));
  EXPECT_EQ(find(f, "kernel.config_p2pdma")->level, Level::kUnknown);
  EXPECT_NE(find(f, "kernel.config_p2pdma")->message.find("/boot/config-6.1.55-custom"), std::string::npos);

  // Without a config, a release hipFile's table names says what its default kernel has.
  Machine debian = machine_with("6.1.0-31-amd64", "");
  f = check_kernel(debian, kernel_rules_for(debian, std::nullopt));
  EXPECT_EQ(find(f, "kernel.config_p2pdma")->level, Level::kFail);
  EXPECT_EQ(find(f, "kernel.config_p2pdma")->evidence.at(1).value,
            "debian-12: 6.1.0-53-amd64, CONFIG_PCI_P2PDMA not set");
  Machine ubuntu = machine_with("6.8.0-90-generic", "");
  f = check_kernel(ubuntu, kernel_rules_for(ubuntu, std::nullopt));
  EXPECT_EQ(find(f, "kernel.config_p2pdma")->level, Level::kInfo);  // a table row is not this kernel's config
  EXPECT_EQ(kernel_rules_for(ubuntu, std::nullopt).p2pdma_enabled, Tri::kYes);
}

TEST(CheckKernel, KnownBadKernelFailsWhateverElsePasses) {
  Machine m = machine_with("6.12.0-211.58.1.el10_2.x86_64", "y");
  auto f = check_kernel(m, kernel_rules_for(m, std::nullopt));
  EXPECT_EQ(find(f, "kernel.known_bad")->level, Level::kFail);
  EXPECT_NE(find(f, "kernel.known_bad")->message.find("RHEL 10.2"), std::string::npos);
  EXPECT_EQ(find(f, "kernel.config_p2pdma")->level, Level::kPass);
}

// A rebuild of a known-bad base: never judged safe (UNKNOWN, with what would tell), and the pairs'
// RESULT cannot be PASS.
TEST(CheckKernel, AKnownBadBaseRebuiltIsUnknownNeverPass) {
  Machine m = machine_with("5.14.0-687.49.1.1toss.t5.x86_64", "y");
  KernelRules rules = kernel_rules_for(m, std::nullopt);
  EXPECT_FALSE(rules.known_bad);
  ASSERT_TRUE(rules.known_bad_base.row);
  auto f = check_kernel(m, rules);
  EXPECT_EQ(find(f, "kernel.known_bad")->level, Level::kUnknown);
  EXPECT_NE(find(f, "kernel.known_bad")->message.find("RHEL 9.8's kernel base"), std::string::npos);
}

// --fail-on only tightens: names add to the default, only -NAME takes one away, and an empty or
// unknown name is refused; no policy passes zero allowed pairs.
TEST(FailPolicy, NamesAddAndOnlyMinusRemoves) {
  EXPECT_EQ(parse_fail_policy("unknown"), (FailPolicy{true, true, true, false}));
  EXPECT_EQ(parse_fail_policy("refused"), FailPolicy{});
  EXPECT_EQ(parse_fail_policy("default"), FailPolicy{});
  EXPECT_EQ(parse_fail_policy("unknown,warn"), (FailPolicy{true, true, true, true}));
  EXPECT_EQ(parse_fail_policy("-stack"), (FailPolicy{true, false, false, false}));
  EXPECT_EQ(parse_fail_policy("-refused,warn"), (FailPolicy{false, true, false, true}));
  for (const char* bad : {"", ",", "nope", "unknown,", "-", "-default", "--stack"})
    EXPECT_THROW(parse_fail_policy(bad), UsageError) << bad;
  EXPECT_EQ(fail_policy_option(parse_fail_policy("-stack,unknown")), "-stack,unknown");
  EXPECT_EQ(*fail_policy_of_words({"refused"}), (FailPolicy{true, false, false, false}));
  EXPECT_FALSE(fail_policy_of_words({"refused", "-stack"}));
  ResultCounts none_allowed;
  none_allowed.pairs = none_allowed.refused = 4;
  EXPECT_EQ(result_for(none_allowed, FailPolicy{false, false, false, false}), Result::kFail);
  ResultCounts some;
  some.pairs = 4;
  some.allowed = 1;
  some.refused = 3;
  EXPECT_EQ(result_for(some, FailPolicy{false, true, false, false}), Result::kPass);
  EXPECT_EQ(result_for(some, FailPolicy{}), Result::kFail);
}

TEST(CheckKernel, CpuRules) {
  Machine m = machine_with("6.8.0", "y");
  m.cpu.vendor_id = "AuthenticAMD";
  m.cpu.family = 0x15;
  EXPECT_EQ(find(check_kernel(m, kernel_rules_for(m, std::nullopt)), "cpu.p2pdma_rule")->level, Level::kWarn);
  m.cpu.family = 0x19;
  EXPECT_EQ(find(check_kernel(m, kernel_rules_for(m, std::nullopt)), "cpu.p2pdma_rule")->level, Level::kInfo);
  m.cpu.vendor_id.clear();
  EXPECT_EQ(find(check_kernel(m, kernel_rules_for(m, std::nullopt)), "cpu.p2pdma_rule")->level, Level::kUnknown);
}

TEST(CheckKernel, VendorKernelsSayWhichTableWasAssumed) {
  Machine m = machine_with("5.14.0-427.42.1.el9_4.x86_64", "y");
  KernelRules rules = kernel_rules_for(m, std::nullopt);
  EXPECT_TRUE(rules.vendor_kernel);
  EXPECT_NE(allowlist_table_note(rules).find("backports"), std::string::npos);
  EXPECT_NE(allowlist_table_note(rules).find("older than 6.1"), std::string::npos);
}

TEST(CheckKernel, TableNoteSaysWhichBasis) {
  KernelRules rules;
  EXPECT_EQ(allowlist_table_note(rules),
            "kernel release unknown: evaluated with the 6.1-6.12 allowlist (verified from source)");
  rules.version = KernelVersion{6, 8, 0};
  rules.table_basis = TableBasis::kVerified;
  EXPECT_EQ(allowlist_table_note(rules), "allowlist as of 6.8 (same table as 6.1-6.12, verified from source)");
  rules.version = KernelVersion{6, 16, 0};
  rules.table_basis = TableBasis::kNewerRowsReported;
  rules.vendor_kernel = true;
  EXPECT_EQ(allowlist_table_note(rules),
            "allowlist as of 6.16 (rows newer than 6.12 are from reports); vendor kernel: backports may add rows to "
            "upstream 6.16's table, so a host bridge not on it is unknown, not refused, until the kernel's own table "
            "is read (`sudo p2pcheck check`, or --what-if-kernel FILE)");
  Machine m = machine_with("6.8.0-142-generic", "y");
  EXPECT_EQ(kernel_rules_for(m, std::nullopt).table_basis, TableBasis::kVerified);
  // 7.3.4's table was read; 7.3.0-7.3.3 and 7.4 lean on reports, each naming the newest table read before.
  rules.vendor_kernel = false;
  for (auto [release, basis, note] :
       {std::tuple{"7.3.4-amd64", TableBasis::kVerified, "allowlist as of 7.3.4 (table read from 7.3.4's source)"},
        std::tuple{"7.3.2-amd64", TableBasis::kNewerRowsReported,
                   "allowlist as of 7.3.2 (rows newer than 6.12 are from reports)"},
        std::tuple{"7.4.1-amd64", TableBasis::kNewerRowsReported,
                   "allowlist as of 7.4.1 (rows newer than 7.3.4 are from reports)"}}) {
    KernelRules seen = kernel_rules_for(machine_with(release, "y"), std::nullopt);
    EXPECT_EQ(seen.table_basis, basis) << release;
    EXPECT_EQ(allowlist_table_note(seen), note) << release;
  }
  EXPECT_EQ(find(check_kernel(m, kernel_rules_for(m, std::nullopt)), "kernel.allowlist_table")->message,
            "allowlist as of 6.8 (same table as 6.1-6.12, verified from source)");
}

// The IOMMU check over a filled state: no Source, the case stated in the struct.
TEST(CheckIommu, StatesFromWhatWasRead) {
  Machine m;
  Topology topo;
  IommuState none;
  none.units_dir = {ReadStatus::kFailed, "", "is a directory"};
  EXPECT_NE(check_iommu(none, m, topo, {}).at(0).message.find("no IOMMU active"), std::string::npos);

  IommuState unknown;  // an import that does not carry the IOMMU marks it unreadable
  unknown.units_dir = {ReadStatus::kFailed, "", "not in an lspci dump"};
  auto f = check_iommu(unknown, m, topo, {});
  EXPECT_NE(f.at(0).message.find("unknown (not in an lspci dump)"), std::string::npos) << f.at(0).message;

  IommuState on;
  on.units = {"dmar0", "dmar1"};
  on.group_types = {"identity"};
  on.type_file = "/sys/kernel/iommu_groups/0/type";
  m.cmdline = "intel_iommu=on iommu=pt";
  f = check_iommu(on, m, topo, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].message,
            "IOMMU on (passthrough, 2 unit(s)), intel_iommu=on iommu=pt: the kernel enables ACS redirect "
            "on every port that has ACS");
  EXPECT_EQ(f[0].evidence.at(1).file, "/sys/kernel/iommu_groups/0/type");
}

TEST(CheckKernelModule, NotAskedOrNotAnswering) {
  PairList pairs;
  ModuleAnswers not_asked;
  EXPECT_TRUE(check_kernel_module(not_asked, false, pairs).empty());  // a replay without recorded answers
  auto f = check_kernel_module(not_asked, true, pairs);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].level, Level::kInfo);
  EXPECT_NE(f[0].message.find("(p2pprobe not loaded)"), std::string::npos);

  ModuleAnswers broken;
  broken.asked = true;
  broken.device = "/dev/p2pprobe";
  broken.error = "/dev/p2pprobe: ioctl VERDICT: No such device";
  f = check_kernel_module(broken, true, pairs);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].level, Level::kUnknown);
  EXPECT_EQ(f[0].evidence.at(0).file, "/dev/p2pprobe");
}

TEST(Cmdline, SplitsParametersAndStopsAtInitArguments) {
  auto params =
      parse_cmdline("BOOT_IMAGE=/vmlinuz ro intel_iommu=on pci=disable_acs_redir=0000:42:02.0 -- --init-arg=1");
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[2].first, "intel_iommu");
  EXPECT_EQ(params[3].second, "disable_acs_redir=0000:42:02.0");
}

TEST(KernelVersion, ParsesReleases) {
  EXPECT_EQ(parse_kernel_version("6.8.0-142-generic")->str(), "6.8");
  EXPECT_EQ(parse_kernel_version("6.12.117")->str(), "6.12.117");
  EXPECT_TRUE((*parse_kernel_version("5.14.0-427.el9") < KernelVersion{6, 1, 0}));
  EXPECT_FALSE(parse_kernel_version("banana"));
}

}  // namespace
}  // namespace p2pcheck

namespace p2pcheck {
namespace {

// The read-once rule: a whole `check` reads every file and lists every directory at most once.
TEST(ReadOnce, FullCheckOfEveryFixtureReadsEachFileOnce) {
  int fixtures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    if (!std::filesystem::exists(entry.path() / "root" / "sys")) continue;
    ++fixtures;
    auto source = open_tree_source((entry.path() / "root").string());
    auto report = run_check(*source, CheckOptions{});
    EXPECT_FALSE(report->pairs.empty()) << entry.path();
    for (const auto& [path, count] : source->access_log().file_reads) EXPECT_EQ(count, 1) << entry.path() << path;
    for (const auto& [path, count] : source->access_log().dir_lists) EXPECT_EQ(count, 1) << entry.path() << path;
  }
  EXPECT_GE(fixtures, 4);
}

}  // namespace
}  // namespace p2pcheck
