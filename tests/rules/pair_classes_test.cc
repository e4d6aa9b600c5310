// PairDecider against decide_pair(): the same decision for every pair of every fixture (ACS
// redirect, ACS unreadable, host bridges crossed, pre-Zen, unknown kernel config) under several
// kernels, while making fewer decisions than pairs where pairs share a class.
#include "p2pcheck/rules/pair_classes.h"

#include <cstdint>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/source/source.h"
#include "small_machine.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

std::string bdfs(const std::vector<const Function*>& fns) {
  std::string s;
  for (const Function* f : fns) s += f->bdf.str() + " ";
  return s;
}

std::string unknowns(const std::vector<Unknown>& us) {
  std::string s;
  for (const Unknown& u : us)
    s += std::to_string(static_cast<int>(u.fact)) + (u.function ? u.function->bdf.str() : "") + u.host_bridge + ";";
  return s;
}

std::string flow(const Flow& f) {
  return std::to_string(static_cast<int>(f.verdict)) + "/" + std::to_string(static_cast<int>(f.reason)) + "/" +
         std::to_string(static_cast<int>(f.hardware));
}

std::string host(const HostCheck& h) {
  std::string s = std::to_string(static_cast<int>(h.cpu_supports)) + h.cpu_vendor + std::to_string(h.cpu_family) +
                  h.cpu_architecture + (h.same_host_bridge ? "same" : "two") +
                  std::to_string(static_cast<int>(h.allowlisted)) + std::to_string(static_cast<int>(h.allowed));
  for (const BridgeCheck& b : h.bridges)
    s += "|" + b.host_bridge + (b.device ? b.device->str() : "-") + (b.device_unknown ? "?" : "") + b.ids() +
         (b.entry ? b.entry->name : "") + (b.later_entry ? b.later_entry->name : "") +
         std::to_string(static_cast<int>(b.result)) + std::to_string(static_cast<int>(b.passes));
  return s;
}

void expect_same(const PairDecision& a, const PairDecision& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.walk.pair().gpu, b.walk.pair().gpu);
  EXPECT_EQ(a.walk.pair().nvme, b.walk.pair().nvme);
  EXPECT_EQ(a.walk.common, b.walk.common);
  EXPECT_EQ(bdfs(a.walk.provider_side), bdfs(b.walk.provider_side));
  EXPECT_EQ(bdfs(a.walk.client_side), bdfs(b.walk.client_side));
  EXPECT_EQ(a.walk.route, b.walk.route);
  EXPECT_EQ(bdfs(a.walk.above_common), bdfs(b.walk.above_common));
  EXPECT_EQ(a.walk.host_bridges, b.walk.host_bridges);
  EXPECT_EQ(bdfs(a.walk.acs_checked), bdfs(b.walk.acs_checked));
  EXPECT_EQ(bdfs(a.walk.acs_redirect), bdfs(b.walk.acs_redirect));
  EXPECT_EQ(bdfs(a.walk.acs_unknown), bdfs(b.walk.acs_unknown));
  EXPECT_EQ(a.walk.map_type, b.walk.map_type);
  EXPECT_EQ(a.walk.distance, b.walk.distance);
  EXPECT_EQ(a.map_type, b.map_type);
  EXPECT_EQ(a.distance, b.distance);
  EXPECT_EQ(a.verdict, b.verdict);
  EXPECT_EQ(a.path_map_type, b.path_map_type);
  EXPECT_EQ(a.path_verdict, b.path_verdict);
  EXPECT_EQ(a.decided_by, b.decided_by);
  EXPECT_EQ(a.undecided_by.has_value(), b.undecided_by.has_value());
  EXPECT_EQ(a.host_checked, b.host_checked);
  EXPECT_EQ(host(a.host), host(b.host));
  EXPECT_EQ(flow(a.to_gpu), flow(b.to_gpu));
  EXPECT_EQ(flow(a.from_gpu), flow(b.from_gpu));
  EXPECT_EQ(unknowns(a.unknowns), unknowns(b.unknowns));
  EXPECT_EQ(a.later, b.later);
  EXPECT_EQ(a.no_p2pdma.has_value(), b.no_p2pdma.has_value());
  if (a.no_p2pdma && b.no_p2pdma) {
    EXPECT_EQ(a.no_p2pdma->basis, b.no_p2pdma->basis);
    EXPECT_EQ(a.no_p2pdma->config_file, b.no_p2pdma->config_file);
  }
  EXPECT_EQ(a.known_bad, b.known_bad);
}

