// decide_pair() once per class of pairs (pair_classes.h). The decision itself is decide_after_walk()
// in p2pcheck_rules.cc, the code decide_pair() runs; this only keys and copies its result.
#include "p2pcheck/rules/pair_classes.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace p2pcheck {
namespace {

// A pair's whole decision: its class's, with the pair's own walk and (when it is the walk's) distance.
PairDecision with_walk(const PairDecision& shared, bool distance_is_path, PairWalk walk) {
  PairDecision d = shared;
  d.walk = std::move(walk);
  if (distance_is_path) d.distance = d.walk.distance;
  return d;
}

}  // namespace

PairDecider::PairDecider(const Topology& topo, const Machine& machine, const KernelRules& rules)
    : topo_(topo), machine_(machine), rules_(rules) {}

std::size_t PairDecider::KeyHash::operator()(const Key& k) const {
  std::uint64_t h = (std::uint64_t{k.provider_side} << 32 | k.client_side) * 0x9e3779b97f4a7c15ull;
  h ^= (std::uint64_t{k.provider_host_bridge} << 32 | k.client_host_bridge) + (h << 6) + (h >> 2);
  h ^= std::hash<const Function*>()(k.common) + static_cast<std::uint64_t>(k.common_redirect) + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h);
}

std::uint32_t PairDecider::end_of(const Bdf& bdf) {
  if (auto it = end_index_.find(bdf.key()); it != end_index_.end()) return it->second;
  End end;
  end.fn = &topo_.at(bdf);
  end.chain = topo_.upstream_chain(*end.fn);
  // What count_acs() sees on each side the device can have: the sides of a chain are its prefixes.
  std::vector<const Function*> unknown;
  bool redirect = false;
  for (std::size_t k = 0;; ++k) {
    auto& ids = side_ids_[redirect];
    end.side.push_back(ids.emplace(unknown, static_cast<std::uint32_t>(ids.size() * 2 + redirect)).first->second);
    if (k == end.chain.size()) break;
    Tri acs = pci_bridge_has_acs_redir(*end.chain[k]);
    if (acs == Tri::kUnknown) unknown.push_back(end.chain[k]);
    redirect = redirect || acs == Tri::kYes;
  }
  end.host_bridge =
      host_bridge_ids_.emplace(end.fn->host_bridge, static_cast<std::uint32_t>(host_bridge_ids_.size())).first->second;
  auto index = static_cast<std::uint32_t>(ends_.size());
  ends_.push_back(std::move(end));
  end_index_.emplace(bdf.key(), index);
  return index;
}

std::uint32_t PairDecider::class_of(PairWalk walk, PairDecision* first) {
  PairClass key;
  key.walk_map_type = walk.map_type;
  key.acs_unknown = walk.acs_unknown;
  // The host check runs (and reads the host bridges) only when the walk is not BUS_ADDR.
  if (walk.map_type != MapType::kBusAddr) {
    key.provider_host_bridge = walk.provider->host_bridge;
    key.client_host_bridge = walk.client->host_bridge;
  }
  auto it = classes_.find(key);
  if (it != classes_.end()) return it->second;
  PairDecision d;
  d.walk = std::move(walk);
  decide_after_walk(topo_, machine_, rules_, d);
  Decided cls;
  cls.decision = d;
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
  std::uint32_t gpu_end = end_of(pair.gpu), nvme_end = end_of(pair.nvme);
  const End& gpu = ends_[gpu_end];
  const End& nvme = ends_[nvme_end];
  PairWalk walk = calc_map_type_and_dist(gpu.chain, nvme.chain);
  PairDecision first;
  std::uint32_t cls = class_of(walk, &first);
  if (first.walk.provider) return first;  // decided just now, for this pair
  return with_walk(decided_[cls].decision, decided_[cls].distance_is_path, std::move(walk));
}

