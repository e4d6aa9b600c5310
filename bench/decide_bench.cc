// In-process speed of the pair decision (Google Benchmark): the walk to the common bridge, and
// PairDecider's decision per class, over every GPU x NVMe pair of one tree, in pairs per second.
// The tree: bench_tree.h ($P2PCHECK_BENCH_TREE, else the 8-GPU fixture).
// Reports only; the ctest `bench_decide` runs it briefly and asserts nothing about time.
#include <benchmark/benchmark.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_tree.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/rules/pair_classes.h"

namespace p2pcheck {
namespace {

struct Loaded {
  MachineState state;
  KernelRules rules;
  std::vector<DevicePair> pairs;
};

const Loaded& loaded() {
  static const Loaded machine = [] {
    auto source = open_tree_source(bench_tree_root());
    Loaded l{load_machine_state(*source), {}, {}};
    l.state.inv.index();
    l.rules = kernel_rules_for(l.state.machine, std::nullopt);
    l.pairs = select_pairs(l.state.topo, l.state.inv, {});
    return l;
  }();
  return machine;
}

// calc_map_type_and_dist() per pair, each chain walked anew (decide_pair's way).
void BM_Walk(benchmark::State& st) {
  const Loaded& m = loaded();
  for (auto _ : st)
    for (const DevicePair& p : m.pairs)
      benchmark::DoNotOptimize(calc_map_type_and_dist(m.state.topo, m.state.topo.at(p.gpu), m.state.topo.at(p.nvme)));
  st.counters["pairs/s"] =
      benchmark::Counter(static_cast<double>(m.pairs.size()), benchmark::Counter::kIsIterationInvariantRate);
}

// decide_pair() for every pair, one by one.
void BM_DecidePair(benchmark::State& st) {
  const Loaded& m = loaded();
  for (auto _ : st)
    for (const DevicePair& p : m.pairs)
      benchmark::DoNotOptimize(decide_pair(m.state.topo, m.state.machine, m.rules, p));
  st.counters["pairs/s"] =
      benchmark::Counter(static_cast<double>(m.pairs.size()), benchmark::Counter::kIsIterationInvariantRate);
}

// One PairDecider for the run, a decision per class, each pair's whole decision made (with its walk).
void BM_ClassDecision(benchmark::State& st) {
  const Loaded& m = loaded();
  std::size_t classes = 0;
  for (auto _ : st) {
    PairDecider decider(m.state.topo, m.state.machine, m.rules);
    for (const DevicePair& p : m.pairs) benchmark::DoNotOptimize(decider.decide(p));
    classes = decider.classes();
  }
  st.counters["pairs/s"] =
      benchmark::Counter(static_cast<double>(m.pairs.size()), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["pairs"] = static_cast<double>(m.pairs.size());
  st.counters["classes"] = static_cast<double>(classes);
}

// What run_check does: every pair a small record of its class (PairList), no route made.
void BM_DecideAll(benchmark::State& st) {
  const Loaded& m = loaded();
  std::size_t classes = 0;
  for (auto _ : st) {
    PairList list = PairDecider(m.state.topo, m.state.machine, m.rules).decide_all(m.pairs);
    classes = list.classes();
    benchmark::DoNotOptimize(list);
  }
  st.counters["pairs/s"] =
      benchmark::Counter(static_cast<double>(m.pairs.size()), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["pairs"] = static_cast<double>(m.pairs.size());
  st.counters["classes"] = static_cast<double>(classes);
}

BENCHMARK(BM_Walk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecidePair)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ClassDecision)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecideAll)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace p2pcheck

BENCHMARK_MAIN();
