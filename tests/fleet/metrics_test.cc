#include "p2pcheck/fleet/metrics.h"

#include <gtest/gtest.h>
#include <regex>
#include <set>

namespace p2pcheck {
namespace {

HostSummary host(std::size_t pairs) {
  HostSummary h;
  h.host = "node\"1\\\n";  // hostile: a quote, a backslash, a newline
  h.kernel = "6.8.0";
  h.format = "capture";
  h.result = Result::kFail;
  for (std::size_t i = 0; i < pairs; ++i) {
    HostPair p;
    p.gpu = "0000:04:00." + std::to_string(i % 8);
    p.nvme = "0000:" + std::to_string(10 + i / 8) + ":00.0";
    p.nvme_name = "nvme" + std::to_string(i);
    p.verdict = i % 3 == 0 ? Verdict::kSupported : i % 3 == 1 ? Verdict::kNotSupported : Verdict::kUnknown;
    h.pairs.push_back(p);
  }
  return h;
}

std::size_t samples(const std::string& text, const std::string& name) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find("\n" + name + "{", at)) != std::string::npos; ++at) ++n;
  return n;
}

TEST(Metrics, LabelValuesEscaped) {
  EXPECT_EQ(prometheus_label_value("a\"b\\c"), "a\\\"b\\\\c");
  // A newline is first made printable (\n as two characters), whose backslash is then escaped.
  EXPECT_EQ(prometheus_label_value("x\ny"), "x\\\\ny");
  EXPECT_EQ(prometheus_label_value(std::string("\xff", 1)), "\\\\xff");
  std::string text = prometheus_text(host(3), MetricsOptions{});
  EXPECT_NE(text.find("p2pcheck_info{host=\"node\\\"1\\\\\\\\n\","), std::string::npos) << text;
}

// Every line is a comment or `name{labels} value`, every family has HELP and TYPE, and the one
// result of the host is 1.
TEST(Metrics, TheExpositionGrammar) {
  MetricsOptions o;
  o.captured_at = 1796641200.5;
  std::string text = prometheus_text(host(9), o);
  std::regex sample(R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.]+|NaN)$)");
  std::set<std::string> typed;
  std::size_t at = 0, end;
  while ((end = text.find('\n', at)) != std::string::npos) {
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.rfind("# TYPE ", 0) == 0) typed.insert(line.substr(7, line.find(' ', 7) - 7));
    if (line[0] == '#') continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    EXPECT_TRUE(typed.count(line.substr(0, line.find_first_of("{ ")))) << line;
  }
  EXPECT_NE(text.find("\np2pcheck_result{result=\"FAIL\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("\np2pcheck_result{result=\"PASS\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("\np2pcheck_pairs{verdict=\"allowed\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("\np2pcheck_capture_timestamp_seconds 1796641200.500\n"), std::string::npos);
  EXPECT_NE(text.find("\np2pcheck_pair_allowed{gpu=\"0000:04:00.0\",nvme=\"0000:10:00.0\",nvme_name=\"nvme0\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(samples(text, "p2pcheck_pair_refused"), 9u);
  EXPECT_NE(text.find("\np2pcheck_known_bad_kernel{state=\"unknown\"} 1\n"), std::string::npos);
  EXPECT_EQ(text.find("p2pcheck_drift_worse"), std::string::npos);  // no baseline, no drift
}

TEST(Metrics, CardinalityBounded) {
  MetricsOptions o;
  o.max_pair_series = 64;
  std::string text = prometheus_text(host(65), o);
  EXPECT_EQ(samples(text, "p2pcheck_pair_allowed"), 0u);
  EXPECT_NE(text.find("\np2pcheck_pair_series_limited 1\n"), std::string::npos);
  EXPECT_NE(text.find("# 65 pairs exceed the bound of 64"), std::string::npos);
  EXPECT_NE(text.find("\np2pcheck_pairs{verdict=\"refused\"} 22\n"), std::string::npos);
  std::string under = prometheus_text(host(64), o);
  EXPECT_EQ(samples(under, "p2pcheck_pair_allowed"), 64u);
  EXPECT_NE(under.find("\np2pcheck_pair_series_limited 0\n"), std::string::npos);
}

TEST(Metrics, DriftGauges) {
  HostSummary before = host(3), after = host(3);
  after.pairs[0].verdict = Verdict::kNotSupported;
  DriftReport d = compare_hosts(before, after);
  MetricsOptions o;
  o.drift = &d;
  std::string text = prometheus_text(after, o);
  EXPECT_NE(text.find("\np2pcheck_drift_worse 1\n"), std::string::npos);
  EXPECT_NE(text.find("\np2pcheck_drift_changed{what=\"pairs_worse\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace p2pcheck
