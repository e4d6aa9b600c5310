// The watch probe's loader in a build without it (P2PCHECK_WATCH=OFF, or AUTO without clang,
// libbpf or bpftool): every other part of `watch` (--replay, --hooks, --save-btf) still works.
#include <cerrno>

#include "p2pcheck/live/watch_probe.h"

namespace p2pcheck {

bool watch_probe_built() { return false; }

WatchStart start_watch_probe(const WatchHookPlan& plan) {
  WatchStart start;
  start.hooks = plan;
  start.error_number = ENOSYS;
  start.error =
      "this p2pcheck was built without the watch probe (CMake P2PCHECK_WATCH=OFF, or clang, libbpf-dev "
      "or bpftool missing when it was built)";
  return start;
}

}  // namespace p2pcheck
