// Deciding every pair of a big machine: decide_pair()'s answer, computed once per class of pairs
// that read the same facts. The kernel's decision (p2pdma.h, verdict.h) is not changed, only not
// repeated: each function's upstream chain is walked once, and the decision (host check,
// unknowns, verdicts, flows, the kernel's own support) is made once per class and copied. A pair
// finds its class from where its chains meet and what was counted per device (End, Key): the
// kernel's walk runs again only for a key not seen before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
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

class PairList;

// decide_pair() for many pairs of one machine; decide() returns exactly what decide_pair() would.
// Holds pointers into its arguments: keep them alive and unchanged while it is used.
class PairDecider {
 public:
  PairDecider(const Topology& topo, const Machine& machine, const KernelRules& rules);
  PairDecision decide(const DevicePair& pair);
  // Every pair decided, kept as small records that share their class's decision (PairList).
  // The decider is spent afterwards: its chains and classes move into the list.
  PairList decide_all(const std::vector<DevicePair>& pairs) &&;
  std::size_t classes() const { return classes_.size(); }  // distinct decisions made so far

 private:
  // Each class's decision without its pair-specific parts (the walk, and the distance when it is
  // the walk's), and whether `distance` is the walk's.
  struct Decided {
    PairDecision decision;
    bool distance_is_path = false;
  };
  // A device at one end of pairs (a GPU or an NVMe), walked once: its upstream chain and, for each
  // side of a pair it can be on (chain[0..k), below a common bridge chain[k]), the number of what
  // calc_map_type_and_dist() counts on that side (its redirecting and ACS-unknown devices).
  struct End {
    const Function* fn = nullptr;
    std::vector<const Function*> chain;
    std::vector<std::uint32_t> side;  // side[k] for chain[0..k), k = 0 .. chain.size()
    std::uint32_t host_bridge = 0;    // fn->host_bridge, numbered
  };
  // A pair's class as numbers, read off its two ends and its common bridge: equal keys make equal
  // PairClasses, so a pair whose key was seen costs a hash lookup, not a walk.
  struct Key {
    std::uint32_t provider_side = 0, client_side = 0;  // End::side where the chains meet; kNoSide when they do not
    std::uint32_t provider_host_bridge = 0, client_host_bridge = 0;
    const Function* common = nullptr;  // only when its ACS is unknown (then it is in the class's acs_unknown)
    Tri common_redirect = Tri::kUnknown;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  struct Keyed {
    std::uint32_t cls = 0;
    RouteKind route = RouteKind::kRootComplex;  // the walk's
  };
  static constexpr std::uint32_t kNoSide = 0xffffffff;
  friend class PairList;

  std::uint32_t end_of(const Bdf& bdf);  // the device's End, made when new; throws like Topology::at
  // The pair's class (its index in decided_), deciding it when it is new; `first` gets the full
  // decision when it was made for this pair.
  std::uint32_t class_of(PairWalk walk, PairDecision* first);

  const Topology& topo_;
  const Machine& machine_;
  const KernelRules& rules_;
  std::vector<End> ends_;
  std::unordered_map<std::uint64_t, std::uint32_t> end_index_;         // Bdf::key() -> ends_
  std::map<std::vector<const Function*>, std::uint32_t> side_ids_[2];  // ACS-unknown devices, [redirect]
  std::map<std::string, std::uint32_t> host_bridge_ids_;
  std::unordered_map<Key, Keyed, KeyHash> keyed_;
  std::map<PairClass, std::uint32_t> classes_;
  std::vector<Decided> decided_;
};

// The decided pairs of a check, in selection order. A fabric's hundreds of thousands of pairs
// share a few dozen decisions: each pair is a small record (its devices, its class, where its
// chains meet) and its route is walked again only when something prints it. operator[] gives
// a pair's decision in full, exactly as decide_pair() makes it.
class PairList {
 public:
  PairList() = default;

