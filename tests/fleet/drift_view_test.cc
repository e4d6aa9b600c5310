#include "p2pcheck/fleet/drift_view.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

DriftReport many_pairs(std::size_t n) {
  HostSummary before, after;
  before.host = after.host = "node-1";
  before.input = "base.json";
  after.input = "now.tar.zst";
  before.result = Result::kPass;
  after.result = Result::kFail;
  for (std::size_t i = 0; i < n; ++i) {
    HostPair p;
    p.gpu = "0000:04:00.0";
    p.nvme = "0000:" + std::to_string(10 + i) + ":00.0";
    p.verdict = Verdict::kSupported;
    before.pairs.push_back(p);
    p.verdict = Verdict::kNotSupported;
    p.cause = Cause::kAcsRedirect;
    p.rule = "ACS redirect on 0000:03:09.0";
    after.pairs.push_back(p);
  }
  HostFix fix;
  fix.acs_ports.push_back(*Bdf::parse("0000:03:09.0"));
  after.fix = fix;
  return compare_hosts(before, after);
}

TEST(DriftView, TextListsBoundedAndEndsWithTheAnswer) {
  std::string text = drift_text(many_pairs(60), 50);
  EXPECT_NE(text.find("  worse  0000:04:00.0 <-> 0000:10:00.0: supported -> not_supported (pair.acs_redirect)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  and 10 more (--json lists every one)\n"), std::string::npos);
  EXPECT_NE(text.find("  worse  0000:03:09.0: refused none -> refuses pairs\n"), std::string::npos);
  EXPECT_NE(text.find("\nDIFF: WORSE — ACS redirect on 0000:03:09.0 refuses pairs (not at the baseline); "),
            std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 22), "; result PASS -> FAIL\n");
  // --quiet prints this line alone: the text's own last line, made by the same function.
  const std::string line = drift_result_line(many_pairs(60));
  EXPECT_EQ(text.substr(text.size() - line.size()), line);
  EXPECT_EQ(line.rfind("DIFF: WORSE — ", 0), 0u) << line;
}

TEST(DriftView, JsonHasEveryChange) {
  auto j = drift_json(many_pairs(60));
  EXPECT_EQ(j["schema"], "p2pcheck.diff");
  EXPECT_EQ(j["change"], "worse");
  EXPECT_EQ(j["pairs"].size(), 60u);
  EXPECT_EQ(j["acs_ports"][0]["acs_redirect_after"], true);
  EXPECT_EQ(j["baseline"]["result"], "PASS");
  EXPECT_EQ(j["current"]["result"], "FAIL");
}

TEST(DriftView, NoChange) {
  DriftReport d = many_pairs(0);
  d.after = d.before;
  d.ports.clear();
  d.overall = Change::kSame;
  std::string text = drift_text(d);
  EXPECT_NE(text.find("\nDIFF: SAME — no change; result PASS -> PASS\n"), std::string::npos) << text;
  EXPECT_TRUE(drift_json(d)["worse"].is_null());
}

}  // namespace
}  // namespace p2pcheck