// The classes as the kernel's walk keys them (PairClass), numbered in the order pairs first meet them.
std::vector<std::uint32_t> reference_classes(const Topology& topo, const std::vector<DevicePair>& pairs) {
  std::map<PairClass, std::uint32_t> numbers;
  std::vector<std::uint32_t> out;
  for (const DevicePair& pair : pairs) {
    PairWalk walk = calc_map_type_and_dist(topo, topo.at(pair.gpu), topo.at(pair.nvme));
    PairClass key;
    key.walk_map_type = walk.map_type;
    key.acs_unknown = walk.acs_unknown;
    if (walk.map_type != MapType::kBusAddr) {
      key.provider_host_bridge = walk.provider->host_bridge;
      key.client_host_bridge = walk.client->host_bridge;
    }
    out.push_back(numbers.emplace(key, static_cast<std::uint32_t>(numbers.size())).first->second);
  }
  return out;
}

// decide_all() keys a pair by its two sides and common bridge instead of walking it: under every mix
// of ACS redirect, no redirect and unreadable ACS on the small machine, for every pair of its
// functions either way round, the classes are the walk's, numbered alike, and each pair's decision,
// redirect and distance are decide_pair()'s.
class PairListKeys : public testing::SmallMachine {};

TEST_F(PairListKeys, GroupPairsAsTheWalkDoesUnderEveryAcsMix) {
  std::vector<DevicePair> pairs;
  for (const auto& a : topo_.functions)
    for (const auto& b : topo_.functions) pairs.push_back({a.first, b.first});
  Machine machine;
  KernelRules rules = kernel_rules_for(machine, std::string("6.12.0"));
  std::uint32_t seed = 12345;
  std::size_t unknown_pairs = 0, redirected_pairs = 0;
  for (int round = 0; round < 60; ++round) {
    for (auto& [bdf, fn] : topo_.functions) {
      seed = seed * 1103515245u + 12345u;
      switch ((seed >> 16) % 4) {
        case 0: fn.acs = {Presence::kUnknown, 0, 0}; break;
        case 1: fn.acs = {Presence::kPresent, 0x5f, kAcsRr}; break;
        case 2: fn.acs = {Presence::kPresent, 0x5f, 0}; break;
        default: fn.acs = {Presence::kAbsent, 0, 0}; break;
      }
    }
    PairList list = PairDecider(topo_, machine, rules).decide_all(pairs);
    ASSERT_EQ(list.size(), pairs.size());
    std::vector<std::uint32_t> want = reference_classes(topo_, pairs);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      std::string what = "round " + std::to_string(round) + " " + pairs[i].gpu.str() + " " + pairs[i].nvme.str();
      SCOPED_TRACE(what);
      EXPECT_EQ(list.class_index(i), want[i]);
      PairDecision d = decide_pair(topo_, machine, rules, pairs[i]);
      expect_same(list[i], d, what);
      EXPECT_EQ(list.acs_redirected(i), d.walk.common && !d.walk.acs_redirect.empty());
      EXPECT_EQ(list.distance(i), d.distance);
      EXPECT_EQ(&list.gpu(i), &topo_.at(pairs[i].gpu));
      EXPECT_EQ(&list.nvme(i), &topo_.at(pairs[i].nvme));
      EXPECT_EQ(&list.end(list.gpu_end(i)), &list.gpu(i));
      EXPECT_EQ(&list.end(list.nvme_end(i)), &list.nvme(i));
      unknown_pairs += d.walk.map_type == MapType::kUnknown;
      redirected_pairs += list.acs_redirected(i);
    }
    EXPECT_EQ(list.ends(), topo_.functions.size());
  }
  EXPECT_GT(unknown_pairs, 0u);
  EXPECT_GT(redirected_pairs, 0u);
}