PairList PairDecider::decide_all(const std::vector<DevicePair>& pairs) && {
  PairList list;
  list.records_.reserve(pairs.size());
  // Pairs come GPU by GPU, each GPU with the same NVMe in the same order: the GPU's end is kept,
  // and the first GPU's row of NVMe ends is tried before looking one up.
  std::uint32_t gpu_end = kNoSide;
  std::vector<std::uint32_t> row;
  std::size_t column = 0;
  for (const DevicePair& pair : pairs) {
    if (gpu_end == kNoSide || ends_[gpu_end].fn->bdf != pair.gpu) {
      gpu_end = end_of(pair.gpu);
      column = 0;
    }
    std::uint32_t nvme_end = 0;
    if (column < row.size() && ends_[row[column]].fn->bdf == pair.nvme) {
      nvme_end = row[column];
    } else {
      nvme_end = end_of(pair.nvme);
      if (column == row.size()) row.push_back(nvme_end);
    }
    ++column;
    const End& gpu = ends_[gpu_end];
    const End& nvme = ends_[nvme_end];
    // The pair's class from where its chains meet; walked in full only for a key not seen yet.
    ChainMeet at = meet_in_chains(gpu.chain, nvme.chain);
    Key key;
    key.provider_host_bridge = gpu.host_bridge;
    key.client_host_bridge = nvme.host_bridge;
    const Function* common = at.met ? gpu.chain[at.a] : nullptr;
    if (common) {
      key.provider_side = gpu.side[at.a];
      key.client_side = nvme.side[at.b];
      key.common_redirect = pci_bridge_has_acs_redir(*common);
      if (key.common_redirect == Tri::kUnknown) key.common = common;
    } else {
      key.provider_side = key.client_side = kNoSide;
    }
    auto [keyed, added] = keyed_.try_emplace(key);
    if (added) {
      PairWalk walk = calc_map_type_and_dist(gpu.chain, nvme.chain);
      keyed->second.route = walk.route;
      keyed->second.cls = class_of(std::move(walk), nullptr);
    }
    PairList::Record r;
    r.gpu_end = gpu_end;
    r.nvme_end = nvme_end;
    r.common = common;
    r.route = keyed->second.route;
    // Chains are cut at kLongestChain: the steps fit.
    r.gpu_steps = static_cast<std::uint16_t>(at.a);
    r.nvme_steps = static_cast<std::uint16_t>(at.b);
    r.cls = keyed->second.cls;
    list.records_.push_back(r);
  }
  list.classes_ = std::move(decided_);
  list.chains_.reserve(ends_.size());
  for (End& end : ends_) list.chains_.push_back(std::move(end.chain));
  classes_.clear();
  keyed_.clear();
  return list;
}

ChainMeet PairList::meet(std::size_t i) const {
  const Record& r = records_[i];
  return {r.common != nullptr, r.gpu_steps, r.nvme_steps};
}

std::vector<std::string> PairList::host_bridges(std::size_t i) const {
  return route_host_bridges(records_[i].route, gpu(i), nvme(i), records_[i].common);
}

std::optional<int> PairList::distance(std::size_t i) const {
  const PairDecider::Decided& cls = classes_[records_[i].cls];
  return cls.distance_is_path ? std::optional<int>(meet(i).distance()) : cls.decision.distance;
}

PairWalk PairList::walk(std::size_t i) const { return calc_map_type_and_dist(gpu_chain(i), nvme_chain(i)); }

PairDecision PairList::operator[](std::size_t i) const {
  const Record& r = records_[i];
  const PairDecider::Decided& cls = classes_[r.cls];
  PairDecision d = with_walk(cls.decision, cls.distance_is_path, walk(i));
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
  if (kernel_.empty()) return nullptr;  // asked per pair when printing; mostly no kernel answered
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

bool SidesSeen::first(std::uint32_t end, const Function* common) {
  std::vector<const Function*>& met = seen_[end];
  if (std::find(met.begin(), met.end(), common) != met.end()) return false;
  met.push_back(common);
  return true;
}

}  // namespace p2pcheck
