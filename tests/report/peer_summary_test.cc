// PeerSummaries: what each GPU and NVMe of a picture says of its peers.
#include "p2pcheck/report/peer_summary.h"

#include <gtest/gtest.h>

#include "p2pcheck/checks/check.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

using Lines = std::vector<std::string>;

PeerSummaries summaries_of(const CheckReport& report) {
  PeerSummaries s(report.inv);
  for (const PairDecision& d : report.pairs) s.add(d);
  return s;
}

TEST(PeerSummaries, BroadwellSwitchGroupsPeersByVerdictAndRoute) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/xeon-broadwell-switch-acs/root");
  auto report = run_check(*source, CheckOptions{});
  PeerSummaries s = summaries_of(*report);
  auto at = [&](const char* bdf) { return s.lines(*Bdf::parse(bdf)); };
  EXPECT_EQ(at("0000:04:00.0"),
            (Lines{"allowed in switch: nvme0", "refused redirected to host: nvme1", "refused via host bridge: nvme2"}));
  EXPECT_EQ(at("0000:05:00.0"), (Lines{"refused redirected to host: nvme0, nvme1", "refused via host bridge: nvme2"}));
  EXPECT_EQ(at("0000:06:00.0"), (Lines{"allowed in switch: 04:00.0", "refused redirected to host: 05:00.0"}));
  EXPECT_EQ(at("0000:01:00.0"), (Lines{"refused via host bridge: all 2 GPUs"}));
  EXPECT_TRUE(at("0000:03:08.0").empty()) << "a port is in no pair";
}

TEST(PeerSummaries, ManyPeersAreCountedPastTheFirstNames) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  auto report = run_check(*source, CheckOptions{});
  Lines lines = summaries_of(*report).lines(*Bdf::parse("0000:03:00.0"));
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0], "allowed redirected to host: nvme0, nvme1");
  EXPECT_EQ(lines[1].rfind("allowed via host bridge: nvme2, nvme3 +", 0), 0u) << lines[1];
}

}  // namespace
}  // namespace p2pcheck
