// The route read off each pair's walk (rules/pair_walk.h, route_words) on the Broadwell switch
// fixture: ACS redirect on switch downstream ports 9 and 11 (and on both root ports), so one pair
// turns in the switch, one is redirected up to the host bridge, one has no common bridge at all.
#include "p2pcheck/report/pair_route.h"

#include <algorithm>
#include <gtest/gtest.h>

#include "p2pcheck/checks/check.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

class PairRouteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_ = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/xeon-broadwell-switch-acs/root");
    report_ = run_check(*source_, CheckOptions{});
  }
  PairWalk route(const char* gpu, const char* nvme) {
    for (const PairDecision& d : report_->pairs)
      if (d.walk.pair().gpu == *Bdf::parse(gpu) && d.walk.pair().nvme == *Bdf::parse(nvme)) return d.walk;
    ADD_FAILURE() << "no pair " << gpu << " " << nvme;
    return {};
  }
  // "lower>upper" for each link, "hb" for the host bridge.
  static std::vector<std::string> links(const PairWalk& r) {
    std::vector<std::string> out;
    for (const RouteLink& l : route_links(r))
      out.push_back(l.lower->bdf.str() + ">" + (l.upper ? l.upper->bdf.str() : "hb"));
    return out;
  }
  std::unique_ptr<Source> source_;
  std::unique_ptr<CheckReport> report_;
};

TEST_F(PairRouteTest, BelowTheSwitchTurnsAtTheUpstreamPort) {
  PairWalk r = route("0000:04:00.0", "0000:06:00.0");
  EXPECT_EQ(r.route, RouteKind::kBelowCommonBridge);
  ASSERT_NE(r.common, nullptr);
  EXPECT_EQ(r.common->bdf.str(), "0000:02:00.0");
  EXPECT_TRUE(r.above_common.empty());
  EXPECT_EQ(links(r), (std::vector<std::string>{"0000:04:00.0>0000:03:08.0", "0000:03:08.0>0000:02:00.0",
                                                "0000:06:00.0>0000:03:10.0", "0000:03:10.0>0000:02:00.0"}));
  EXPECT_TRUE(r.host_bridges.empty());
  EXPECT_EQ(route_words(r), "in switch");
}

TEST_F(PairRouteTest, AcsRedirectSendsThePairUpThroughTheRootPort) {
  // Port 9 (above GPU 05) redirects: the common bridge is the switch, but the traffic goes up.
  PairWalk r = route("0000:05:00.0", "0000:06:00.0");
  EXPECT_EQ(r.route, RouteKind::kRedirected);
  EXPECT_EQ(links(r), (std::vector<std::string>{"0000:05:00.0>0000:03:09.0", "0000:03:09.0>0000:02:00.0",
                                                "0000:06:00.0>0000:03:10.0", "0000:03:10.0>0000:02:00.0",
                                                "0000:02:00.0>0000:00:02.0", "0000:00:02.0>hb"}));
  for (const RouteLink& l : route_links(r)) EXPECT_FALSE(l.only_if_redirected);
  EXPECT_EQ(r.host_bridges, std::vector<std::string>{"0000:00"});
  EXPECT_EQ(route_words(r), "redirected to host");
  EXPECT_EQ(route_functions(r).size(), 6u);
}

TEST_F(PairRouteTest, WithoutACommonBridgeBothChainsReachTheHostBridge) {
  PairWalk r = route("0000:04:00.0", "0000:01:00.0");
  EXPECT_EQ(r.route, RouteKind::kRootComplex);
  EXPECT_EQ(r.common, nullptr);
  EXPECT_EQ(links(r), (std::vector<std::string>{"0000:04:00.0>0000:03:08.0", "0000:03:08.0>0000:02:00.0",
                                                "0000:02:00.0>0000:00:02.0", "0000:00:02.0>hb",
                                                "0000:01:00.0>0000:00:01.0", "0000:00:01.0>hb"}));
  EXPECT_EQ(r.host_bridges, std::vector<std::string>{"0000:00"});
  EXPECT_EQ(route_words(r), "via host bridge");
}

TEST_F(PairRouteTest, FunctionsOnRoutesKeepTheBridgesAboveThem) {
  CheckOptions options;
  options.selection.gpu = {"04:00.0"};
  options.selection.nvme = {"06:00.0"};
  auto report = run_check(*source_, options);
  std::set<Bdf> on = functions_on_routes(report->topo, report->pairs);
  std::vector<std::string> names;
  for (const Bdf& b : on) names.push_back(b.str());
  // The pair turns in the switch; the root port above it keeps the tree rooted.
  EXPECT_EQ(names, (std::vector<std::string>{"0000:00:02.0", "0000:02:00.0", "0000:03:08.0", "0000:03:10.0",
                                             "0000:04:00.0", "0000:06:00.0"}));
}

// The non-root EPYC view reads no ACS: the switch pairs may turn there or go up.
TEST(PairRoute, UnreadableAcsMarksTheLinksAboveTheSwitchAsOnlyIfRedirected) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu-nonroot/root");
  auto report = run_check(*source, CheckOptions{});
  bool seen = false;
  for (const PairDecision& d : report->pairs) {
    const PairWalk& r = d.walk;
    if (r.route != RouteKind::kRedirectUnknown) continue;
    seen = true;
    ASSERT_NE(r.common, nullptr);
    std::vector<const Function*> above = report->topo.upstream_chain(*r.common);  // the turn and its bridges
    EXPECT_EQ(r.above_common, std::vector<const Function*>(above.begin() + 1, above.end()));
    EXPECT_EQ(r.host_bridges, std::vector<std::string>{r.common->host_bridge});
    for (const RouteLink& l : route_links(r)) {
      bool is_above = std::find(above.begin(), above.end(), l.lower) != above.end();
      EXPECT_EQ(l.only_if_redirected, is_above) << l.lower->bdf.str();
    }
    EXPECT_EQ(route_words(r), "in switch or via host");
  }
  EXPECT_TRUE(seen) << "no pair with unreadable ACS below a common bridge";
}

}  // namespace
}  // namespace p2pcheck
