#include "p2pcheck/fleet/node_features.h"

#include <gtest/gtest.h>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/source.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

HostPair pair(const std::string& gpu, Verdict v, const std::string& locality) {
  HostPair p;
  p.gpu = gpu;
  p.nvme = "0000:06:00.0";
  p.verdict = v;
  p.locality = locality;
  return p;
}

HostSummary host(Result r, std::vector<HostPair> pairs) {
  HostSummary h;
  h.result = r;
  h.pairs = std::move(pairs);
  return h;
}

TEST(NodeFeatures, OneP2pClassFromTheResult) {
  EXPECT_EQ(slurm_features_text(node_features(host(Result::kPass, {pair("a", Verdict::kSupported, "same_switch")}))),
            "p2p_gpu_nvme\np2p_same_switch\n");
  EXPECT_EQ(slurm_features_text(node_features(host(Result::kFail, {pair("a", Verdict::kSupported, "same_numa_node"),
                                                                   pair("b", Verdict::kNotSupported, "x")}))),
            "p2p_partial\n");
  EXPECT_EQ(slurm_features_text(node_features(host(Result::kFail, {pair("a", Verdict::kNotSupported, "same_switch")}))),
            "p2p_none\n");
  EXPECT_EQ(slurm_features_text(node_features(host(Result::kNoPairs, {}))), "p2p_none\n");
  // UNKNOWN is its own feature, never one a job asks for: not p2p_gpu_nvme, not p2p_same_switch.
  EXPECT_EQ(slurm_features_text(node_features(host(Result::kUnknown, {pair("a", Verdict::kSupported, "same_switch"),
                                                                      pair("a", Verdict::kUnknown, "unknown")}))),
            "p2p_unknown\np2p_same_switch\n");
}

TEST(NodeFeatures, SameSwitchIsTheWeakestGpus) {
  auto f = node_features(host(Result::kPass, {pair("a", Verdict::kSupported, "same_switch"),
                                              pair("b", Verdict::kSupported, "same_numa_node")}));
  EXPECT_EQ(f.same_switch, Tristate::kNo);
  f = node_features(host(Result::kUnknown,
                         {pair("a", Verdict::kSupported, "same_switch"), pair("b", Verdict::kUnknown, "same_switch")}));
  EXPECT_EQ(f.same_switch, Tristate::kUnknown);
  EXPECT_EQ(slurm_features_text(f), "p2p_unknown\n");
}

TEST(NodeFeatures, KnownBadKernel) {
  HostSummary h = host(Result::kFail, {pair("a", Verdict::kNotSupported, "same_switch")});
  EXPECT_EQ(node_features(h).known_bad_kernel, Tristate::kUnknown);
  h.findings.push_back({"kernel.known_bad", Level::kPass, "", "", "", true, ""});
  EXPECT_EQ(node_features(h).known_bad_kernel, Tristate::kNo);
  h.findings.push_back({"kernel.known_bad", Level::kFail, "", "", "", true, ""});
  EXPECT_EQ(node_features(h).known_bad_kernel, Tristate::kYes);
}

// NFD's grammar: name=value lines with a fixed vocabulary, the expiry directive, under 64 kB.
TEST(NodeFeatures, NfdFileOnAFixture) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  auto report = run_check(*source, CheckOptions{});
  HostSummary s = summarize_report(*report, nullptr, "x");
  std::string text = nfd_features_text(node_features(s), rfc3339_utc(1796641200));
  EXPECT_LT(text.size(), 65536u);
  EXPECT_NE(text.find("\n# +expiry-time=2026-12-07T11:00:00Z\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nfeature.node.kubernetes.io/p2pcheck.result=" + std::string(to_string(s.result)) + "\n"),
            std::string::npos);
  std::size_t lines = 0;
  for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
    std::string line = text.substr(at, end - at);
    if (line[0] == '#') continue;
    ++lines;
    auto eq = line.find('=');
    ASSERT_NE(eq, std::string::npos) << line;
    std::string name = line.substr(line.find('/') + 1, eq - line.find('/') - 1), value = line.substr(eq + 1);
    EXPECT_LE(name.size(), 63u);
    EXPECT_LE(value.size(), 63u);
    for (char c : value) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  }
  EXPECT_EQ(lines, 7u);
  EXPECT_EQ(rfc3339_utc(0), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace p2pcheck
