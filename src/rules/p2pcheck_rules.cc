// p2pcheck's rules on top of the kernel's decision (p2pdma.cc): which kernel's table to use, what
// pre-Zen AMD hardware does with each direction, kernels never to trust, and CONFIG_PCI_P2PDMA.
#include <string>

#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kSupported: return "supported";
    case Verdict::kNotSupported: return "not_supported";
    case Verdict::kUnknown: return "unknown";
  }
  return "unknown";
}

namespace {

// The kernel's answer: the walk, the host check where the path reaches the root complex, the map type.
void decide_as_the_kernel(const Topology& topo, const Machine& machine, const KernelRules& rules, PairDecision& d) {
  const PairWalk& walk = d.walk;
  if (walk.map_type == MapType::kUnknown)
    for (const Function* f : walk.acs_unknown) d.unknowns.push_back({UnknownFact::kAcsControl, f, ""});
  if (walk.map_type != MapType::kBusAddr) {
    d.host_checked = true;
    d.host = host_check(topo, machine.cpu, rules.allowlist, *walk.provider, *walk.client);
    if (d.host.cpu_supports == Tri::kUnknown)
      d.unknowns.push_back({UnknownFact::kCpu, nullptr, "", machine.not_carried({"/proc/cpuinfo"})});
    // host_bridge_whitelist() returns at cpu_supports_p2pdma() before it looks at any bridge.
    for (const BridgeCheck& b : d.host.bridges) {
      if (b.device_unknown)
        (d.host.cpu_supports == Tri::kYes ? d.moot : d.unknowns)
            .push_back({UnknownFact::kHostBridgeDevice, nullptr, b.host_bridge, b.device_not_carried});
      if (b.distro_unread)
        (d.host.cpu_supports == Tri::kYes ? d.moot : d.unknowns)
            .push_back({UnknownFact::kKernelTable, nullptr, b.host_bridge});
    }
  }
  d.map_type = map_through_host_bridge(walk, d.host);

  switch (d.map_type) {
    case MapType::kBusAddr: d.decided_by = DecidedBy::kCommonBridge; break;
    case MapType::kThruHostBridge:
      d.decided_by = d.host.cpu_supports == Tri::kYes ? DecidedBy::kCpuAllows : DecidedBy::kAllowlistAllows;
      break;
    case MapType::kNotSupported:
      d.decided_by = DecidedBy::kHostCheckFails;
      // The last failing host bridge with a newer row names the kernel that would allow it.
      for (const BridgeCheck& b : d.host.bridges)
        if (b.passes != Tri::kYes && b.later_entry) d.later = b.later_entry;
      break;
    case MapType::kUnknown:
      if (d.host.allowed == Tri::kYes) {
        d.decided_by = DecidedBy::kEitherWay;
        // Redirected or not, the pair is allowed: its ACS only says which way it goes.
        d.moot.insert(d.moot.begin(), d.unknowns.begin(), d.unknowns.end());
        d.unknowns.clear();
      } else {
        d.decided_by = DecidedBy::kCannotDecide;
        if (!d.unknowns.empty()) d.undecided_by = d.unknowns.front();
      }
      break;
  }
  d.verdict = d.map_type == MapType::kNotSupported                             ? Verdict::kNotSupported
              : d.map_type == MapType::kUnknown && d.host.allowed != Tri::kYes ? Verdict::kUnknown
                                                                               : Verdict::kSupported;
  // pci_p2pdma_distance(): -1 when refused; unknown when we cannot tell.
  if (d.verdict == Verdict::kNotSupported)
    d.distance = -1;
  else if (d.verdict == Verdict::kSupported)
    d.distance = walk.distance;
}

// What the kernel does not know: pre-Zen AMD root complexes pass P2P writes and drop P2P reads
// (seed debian-bug-1015871), so a refused pair is half wrong there.
void split_directions(const Machine& machine, PairDecision& d) {
  FlowReason reason = d.verdict == Verdict::kSupported ? FlowReason::kAllowed : FlowReason::kSameAsRule;
  d.to_gpu = d.from_gpu = {d.verdict, reason, Hardware::kAsTheKernelSays};
  if (d.map_type == MapType::kNotSupported && cpu_is_pre_zen_amd(machine.cpu)) {
    d.to_gpu = {d.verdict, FlowReason::kPreZenWritePasses, Hardware::kPasses};
    d.from_gpu = {d.verdict, FlowReason::kPreZenReadDropped, Hardware::kDropped};
  }
}

// The kernel itself, before any path rule: built without P2PDMA, known to corrupt memory, or unread.
void apply_kernel_support(const KernelRules& rules, PairDecision& d) {
  if (rules.p2pdma_enabled == Tri::kNo) {
    d.verdict = Verdict::kNotSupported;
    d.distance = -1;
    d.map_type = MapType::kNotSupported;
    d.decided_by = DecidedBy::kNoP2pdmaConfig;
    d.no_p2pdma = NoP2pdma{rules.p2pdma_basis, rules.config_file, rules.release, rules.distro};
    d.to_gpu = d.from_gpu = {Verdict::kNotSupported, FlowReason::kSameAsRule, Hardware::kAsTheKernelSays};
  } else if (rules.known_bad) {
    // The path rules stand (map type, distance); the data must not move.
    d.verdict = Verdict::kNotSupported;
    d.known_bad = rules.known_bad;
    d.to_gpu = d.from_gpu = {Verdict::kNotSupported, FlowReason::kKnownBadKernel, Hardware::kAsTheKernelSays};
  } else if (rules.p2pdma_enabled == Tri::kUnknown) {
    d.unknowns.push_back({UnknownFact::kP2pdmaConfig, nullptr, "", rules.config_not_carried});
    if (d.verdict == Verdict::kSupported) {
      d.verdict = Verdict::kUnknown;
      d.to_gpu.verdict = d.from_gpu.verdict = Verdict::kUnknown;
    }
  }
}

}  // namespace

PairDecision decide_pair(const Topology& topo, const Machine& machine, const KernelRules& rules,
                         const DevicePair& pair) {
  PairDecision d;
  d.walk = calc_map_type_and_dist(topo, topo.at(pair.gpu), topo.at(pair.nvme));
  decide_after_walk(topo, machine, rules, d);
  return d;
}

void decide_after_walk(const Topology& topo, const Machine& machine, const KernelRules& rules, PairDecision& d) {
  decide_as_the_kernel(topo, machine, rules, d);
  d.path_map_type = d.map_type;
  d.path_verdict = d.verdict;
  split_directions(machine, d);
  apply_kernel_support(rules, d);
}

}  // namespace p2pcheck
