// The kernel's walk (calc_map_type_and_dist, p2pdma.c) on the small switch machine: common bridge,
// distances, the ACS checks in the kernel's order, and agreement with the route the reports draw.
#include <gtest/gtest.h>

#include "p2pcheck/model/route.h"
#include "p2pcheck/rules/p2pdma.h"
#include "small_machine.h"

namespace p2pcheck {
namespace {

class KernelWalk : public testing::SmallMachine {};

TEST_F(KernelWalk, UnderOneSwitch) {
  P2pWalk w = calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:04:00.0"));
  ASSERT_TRUE(w.common);
  EXPECT_EQ(w.common->bdf.str(), "0000:01:00.0");
  EXPECT_EQ(w.distance, 4);
  // The kernel checks GPU, its downstream port and the common upstream port, then the NVMe side.
  ASSERT_EQ(w.acs_checked.size(), 5u);
  EXPECT_EQ(w.acs_checked[1]->bdf.str(), "0000:02:01.0");
  ASSERT_EQ(w.acs_redirect.size(), 1u);
  EXPECT_EQ(w.acs_redirect[0]->bdf.str(), "0000:02:01.0");
}

TEST_F(KernelWalk, DistancesMatchTheKernel) {
  EXPECT_EQ(calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:03:00.0")).distance, 0);
  EXPECT_EQ(calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:03:00.1")).distance, 2);
  // A VF counts from its PF's upstream bridge.
  P2pWalk vf = calc_map_type_and_dist(topo_, fn("0000:04:00.0"), fn("0000:04:00.2"));
  EXPECT_EQ(vf.distance, 2);
  EXPECT_EQ(vf.common->bdf.str(), "0000:02:02.0");
  // Different root ports: no common bridge; both whole chains.
  P2pWalk split = calc_map_type_and_dist(topo_, fn("0000:03:00.0"), fn("0000:05:00.0"));
  EXPECT_FALSE(split.common);
  EXPECT_EQ(split.distance, 6);
  EXPECT_TRUE(split.acs_checked.empty());
  // Root-bus devices have no upstream bridge at all.
  P2pWalk root = calc_map_type_and_dist(topo_, fn("0000:00:04.0"), fn("0000:00:00.0"));
  EXPECT_FALSE(root.common);
  EXPECT_EQ(root.distance, 2);
}

TEST_F(KernelWalk, RouteMeetsWhereTheKernelsWalkMeets) {
  const char* pairs[][2] = {{"0000:03:00.0", "0000:04:00.0"},
                            {"0000:03:00.0", "0000:03:00.1"},
                            {"0000:04:00.0", "0000:04:00.2"},
                            {"0000:03:00.0", "0000:05:00.0"}};
  for (const auto& [a, b] : pairs) {
    PairPath route = describe_path(topo_, inv_, {*Bdf::parse(a), *Bdf::parse(b)});
    P2pWalk walk = calc_map_type_and_dist(topo_, fn(a), fn(b));
    EXPECT_EQ(route.common, walk.common) << a << " " << b;
    EXPECT_EQ(route.distance, walk.distance) << a << " " << b;
    EXPECT_EQ(route.gpu_side, walk.provider_side) << a << " " << b;
    EXPECT_EQ(route.nvme_side, walk.client_side) << a << " " << b;
  }
}

// The kernel's loop as p2pdma.c writes it: the first device of a's chain that is also on b's.
ChainMeet kernel_loop(const std::vector<const Function*>& a_chain, const std::vector<const Function*>& b_chain) {
  for (std::size_t i = 0; i < a_chain.size(); ++i)
    for (std::size_t j = 0; j < b_chain.size(); ++j)
      if (a_chain[i] == b_chain[j]) return {true, i, j};
  return {};
}

void expect_meets_as_the_kernel(const Topology& topo, const std::string& what) {
  for (const auto& a : topo.functions)
    for (const auto& b : topo.functions) {
      auto a_chain = topo.upstream_chain(a.second), b_chain = topo.upstream_chain(b.second);
      ChainMeet want = kernel_loop(a_chain, b_chain), got = meet_in_chains(a_chain, b_chain);
      EXPECT_EQ(got.met, want.met) << what << a.first.str() << " " << b.first.str();
      EXPECT_EQ(got.a, want.a) << what << a.first.str() << " " << b.first.str();
      EXPECT_EQ(got.b, want.b) << what << a.first.str() << " " << b.first.str();
      UpstreamMeeting m = meet_upstream(topo, a.second, b.second);
      EXPECT_EQ(m.common, want.met ? a_chain[want.a] : nullptr);
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