  std::size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }
  // By value: a record keeps its devices' numbers, not their addresses (16 bytes a pair).
  DevicePair pair(std::size_t i) const { return {gpu(i).bdf, nvme(i).bdf}; }
  const Function& gpu(std::size_t i) const { return *chains_[records_[i].gpu_end].front(); }
  const Function& nvme(std::size_t i) const { return *chains_[records_[i].nvme_end].front(); }
  // The decision the pair shares with its class: verdicts, flows, map types, host check, unknowns.
  // Its walk is empty and its distance may be another pair's: use operator[] for those.
  const PairDecision& shared(std::size_t i) const { return classes_[records_[i].cls].decision; }
  std::uint32_t class_index(std::size_t i) const { return records_[i].cls; }
  std::size_t classes() const { return classes_.size(); }
  const PairDecision& class_decision(std::uint32_t k) const { return classes_[k].decision; }
  // The pair's walk in brief, kept with its record (walk() makes the whole of it): the common
  // bridge (nullptr when the chains do not meet), where the chains meet, the route kind and the
  // host bridges it reaches, as PairWalk has them.
  const Function* common(std::size_t i) const { return records_[i].common; }
  ChainMeet meet(std::size_t i) const;
  RouteKind route(std::size_t i) const { return records_[i].route; }
  std::vector<std::string> host_bridges(std::size_t i) const;
  // Whether ACS redirect sends the switch-local pair up through the root complex.
  bool acs_redirected(std::size_t i) const { return records_[i].route == RouteKind::kRedirected; }
  // pci_p2pdma_distance() for the pair, as its whole decision says (operator[]().distance).
  std::optional<int> distance(std::size_t i) const;
  // The pair's upstream chains (Topology::upstream_chain of its GPU and of its NVMe).
  const std::vector<const Function*>& gpu_chain(std::size_t i) const { return chains_[records_[i].gpu_end]; }
  const std::vector<const Function*>& nvme_chain(std::size_t i) const { return chains_[records_[i].nvme_end]; }
  // The pair's GPU and NVMe numbered 0 .. ends()-1, each device once: for tables kept per device.
  // The ends are the devices of the list's pairs (and of any pair its decider decide()d before).
  std::uint32_t gpu_end(std::size_t i) const { return records_[i].gpu_end; }
  std::uint32_t nvme_end(std::size_t i) const { return records_[i].nvme_end; }
  std::size_t ends() const { return chains_.size(); }
  const Function& end(std::uint32_t e) const { return *chains_[e].front(); }

  // The pair's whole decision: the shared one with its walk, distance and kernel answer.
  PairDecision operator[](std::size_t i) const;
  PairDecision at(std::size_t i) const;  // operator[], checked
  PairWalk walk(std::size_t i) const;

  // The running kernel's own answer for a pair (kernel module, or recorded at capture time).
  const KernelVerdict* kernel(std::size_t i) const;
  Tri kernel_agrees(std::size_t i) const;
  void set_kernel_answer(std::size_t i, const KernelVerdict& answer, Tri agrees);
  void clear_kernel_answers() { kernel_.clear(); }

  // Range-for gives each pair's whole decision by value: for printing a few, not for a fabric.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = PairDecision;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = PairDecision;
    Iterator(const PairList* list, std::size_t i) : list_(list), i_(i) {}
    PairDecision operator*() const { return (*list_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const PairList* list_;
    std::size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, records_.size()}; }

 private:
  friend class PairDecider;
  struct Record {
    const Function* common = nullptr;
    std::uint32_t gpu_end = 0, nvme_end = 0;  // chains_
    std::uint32_t cls = 0;
    std::uint16_t gpu_steps = 0, nvme_steps = 0;  // ChainMeet's a and b
    RouteKind route = RouteKind::kRootComplex;
  };
  struct KernelAnswer {
    KernelVerdict answer;
    Tri agrees = Tri::kUnknown;
  };
  std::vector<Record> records_;
  std::vector<PairDecider::Decided> classes_;
  std::vector<std::vector<const Function*>> chains_;      // each end's upstream chain, the end first
  std::unordered_map<std::size_t, KernelAnswer> kernel_;  // the few pairs a kernel answered
};

// The sides of a list's pairs met so far: a side is a device's chain up to the bridge where it meets
// the other device's. A fabric's pairs share a few sides per device, so work done per side (walking
// its hops) is done once each.
class SidesSeen {
 public:
  explicit SidesSeen(const PairList& pairs) : seen_(pairs.ends()) {}
  // True the first time it is asked for this end (PairList::gpu_end, nvme_end) and common bridge.
  bool first(std::uint32_t end, const Function* common);

 private:
  std::vector<std::vector<const Function*>> seen_;  // per end: the common bridges met (a handful)
};

}  // namespace p2pcheck
