// The kernel's walk (calc_map_type_and_dist, p2pdma.c) on the small switch machine: common bridge,
// distances, the ACS checks in the kernel's order, and the route the reports read off it.
#include <gtest/gtest.h>

#include "p2pcheck/rules/p2pdma.h"
#include "p2pcheck/rules/pair_walk.h"
#include "small_machine.h"

namespace p2pcheck {
namespace {

class KernelWalk : public testing::SmallMachine {};

TEST_F(KernelWalk, UnderOneSwitch) {
  PairWalk w = calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:04:00.0"));
  ASSERT_TRUE(w.common);
  EXPECT_EQ(w.common->bdf.str(), "0000:01:00.0");
  EXPECT_EQ(w.distance, 4);
  // The kernel checks GPU, its downstream port and the common upstream port, then the NVMe side
  // from the NVMe up (check_b_path_acs): the order its warning lists them in.
  std::vector<std::string> checked;
  for (const Function* f : w.acs_checked) checked.push_back(f->bdf.str());
  EXPECT_EQ(checked,
            (std::vector<std::string>{"0000:03:00.0", "0000:02:01.0", "0000:01:00.0", "0000:04:00.0", "0000:02:02.0"}));
  ASSERT_EQ(w.acs_redirect.size(), 1u);
  EXPECT_EQ(w.acs_redirect[0]->bdf.str(), "0000:02:01.0");
  // The redirect sends the pair up from the switch to its host bridge and back.
  EXPECT_EQ(w.map_type, MapType::kThruHostBridge);
  EXPECT_EQ(w.route, RouteKind::kRedirected);
  ASSERT_EQ(w.above_common.size(), 1u);
  EXPECT_EQ(w.above_common[0]->bdf.str(), "0000:00:01.0");
  EXPECT_EQ(w.host_bridges, std::vector<std::string>{"0000:00"});
}

TEST_F(KernelWalk, EitherWayRoundOnlyTheAcsOrderDiffers) {
  PairWalk there = calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:04:00.0"));
  PairWalk back = calc_map_type_and_dist(topo_, fn("0000:04:00.0"), fn("0000:03:00.0"));
  EXPECT_EQ(back.common, there.common);
  EXPECT_EQ(back.distance, there.distance);
  EXPECT_EQ(back.map_type, there.map_type);
  EXPECT_EQ(back.acs_checked.front()->bdf.str(), "0000:04:00.0");  // the provider's side first
  EXPECT_EQ(back.acs_checked.back()->bdf.str(), "0000:02:01.0");
}

TEST_F(KernelWalk, HopsGoUpThenDown) {
  PairWalk w = calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:05:00.0"));
  std::vector<std::string> roles;
  for (const Hop& h : walk_hops(inv_, w)) roles.push_back(h.role);
  EXPECT_EQ(roles, (std::vector<std::string>{"GPU", "switch downstream port", "switch upstream port", "root port",
                                             "host bridge", "root port", "NVMe"}));
  EXPECT_EQ(w.host_bridges, std::vector<std::string>{"0000:00"});
  EXPECT_EQ(w.route, RouteKind::kRootComplex);
  EXPECT_TRUE(w.above_common.empty());
  EXPECT_EQ(walk_functions(w).size(), 6u);
}

TEST_F(KernelWalk, DistancesMatchTheKernel) {
  EXPECT_EQ(calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:03:00.0")).distance, 0);
  EXPECT_EQ(calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:03:00.1")).distance, 2);
  // A VF counts from its PF's upstream bridge.
  PairWalk vf = calc_map_type_and_dist(topo_, fn("0000:04:00.0"), fn("0000:04:00.2"));
  EXPECT_EQ(vf.distance, 2);
  EXPECT_EQ(vf.common->bdf.str(), "0000:02:02.0");
  // Different root ports: no common bridge; both whole chains.
  PairWalk split = calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:05:00.0"));
  EXPECT_FALSE(split.common);
  EXPECT_EQ(split.distance, 6);
  EXPECT_TRUE(split.acs_checked.empty());
  // Root-bus devices have no upstream bridge at all.
  PairWalk root = calc_map_type_and_dist(topo_, fn("0000:00:04.0"), fn("0000:00:00.0"));
  EXPECT_FALSE(root.common);
  EXPECT_EQ(root.distance, 2);
}

// The kernel's loop as p2pdma.c writes it: the first device of a's chain that is also on b's, and
// dist_a, dist_b counted on the way (both whole chains when they never meet).
ChainMeet kernel_loop(const std::vector<const Function*>& a_chain, const std::vector<const Function*>& b_chain) {
  for (std::size_t i = 0; i < a_chain.size(); ++i)
    for (std::size_t j = 0; j < b_chain.size(); ++j)
      if (a_chain[i] == b_chain[j]) return {true, i, j};
  return {false, a_chain.size(), b_chain.size()};
}

void expect_meets_as_the_kernel(const Topology& topo, const std::string& what) {
  for (const auto& a : topo.functions)
    for (const auto& b : topo.functions) {
      auto a_chain = topo.upstream_chain(a.second), b_chain = topo.upstream_chain(b.second);
      ChainMeet want = kernel_loop(a_chain, b_chain), got = meet_in_chains(a_chain, b_chain);
      EXPECT_EQ(got.met, want.met) << what << a.first.str() << " " << b.first.str();
      EXPECT_EQ(got.a, want.a) << what << a.first.str() << " " << b.first.str();
      EXPECT_EQ(got.b, want.b) << what << a.first.str() << " " << b.first.str();
      PairWalk walk = calc_map_type_and_dist(topo, a.second, b.second);
      EXPECT_EQ(walk.common, want.met ? a_chain[want.a] : nullptr);
      EXPECT_EQ(walk.distance, static_cast<int>(want.a + want.b)) << what << a.first.str() << " " << b.first.str();
      EXPECT_EQ(walk.provider_side.size(), want.a);
      EXPECT_EQ(walk.client_side.size(), want.b);
    }
}

// meet_in_chains() compares the chains from the root end; the kernel's loop from the devices up.
// Both find the same device at the same places, also when parent links loop and chains are cut.
TEST_F(KernelWalk, MeetInChainsMeetsWhereTheKernelsLoopDoes) {
  expect_meets_as_the_kernel(topo_, "tree: ");
  topo_.functions.at(*Bdf::parse("0000:00:01.0")).parent = Bdf::parse("0000:02:01.0");  // a loop
  EXPECT_EQ(topo_.upstream_chain(fn("0000:03:00.0")).size(), 256u);
  expect_meets_as_the_kernel(topo_, "loop: ");
}

}  // namespace
}  // namespace p2pcheck
