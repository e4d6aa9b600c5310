// decide_pair() once per class of pairs (pair_classes.h). The decision itself is decide_after_walk()
// in p2pcheck_rules.cc, the code decide_pair() runs; this only keys and copies its result.
#include "p2pcheck/rules/pair_classes.h"

#include <stdexcept>
#include <utility>

namespace p2pcheck {
namespace {

// A pair's whole decision: its class's, with the pair's own route, walk and (when it is the path's) distance.
PairDecision with_route(const PairDecision& shared, bool distance_is_path, const Inventory& inv,
                        const UpstreamMeeting& meeting, P2pWalk walk) {
  PairDecision d = shared;
  d.path = describe_path(inv, meeting);
  d.walk = std::move(walk);
  if (distance_is_path) d.distance = d.walk.distance;
  return d;
}

}  // namespace

PairDecider::PairDecider(const Topology& topo, const Inventory& inv, const Machine& machine, const KernelRules& rules)
    : topo_(topo), inv_(inv), machine_(machine), rules_(rules) {}

const std::vector<const Function*>& PairDecider::chain(const Function& fn) {
  auto it = chains_.find(&fn);
  if (it == chains_.end()) it = chains_.emplace(&fn, topo_.upstream_chain(fn)).first;
  return it->second;
}

std::uint32_t PairDecider::class_of(const UpstreamMeeting& meeting, P2pWalk walk, PairDecision* first) {
  PairClass key;
  key.walk_map_type = walk.map_type;
  key.acs_unknown = walk.acs_unknown;
  // The host check runs (and reads the host bridges) only when the walk is not BUS_ADDR.
  if (walk.map_type != MapType::kBusAddr) {
    key.provider_host_bridge = meeting.a->host_bridge;
    key.client_host_bridge = meeting.b->host_bridge;
  }
  auto it = classes_.find(key);
  if (it != classes_.end()) return it->second;
  PairDecision d;
  d.path = describe_path(inv_, meeting);
  d.walk = std::move(walk);
  decide_after_walk(topo_, machine_, rules_, d);
  Decided cls;
  cls.decision = d;
  cls.decision.path = {};
  cls.decision.walk = {};
  // pci_p2pdma_distance() is the path's distance unless refused (-1) or unknown (none).
  cls.distance_is_path = d.distance && *d.distance != -1;
  if (first) *first = std::move(d);
  auto index = static_cast<std::uint32_t>(decided_.size());
  decided_.push_back(std::move(cls));
  classes_.emplace(std::move(key), index);
  return index;
}

PairDecision PairDecider::decide(const DevicePair& pair) {
  const Function& gpu = topo_.at(pair.gpu);
  const Function& nvme = topo_.at(pair.nvme);
  UpstreamMeeting meeting = meet_upstream(gpu, chain(gpu), nvme, chain(nvme));
  P2pWalk walk = calc_map_type_and_dist(meeting);
  PairDecision first;
  std::uint32_t cls = class_of(meeting, walk, &first);
  if (first.walk.provider) return first;  // decided just now, for this pair
  return with_route(decided_[cls].decision, decided_[cls].distance_is_path, inv_, meeting, std::move(walk));
}

PairList PairDecider::decide_all(const std::vector<DevicePair>& pairs) && {
  PairList list;
  list.inv_ = &inv_;
  list.records_.reserve(pairs.size());
  const Function* gpu = nullptr;  // pairs come GPU by GPU: its lookup is kept
  for (const DevicePair& pair : pairs) {
    if (!gpu || gpu->bdf != pair.gpu) gpu = &topo_.at(pair.gpu);
    const Function& nvme = topo_.at(pair.nvme);
    UpstreamMeeting meeting = meet_upstream(*gpu, chain(*gpu), nvme, chain(nvme));
    P2pWalk walk = calc_map_type_and_dist(meeting);
    PairList::Record r;
    r.pair = pair;
    r.gpu = gpu;
    r.nvme = &nvme;
    r.common = walk.common;
    r.redirected = !walk.acs_redirect.empty();
    r.walk_distance = walk.distance;
    r.cls = class_of(meeting, std::move(walk), nullptr);
    list.records_.push_back(r);
  }
  list.classes_ = std::move(decided_);
  list.chains_ = std::move(chains_);
  classes_.clear();
  return list;
}

const std::vector<const Function*>& PairList::gpu_chain(std::size_t i) const { return chains_.at(records_[i].gpu); }
const std::vector<const Function*>& PairList::nvme_chain(std::size_t i) const { return chains_.at(records_[i].nvme); }

UpstreamMeeting PairList::meeting(std::size_t i) const {
  const Record& r = records_[i];
  return meet_upstream(*r.gpu, chains_.at(r.gpu), *r.nvme, chains_.at(r.nvme));
}

std::optional<int> PairList::distance(std::size_t i) const {
  const PairDecider::Decided& cls = classes_[records_[i].cls];
  return cls.distance_is_path ? std::optional<int>(records_[i].walk_distance) : cls.decision.distance;
}

P2pWalk PairList::walk(std::size_t i) const { return calc_map_type_and_dist(meeting(i)); }

PairDecision PairList::operator[](std::size_t i) const {
  const Record& r = records_[i];
  const PairDecider::Decided& cls = classes_[r.cls];
  UpstreamMeeting m = meeting(i);
  PairDecision d = with_route(cls.decision, cls.distance_is_path, *inv_, m, calc_map_type_and_dist(m));
  if (auto k = kernel_.find(i); k != kernel_.end()) {
    d.kernel = k->second.answer;
    d.kernel_agrees = k->second.agrees;
  }
  return d;
}

PairDecision PairList::at(std::size_t i) const {
  if (i >= records_.size()) throw std::out_of_range("PairList::at");
  return (*this)[i];
}

const KernelVerdict* PairList::kernel(std::size_t i) const {
  auto k = kernel_.find(i);
  return k == kernel_.end() ? nullptr : &k->second.answer;
}

Tri PairList::kernel_agrees(std::size_t i) const {
  auto k = kernel_.find(i);
  return k == kernel_.end() ? Tri::kUnknown : k->second.agrees;
}

void PairList::set_kernel_answer(std::size_t i, const KernelVerdict& answer, Tri agrees) {
  kernel_[i] = {answer, agrees};
}

}  // namespace p2pcheck
