#include "p2pcheck/fleet/saved_result.h"

#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

#include "p2pcheck/fleet/fleet.h"
#include "p2pcheck/source/json_read.h"
#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

HostPair pair_of(Verdict v) {
  HostPair p;
  p.verdict = v;
  return p;
}

HostFinding finding_of(Level level, bool concerns = true) {
  HostFinding f;
  f.id = "x.y";
  f.level = level;
  f.concerns = concerns;
  return f;
}

HostSummary summary(std::vector<HostPair> pairs, std::vector<HostFinding> findings = {}) {
  HostSummary s;
  s.pairs = std::move(pairs);
  s.findings = std::move(findings);
  return s;
}

// README's RESULT table, one row at a time.
TEST(SavedResult, TheResultTable) {
  EXPECT_EQ(result_from_pairs_and_findings(summary({})), Result::kNoPairs);
  EXPECT_EQ(result_from_pairs_and_findings(summary({}, {finding_of(Level::kFail)})), Result::kNoPairs);
  EXPECT_EQ(result_from_pairs_and_findings(summary({pair_of(Verdict::kSupported)})), Result::kPass);
  EXPECT_EQ(result_from_pairs_and_findings(summary({pair_of(Verdict::kSupported)}, {finding_of(Level::kWarn)})),
            Result::kPass);
  EXPECT_EQ(result_from_pairs_and_findings(summary({pair_of(Verdict::kSupported), pair_of(Verdict::kNotSupported)})),
            Result::kFail);
  EXPECT_EQ(result_from_pairs_and_findings(summary({pair_of(Verdict::kSupported)}, {finding_of(Level::kFail)})),
            Result::kFail);
  // A failing finding that does not concern the selected pairs does not fail them.
  EXPECT_EQ(result_from_pairs_and_findings(summary({pair_of(Verdict::kSupported)}, {finding_of(Level::kFail, false)})),
            Result::kPass);
  EXPECT_EQ(result_from_pairs_and_findings(summary({pair_of(Verdict::kSupported), pair_of(Verdict::kUnknown)})),
            Result::kUnknown);
  EXPECT_EQ(result_from_pairs_and_findings(summary({pair_of(Verdict::kSupported)}, {finding_of(Level::kUnknown)})),
            Result::kUnknown);
  EXPECT_EQ(result_from_pairs_and_findings(summary({pair_of(Verdict::kUnknown), pair_of(Verdict::kNotSupported)})),
            Result::kFail);
}

// A report judged under --fail-on is judged again under the same policy, not the default.
TEST(SavedResult, UnderTheReportsOwnFailOn) {
  HostSummary s = summary({pair_of(Verdict::kSupported)}, {finding_of(Level::kFail)});
  EXPECT_EQ(result_from_pairs_and_findings(s), Result::kFail);
  s.fail_on = *fail_policy_of_words({"refused"});  // as the saved `fail_on` names it: exactly these
  EXPECT_EQ(result_from_pairs_and_findings(s), Result::kPass);
  s = summary({pair_of(Verdict::kSupported)}, {finding_of(Level::kWarn)});
  s.fail_on = *fail_policy_of_words({"refused", "stack", "warn"});
  EXPECT_EQ(result_from_pairs_and_findings(s), Result::kFail);
}

TEST(SavedResult, ADisagreementIsSaidAsAFinding) {
  HostSummary s = summary({pair_of(Verdict::kNotSupported)});
  s.input = "n1.json";
  s.result = Result::kPass;
  recompute_saved_result(s);
  EXPECT_EQ(s.result, Result::kFail);
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].id, "fleet.saved_result");
  EXPECT_EQ(s.findings[0].level, Level::kUnknown);
  EXPECT_NE(s.findings[0].message.find("says PASS, but its pairs and findings give FAIL"), std::string::npos);
  HostSummary agreed = summary({pair_of(Verdict::kSupported)});
  agreed.result = Result::kPass;
  recompute_saved_result(agreed);
  EXPECT_EQ(agreed.result, Result::kPass);
  EXPECT_TRUE(agreed.findings.empty());
}

std::string read_text(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Issue 33: fleet took a saved check --json's `result: PASS` as written, whatever its pairs said.
TEST(SavedResult, FleetJudgesAForgedPassAgain) {
  auto doc = parse_outside_json(
      read_text(std::string(P2PCHECK_SOURCE_DIR) + "/fixtures/intel-xeon-broadwell/expected/check.json"), "check.json");
  ASSERT_TRUE(doc);
  ASSERT_EQ((*doc)["result"], "FAIL");
  (*doc)["result"] = "PASS";
  testing::TempDir dir;
  dir.write("forged.json", doc->dump());
  HostSummary forged = read_host(dir.path() + "/forged.json", FleetOptions{});
  EXPECT_EQ(forged.result, Result::kFail);
  EXPECT_EQ(forged.findings.back().id, "fleet.saved_result");
  // No GPU, NVMe or pair at all, but PASS.
  (*doc)["pairs"] = nlohmann::ordered_json::array();
  (*doc)["gpus"] = nlohmann::ordered_json::array();
  (*doc)["nvme"] = nlohmann::ordered_json::array();
  dir.write("empty.json", doc->dump());
  FleetReport r = run_fleet({dir.path() + "/empty.json"}, {}, FleetOptions{});
  ASSERT_EQ(r.hosts.size(), 1u);
  EXPECT_EQ(r.hosts[0].result, Result::kNoPairs);
  EXPECT_EQ(r.result, FleetResult::kNoPairs);  // and the disagreement is listed among the unknowns
  ASSERT_EQ(r.unknowns.size(), 1u);
  EXPECT_EQ(r.unknowns[0].cause, "fleet.saved_result");
}

}  // namespace
}  // namespace p2pcheck
