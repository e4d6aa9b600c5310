// The tree the in-process benchmarks read: $P2PCHECK_BENCH_TREE (a root, e.g. bench/run.sh
// --keep's), else the 8-GPU fixture the build generates.
#pragma once

#include <cstdlib>
#include <string>

namespace p2pcheck {

inline std::string bench_tree_root() {
  const char* tree = std::getenv("P2PCHECK_BENCH_TREE");
  return tree ? tree : std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root";
}

}  // namespace p2pcheck