// Each end and common bridge is new once; the same bridge for another end is new again.
TEST_F(PairListKeys, SidesSeenOncePerEndAndCommonBridge) {
  std::vector<DevicePair> pairs = {{*Bdf::parse("0000:03:00.0"), *Bdf::parse("0000:04:00.0")},
                                   {*Bdf::parse("0000:03:00.0"), *Bdf::parse("0000:05:00.0")}};
  Machine machine;
  KernelRules rules = kernel_rules_for(machine, std::string("6.12.0"));
  PairList list = PairDecider(topo_, machine, rules).decide_all(pairs);
  ASSERT_EQ(list.ends(), 3u);
  SidesSeen sides(list);
  const Function* up = &fn("0000:01:00.0");
  EXPECT_TRUE(sides.first(list.gpu_end(0), up));
  EXPECT_FALSE(sides.first(list.gpu_end(0), up));
  EXPECT_TRUE(sides.first(list.gpu_end(0), nullptr));
  EXPECT_TRUE(sides.first(list.nvme_end(0), up));
  EXPECT_FALSE(sides.first(list.gpu_end(1), up));  // the same GPU: the same end
  EXPECT_TRUE(sides.first(list.nvme_end(1), nullptr));
  EXPECT_FALSE(sides.first(list.nvme_end(1), nullptr));
}

TEST(PairDecider, DecidesEveryFixturePairAsDecidePairDoes) {
  int fixtures = 0;
  std::size_t pairs = 0, classes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    if (!std::filesystem::is_directory(entry.path() / "root")) continue;
    ++fixtures;
    auto source = open_tree_source((entry.path() / "root").string());
    MachineState state = load_machine_state(*source);
    std::vector<DevicePair> selected = select_pairs(state.topo, state.inv, {});
    // the machine's own kernel, one before the allowlist's rows, a known-bad one, a newer one
    for (std::optional<std::string> kernel :
         {std::optional<std::string>(), std::optional<std::string>("5.4.0"), std::optional<std::string>("6.7.0"),
          std::optional<std::string>("6.14")}) {
      KernelRules rules = kernel_rules_for(state.machine, kernel);
      PairDecider decider(state.topo, state.machine, rules);
      for (const DevicePair& pair : selected)
        expect_same(decider.decide(pair), decide_pair(state.topo, state.machine, rules, pair),
                    entry.path().filename().string() + " " + pair.gpu.str() + " " + pair.nvme.str() + " " +
                        kernel.value_or("own kernel"));
      pairs += selected.size();
      classes += decider.classes();
    }
  }
  EXPECT_GE(fixtures, 10);
  EXPECT_GT(pairs, 0u);
  EXPECT_LT(classes, pairs);  // pairs do share decisions
}

