#include "p2pcheck/fleet/drift.h"

#include <gtest/gtest.h>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/source.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

HostPair pair(const std::string& gpu, const std::string& nvme, Verdict v, Cause cause = Cause::kNone) {
  HostPair p;
  p.gpu = gpu;
  p.nvme = nvme;
  p.nvme_name = "nvme" + nvme.substr(5, 2);
  p.verdict = v;
  p.cause = cause;
  return p;
}

HostSummary host(Result r, std::vector<HostPair> pairs, std::vector<std::string> acs_ports = {}) {
  HostSummary h;
  h.host = "node-1";
  h.input = "in.json";
  h.result = r;
  h.kernel = "6.8.0";
  h.pairs = std::move(pairs);
  HostFix fix;
  for (const auto& p : acs_ports) fix.acs_ports.push_back(*Bdf::parse(p));
  h.fix = fix;
  return h;
}

const std::string kGpu = "0000:04:00.0", kNvme = "0000:06:00.0", kNvme2 = "0000:07:00.0";

TEST(Drift, SameResultIsNoChange) {
  HostSummary a = host(Result::kPass, {pair(kGpu, kNvme, Verdict::kSupported)});
  DriftReport d = compare_hosts(a, a);
  EXPECT_EQ(d.overall, Change::kSame);
  EXPECT_FALSE(d.changed());
  EXPECT_EQ(worse_summary(d), "");
}

// The case: ACS redirect came back on a switch port after qualification.
TEST(Drift, AcsRedirectBackIsWorseAndNamed) {
  HostSummary before = host(Result::kPass, {pair(kGpu, kNvme, Verdict::kSupported)});
  HostSummary after =
      host(Result::kFail, {pair(kGpu, kNvme, Verdict::kNotSupported, Cause::kAcsRedirect)}, {"0000:03:09.0"});
  DriftReport d = compare_hosts(before, after);
  EXPECT_EQ(d.overall, Change::kWorse);
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].port, "0000:03:09.0");
  EXPECT_TRUE(d.ports[0].redirect_after);
  ASSERT_EQ(d.pairs.size(), 1u);
  EXPECT_EQ(d.pairs[0].change, Change::kWorse);
  std::string why = worse_summary(d);
  EXPECT_EQ(why.rfind("ACS redirect on 0000:03:09.0 refuses pairs (not at the baseline); 0000:04:00.0 <-> nvme06 now "
                      "refused",
                      0),
            0u)
      << why;
  // And back: the fix is better, nothing worse.
  DriftReport back = compare_hosts(after, before);
  EXPECT_EQ(back.overall, Change::kBetter);
  EXPECT_EQ(worse_summary(back), "");
}

TEST(Drift, VanishedAndUndecidedPairsAreWorse) {
  HostSummary before =
      host(Result::kPass, {pair(kGpu, kNvme, Verdict::kSupported), pair(kGpu, kNvme2, Verdict::kSupported)});
  HostSummary after = host(Result::kUnknown, {pair(kGpu, kNvme, Verdict::kUnknown, Cause::kAcsUnknown)});
  DriftReport d = compare_hosts(before, after);
  EXPECT_EQ(d.overall, Change::kWorse);
  ASSERT_EQ(d.pairs.size(), 2u);
  EXPECT_EQ(d.pairs[1].nvme, kNvme2);
  EXPECT_FALSE(d.pairs[1].after.has_value());
  EXPECT_NE(worse_summary(d).find("and 1 more pair(s) worse"), std::string::npos);
}

TEST(Drift, FindingLevelsAndKernel) {
  HostSummary before = host(Result::kPass, {pair(kGpu, kNvme, Verdict::kSupported)});
  HostSummary after = before;
  after.kernel = "6.9.0";
  HostFinding link{"link.downtrained", Level::kWarn, "0000:04:00.0", "runs at 8 GT/s x8 of 16 GT/s x16", "", true, ""};
  after.findings.push_back(link);
  DriftReport d = compare_hosts(before, after);
  EXPECT_TRUE(d.changed());
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.findings[0].change, Change::kSame);  // listed; a warning fails nothing by default
  after.fail_on.warn = true;                       // --fail-on warn: it does
  d = compare_hosts(before, after);
  EXPECT_EQ(d.findings[0].change, Change::kWorse);
  EXPECT_EQ(worse_summary(d), "link.downtrained WARN: 0000:04:00.0");
  after.findings[0].level = Level::kFail;
  after.fail_on = FailPolicy{};
  after.fail_on.stack = false;  // --fail-on=-stack: a failing check is not counted
  EXPECT_EQ(compare_hosts(before, after).overall, Change::kSame);
  after.fail_on.warn = false;
  // A finding that does not count toward the result is no drift; INFO is none either.
  after.findings[0].concerns = false;
  after.findings.push_back({"kernel.release", Level::kInfo, "", "6.9.0", "", true, ""});
  DriftReport quiet = compare_hosts(before, after);
  EXPECT_TRUE(quiet.findings.empty());
  EXPECT_EQ(quiet.overall, Change::kSame);
  EXPECT_TRUE(quiet.changed());  // the kernel release differs
}

TEST(Drift, SummaryIsBoundedOnACharacterBoundary) {
  HostSummary before = host(Result::kPass, {pair(kGpu, kNvme, Verdict::kSupported)});
  HostSummary after = before;
  after.findings.push_back({"storage.stack", Level::kFail, std::string(300, 'x') + "é", "", "", true, ""});
  after.result = Result::kFail;
  std::string why = worse_summary(compare_hosts(before, after), 60);
  EXPECT_LE(why.size(), 60u);
  EXPECT_EQ(why.substr(why.size() - 3), "...");
}

// Real reports: the Broadwell fixture against itself under a kernel that refuses everything.
TEST(Drift, OnAFixtureUnderAnOldKernel) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/xeon-broadwell-switch-acs/root");
  auto now = run_check(*source, CheckOptions{});
  CheckOptions old;
  old.what_if_kernel = "4.19";
  auto then = run_check(*source, old);
  HostSummary a = summarize_report(*now, nullptr, "now"), b = summarize_report(*then, nullptr, "then");
  DriftReport d = compare_hosts(a, b);
  EXPECT_EQ(d.overall, Change::kWorse);
  EXPECT_FALSE(d.pairs.empty());
  // And back: the pairs come back. The ACS ports refuse pairs now that the kernel no longer
  // refuses them all: listed, but the pairs decide (better).
  DriftReport back = compare_hosts(b, a);
  EXPECT_EQ(back.overall, Change::kBetter) << worse_summary(back);
  ASSERT_FALSE(back.ports.empty());
  EXPECT_EQ(back.ports[0].change, Change::kSame);
}

}  // namespace
}  // namespace p2pcheck
