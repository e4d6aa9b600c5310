// PairDecider against decide_pair(): the same decision for every pair of every fixture (ACS
// redirect, ACS unreadable, host bridges crossed, pre-Zen, unknown kernel config) under several
// kernels, while making fewer decisions than pairs where pairs share a class.
#include "p2pcheck/rules/pair_classes.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/source/source.h"

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
  EXPECT_EQ(a.path.pair.gpu, b.path.pair.gpu);
  EXPECT_EQ(a.path.pair.nvme, b.path.pair.nvme);
  EXPECT_EQ(a.path.common, b.path.common);
  EXPECT_EQ(a.path.distance, b.path.distance);
  EXPECT_EQ(bdfs(a.path.gpu_side), bdfs(b.path.gpu_side));
  EXPECT_EQ(bdfs(a.path.nvme_side), bdfs(b.path.nvme_side));
  EXPECT_EQ(a.path.host_bridges, b.path.host_bridges);
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
  EXPECT_EQ(a.config_file, b.config_file);
  EXPECT_EQ(a.known_bad, b.known_bad);
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
      PairDecider decider(state.topo, state.inv, state.machine, rules);
      for (const DevicePair& pair : selected)
        expect_same(decider.decide(pair), decide_pair(state.topo, state.inv, state.machine, rules, pair),
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

}  // namespace
}  // namespace p2pcheck