// The list keeps a record per pair and makes its route again when asked: every pair, in full and
// through the quick accessors the report uses, is what decide_pair() says.
TEST(PairList, GivesEveryFixturePairAsDecidePairDoes) {
  std::size_t pairs = 0, redirected = 0, without_common = 0;
  for (const auto& entry : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    if (!std::filesystem::is_directory(entry.path() / "root")) continue;
    auto source = open_tree_source((entry.path() / "root").string());
    MachineState state = load_machine_state(*source);
    std::vector<DevicePair> selected = select_pairs(state.topo, state.inv, {});
    for (std::optional<std::string> kernel : {std::optional<std::string>(), std::optional<std::string>("6.7.0")}) {
      KernelRules rules = kernel_rules_for(state.machine, kernel);
      PairList list = PairDecider(state.topo, state.machine, rules).decide_all(selected);
      ASSERT_EQ(list.size(), selected.size());
      EXPECT_LE(list.classes(), selected.size());
      for (std::size_t i = 0; i < selected.size(); ++i) {
        std::string what = entry.path().filename().string() + " " + selected[i].gpu.str() + " " +
                           selected[i].nvme.str() + " " + kernel.value_or("own kernel");
        SCOPED_TRACE(what);
        PairDecision want = decide_pair(state.topo, state.machine, rules, selected[i]);
        PairDecision got = list[i];
        expect_same(got, want, what);
        EXPECT_EQ(list.pair(i).gpu, selected[i].gpu);
        EXPECT_EQ(list.pair(i).nvme, selected[i].nvme);
        EXPECT_EQ(&list.gpu(i), &state.topo.at(selected[i].gpu));
        EXPECT_EQ(&list.nvme(i), &state.topo.at(selected[i].nvme));
        EXPECT_EQ(list.shared(i).verdict, want.verdict);
        EXPECT_EQ(list.shared(i).map_type, want.map_type);
        EXPECT_EQ(list.distance(i), want.distance);
        EXPECT_EQ(list.common(i), want.walk.common);
        // The walk in brief the record keeps is the whole walk's.
        EXPECT_EQ(list.meet(i).distance(), want.walk.distance);
        EXPECT_EQ(list.route(i), want.walk.route);
        EXPECT_EQ(list.host_bridges(i), want.walk.host_bridges);
        EXPECT_EQ(list.acs_redirected(i), want.walk.common && !want.walk.acs_redirect.empty());
        EXPECT_EQ(bdfs(list.walk(i).acs_redirect), bdfs(want.walk.acs_redirect));
        EXPECT_EQ(list.gpu_chain(i), state.topo.upstream_chain(state.topo.at(selected[i].gpu)));
        EXPECT_EQ(list.nvme_chain(i), state.topo.upstream_chain(state.topo.at(selected[i].nvme)));
        EXPECT_FALSE(got.kernel);
        redirected += list.acs_redirected(i);
        without_common += list.common(i) == nullptr;
      }
      pairs += selected.size();
    }
  }
  EXPECT_GT(pairs, 0u);
  EXPECT_GT(redirected, 0u);      // the fixtures have ACS redirect below a common bridge
  EXPECT_GT(without_common, 0u);  // and pairs under different root ports
}

TEST(PairList, KeepsAKernelAnswerForItsPairAlone) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  MachineState state = load_machine_state(*source);
  std::vector<DevicePair> selected = select_pairs(state.topo, state.inv, {});
  ASSERT_GE(selected.size(), 2u);
  KernelRules rules = kernel_rules_for(state.machine, std::nullopt);
  PairList list = PairDecider(state.topo, state.machine, rules).decide_all(selected);
  // Two pairs that share their decision: an answer for one is not the other's.
  std::size_t first = 0, other = 1;
  while (other < list.size() && list.class_index(other) != list.class_index(first)) ++other;
  ASSERT_LT(other, list.size());
  KernelVerdict answer;
  answer.distance = 7;
  answer.map_type = MapType::kThruHostBridge;
  list.set_kernel_answer(other, answer, Tri::kNo);
  ASSERT_TRUE(list[other].kernel);
  EXPECT_EQ(list[other].kernel->distance, 7);
  EXPECT_EQ(list[other].kernel_agrees, Tri::kNo);
  EXPECT_EQ(list.kernel_agrees(other), Tri::kNo);
  ASSERT_NE(list.kernel(other), nullptr);
  EXPECT_FALSE(list[first].kernel);  // the other pair of the class is unchanged
  EXPECT_EQ(list.kernel(first), nullptr);
  EXPECT_EQ(list.kernel_agrees(first), Tri::kUnknown);
  EXPECT_FALSE(list.shared(other).kernel);
  list.clear_kernel_answers();
  EXPECT_FALSE(list[other].kernel);
  EXPECT_EQ(list.kernel_agrees(other), Tri::kUnknown);
  EXPECT_THROW(list.at(list.size()), std::out_of_range);
}

}  // namespace
}  // namespace p2pcheck
