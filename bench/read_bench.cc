// Whether reading the tree in parallel pays (issue 14, item 3): the files one `check` reads, read
// through a tree Source per thread (each with its own path cache, as a parallel read step would
// have), by 1 and 2 threads, in wall clock and the whole process's CPU time.
// The tree: bench_tree.h ($P2PCHECK_BENCH_TREE, else the 8-GPU fixture).
// Reports only; the ctest `bench_read` runs it briefly and asserts nothing about time.
#include <benchmark/benchmark.h>
#include <string>
#include <thread>
#include <vector>

#include "bench_tree.h"
#include "p2pcheck/checks/check.h"

namespace p2pcheck {
namespace {

// Every file the analysis read (canonical paths), from one recorded run of its read step.
const std::vector<std::string>& files_read() {
  static const std::vector<std::string> files = [] {
    auto source = open_tree_source(bench_tree_root());
    read_check_inputs(*source, CheckOptions{});
    std::vector<std::string> out;
    for (const auto& [path, times] : source->access_log().file_reads) out.push_back(path);
    return out;
  }();
  return files;
}

// Thread t of n reads files t, t + n, t + 2n, ... through a Source of its own.
void read_share(const std::string& root, const std::vector<std::string>& files, std::size_t t, std::size_t n,
                std::size_t& bytes) {
  auto source = open_tree_source(root);
  for (std::size_t i = t; i < files.size(); i += n) bytes += source->read(files[i]).bytes.size();
}

void BM_ReadTree(benchmark::State& st) {
  const std::string root = bench_tree_root();
  const auto& files = files_read();
  const auto n = static_cast<std::size_t>(st.range(0));
  for (auto _ : st) {
    std::vector<std::size_t> bytes(n, 0);
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < n; ++t)
      threads.emplace_back(read_share, root, std::cref(files), t, n, std::ref(bytes[t]));
    read_share(root, files, 0, n, bytes[0]);
    for (auto& thread : threads) thread.join();
    benchmark::DoNotOptimize(bytes);
  }
  st.counters["files/s"] =
      benchmark::Counter(static_cast<double>(files.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReadTree)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace p2pcheck

BENCHMARK_MAIN();
