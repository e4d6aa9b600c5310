// Deciding every pair of a big machine: decide_pair()'s answer, computed once per class of pairs
// that read the same facts. The kernel's decision (p2pdma.h, verdict.h) is not changed, only not
// repeated: each function's upstream chain is walked once, and the decision (host check,
// unknowns, verdicts, flows, the kernel's own support) is made once per class and copied.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// What the decision after calc_map_type_and_dist() reads of a pair, and nothing else: the walk's
// map type, the devices whose ACS could not be read, and (only when the path reaches the root
// complex) the two host bridges. CPU, kernel and allowlist are the same for every pair of a run.
struct PairClass {
  MapType walk_map_type = MapType::kUnknown;
  std::vector<const Function*> acs_unknown;
  std::string provider_host_bridge, client_host_bridge;  // empty for BUS_ADDR
  bool operator<(const PairClass& o) const {
    return std::tie(walk_map_type, acs_unknown, provider_host_bridge, client_host_bridge) <
           std::tie(o.walk_map_type, o.acs_unknown, o.provider_host_bridge, o.client_host_bridge);
  }
};

// decide_pair() for many pairs of one machine; decide() returns exactly what decide_pair() would.
// Holds pointers into its arguments: keep them alive and unchanged while it is used.
class PairDecider {
 public:
  PairDecider(const Topology& topo, const Inventory& inv, const Machine& machine, const KernelRules& rules);
  PairDecision decide(const DevicePair& pair);
  std::size_t classes() const { return classes_.size(); }  // distinct decisions made so far

 private:
  const std::vector<const Function*>& chain(const Function& fn);

  const Topology& topo_;
  const Inventory& inv_;
  const Machine& machine_;
  const KernelRules& rules_;
  std::map<const Function*, std::vector<const Function*>> chains_;
  // Each class's decision without its pair-specific parts (path, walk, and the distance when it is
  // the path's), and whether `distance` is the walk's.
  struct Decided {
    PairDecision decision;
    bool distance_is_path = false;
  };
  std::map<PairClass, Decided> classes_;
};

}  // namespace p2pcheck
