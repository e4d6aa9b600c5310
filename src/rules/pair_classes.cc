// decide_pair() once per class of pairs (pair_classes.h). The decision itself is decide_after_walk()
// in p2pcheck_rules.cc, the code decide_pair() runs; this only keys and copies its result.
#include "p2pcheck/rules/pair_classes.h"

#include <utility>

namespace p2pcheck {

PairDecider::PairDecider(const Topology& topo, const Inventory& inv, const Machine& machine, const KernelRules& rules)
    : topo_(topo), inv_(inv), machine_(machine), rules_(rules) {}

const std::vector<const Function*>& PairDecider::chain(const Function& fn) {
  auto it = chains_.find(&fn);
  if (it == chains_.end()) it = chains_.emplace(&fn, topo_.upstream_chain(fn)).first;
  return it->second;
}

PairDecision PairDecider::decide(const DevicePair& pair) {
  const Function& gpu = topo_.at(pair.gpu);
  const Function& nvme = topo_.at(pair.nvme);
  UpstreamMeeting meeting = meet_upstream(gpu, chain(gpu), nvme, chain(nvme));
  PairPath path = describe_path(inv_, meeting);
  P2pWalk walk = calc_map_type_and_dist(meeting);
  PairClass key;
  key.walk_map_type = walk.map_type;
  key.acs_unknown = walk.acs_unknown;
  // The host check runs (and reads the host bridges) only when the walk is not BUS_ADDR.
  if (walk.map_type != MapType::kBusAddr) {
    key.provider_host_bridge = gpu.host_bridge;
    key.client_host_bridge = nvme.host_bridge;
  }
  auto it = classes_.find(key);
  if (it == classes_.end()) {
    PairDecision first;
    first.path = std::move(path);
    first.walk = std::move(walk);
    decide_after_walk(topo_, machine_, rules_, first);
    Decided cls;
    cls.decision = first;
    cls.decision.path = {};
    cls.decision.walk = {};
    // pci_p2pdma_distance() is the path's distance unless refused (-1) or unknown (none).
    cls.distance_is_path = first.distance && *first.distance != -1;
    classes_.emplace(std::move(key), std::move(cls));
    return first;
  }
  PairDecision d = it->second.decision;
  d.path = std::move(path);
  d.walk = std::move(walk);
  if (it->second.distance_is_path) d.distance = d.walk.distance;
  return d;
}

}  // namespace p2pcheck
