#include "p2pcheck/explain/rule_text.h"

#include <cstdio>

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

std::string join_bdfs(const std::vector<const Function*>& fns, const char* separator) {
  std::string s;
  for (const Function* f : fns) s += (s.empty() ? "" : separator) + f->bdf.str();
  return s;
}

namespace {

// Failing host bridges, each with its reason, in the order the kernel checks them.
std::vector<std::string> bridge_refusals(const HostCheck& host) {
  std::vector<std::string> reasons;
  for (const BridgeCheck& b : host.bridges)
    if (b.passes != Tri::kYes) reasons.push_back(bridge_refusal_text(host, b));
  return reasons;
}

// Why the host check refused.
std::string refusal_text(const HostCheck& host) {
  char family[16];
  std::snprintf(family, sizeof family, "0x%x", host.cpu_family);
  std::string cpu = host.cpu_class == CpuClass::kNotX86 ? "a " + host.cpu_architecture + " CPU (not x86)"
                    : host.cpu_vendor.empty()           ? "CPU unknown"
                                                        : host.cpu_vendor + " family " + family;
  std::vector<std::string> reasons = bridge_refusals(host);
  return "through the root complex, and " + cpu + " is not an AMD Zen or newer CPU; " +
         (reasons.empty() ? std::string("host bridge not allowlisted") : reasons.front()) +
         (reasons.size() > 1 ? "; " + reasons[1] : "");
}

}  // namespace

std::string bridge_text(const BridgeCheck& b) {
  if (!b.device)
    return "host bridge " + b.host_bridge +
           (!b.device_unknown              ? " (no 00.0 device or root port first on its bus)"
            : b.device_not_carried.empty() ? " (device unknown: needs root)"
                                           : " (device unknown: config space " + b.device_not_carried + ")");
  return "host bridge " + b.host_bridge + " (" + b.ids() + " at " + b.device->str() + ")";
}

std::string bridge_refusal_text(const HostCheck& host, const BridgeCheck& b) {
  std::string why = bridge_text(b);
  if (b.result == BridgeResult::kOnlyWithinOneHostBridge)
    why += " is allowlisted only for traffic within one host bridge (REQ_SAME_HOST_BRIDGE)";
  else if (b.result == BridgeResult::kNotOnAllowlist && host.table_source != AllowlistSource::kUpstreamTable)
    why += " is not on this kernel's own P2PDMA allowlist (" + allowlist_source_text(host.table_source, std::nullopt) +
           ")";
  else if (b.result == BridgeResult::kNotOnAllowlist)
    why += " is not on " + (host.table_version ? host.table_version->str() + "'s" : std::string("the")) +
           " P2PDMA allowlist";
  return why;
}

std::string kernel_table_fix_text(bool from_dump, bool what_if) {
  if (what_if)
    return "give the what-if kernel's package or image instead of its release (--what-if-kernel FILE: a .rpm, .deb, "
           "vmlinuz with its System.map, or /boot): its own allowlist is read from it";
  return from_dump ? "ask for a capture taken as root on the machine (`sudo p2pcheck capture -o host.tar.zst` stores "
                     "its kernel's own allowlist), or give the kernel's package or image: --what-if-kernel FILE"
                   : "run as root (`sudo p2pcheck check`: the kernel's own allowlist is read from /proc/kcore), or "
                     "give the kernel's package or image: --what-if-kernel FILE";
}

bool refused_across_host_bridges(const PairDecision& d) {
  if (d.decided_by != DecidedBy::kHostCheckFails) return false;
  for (const BridgeCheck& b : d.host.bridges)
    if (b.passes != Tri::kYes && b.result == BridgeResult::kOnlyWithinOneHostBridge) return true;
  return false;
}

std::string unknown_text(const Unknown& u) {
  switch (u.fact) {
    case UnknownFact::kAcsControl:
      return "ACS control of " + u.function->bdf.str() + " (" +
             (u.function->config_note.empty() ? "not readable" : u.function->config_note) + ")";
    case UnknownFact::kCpu:
      return "CPU vendor and family (" + (u.not_carried.empty() ? "no /proc/cpuinfo" : u.not_carried) + ")";
    case UnknownFact::kHostBridgeDevice:
      return "host bridge device of " + u.host_bridge + " (first device's port type " +
             (u.not_carried.empty() ? "needs root" : "unknown: config space " + u.not_carried) + ")";
    case UnknownFact::kP2pdmaConfig:
      return "CONFIG_PCI_P2PDMA (" + (u.not_carried.empty() ? "no kernel config found" : u.not_carried) + ")";
    case UnknownFact::kKernelTable:
      return "the P2PDMA allowlist of this distribution kernel for host bridge " + u.host_bridge +
             " (not on upstream's table of its version, but backports may add rows; its own table was not read)";
  }
  return "";
}

std::vector<std::string> unknown_texts(const PairDecision& d) {
  std::vector<std::string> out;
  for (const Unknown& u : d.unknowns) out.push_back(unknown_text(u));
  return out;
}

std::vector<std::string> moot_texts(const PairDecision& d) {
  std::vector<std::string> out;
  for (const Unknown& u : d.moot) out.push_back(unknown_text(u));
  return out;
}

std::string no_p2pdma_text(const NoP2pdma& why) {
  switch (why.basis) {
    case P2pdmaBasis::kBeforeP2pdma:
      return "kernel " + why.release + " is older than " + kFirstP2pdmaRelease.str() +
             ", the first kernel with P2PDMA: there is no P2P DMA at all";
    case P2pdmaBasis::kDistroTable:
      return "kernel " + why.release + " is " + why.distro->os + "'s (" + why.distro->target +
             "), whose default kernel hipFile's distribution table shows built without CONFIG_PCI_P2PDMA: every "
             "P2PDMA call is a stub";
    case P2pdmaBasis::kConfig:
    case P2pdmaBasis::kWhatIfAssumed:
    case P2pdmaBasis::kUnknown: break;
  }
  return "kernel built without CONFIG_PCI_P2PDMA (" + why.config_file + "): every P2PDMA call is a stub";
}

namespace {

// The clause rule_text() opens with when ACS redirect sends a switch-local pair up, `ports` named.
std::string acs_redirect_clause(const std::string& ports) {
  return "ACS redirect on " + ports + " sends the traffic up through the root complex; ";
}

constexpr const char* kListedPorts = "the pair's listed ports";

}  // namespace

std::string rule_naming_ports(const std::string& listed_rule, const std::vector<Bdf>& ports) {
  const std::string listed = acs_redirect_clause(kListedPorts);
  if (ports.empty() || listed_rule.compare(0, listed.size(), listed) != 0) return listed_rule;
  std::string named;
  for (const Bdf& b : ports) named += (named.empty() ? "" : ", ") + b.str();
  return acs_redirect_clause(named) + listed_rule.substr(listed.size());
}

std::string rule_text(const PairDecision& d, PortNames names) {
  std::string rule;
  switch (d.decided_by) {
    case DecidedBy::kNoP2pdmaConfig: return no_p2pdma_text(*d.no_p2pdma);
    case DecidedBy::kCommonBridge:
      rule = "common upstream bridge " + d.walk.common->bdf.str() +
             " and no ACS redirect on the path: traffic stays below it";
      break;
    case DecidedBy::kCpuAllows:
      rule = "through the root complex; allowed because the CPU is AMD Zen or newer (cpu_supports_p2pdma)";
      break;
    case DecidedBy::kAllowlistAllows:
      rule = "through the root complex; allowed because the host bridge is on the allowlist";
      if (d.host.table_source != AllowlistSource::kUpstreamTable)
        rule += " (this kernel's own, from the " + allowlist_source_text(d.host.table_source, std::nullopt) + ")";
      break;
    case DecidedBy::kHostCheckFails: rule = refusal_text(d.host); break;
    case DecidedBy::kEitherWay:
      rule = "allowed either way: BUS_ADDR if no ACS redirect, else through a host bridge that passes the host check";
      break;
    case DecidedBy::kCannotDecide:
      rule = "cannot decide: " + (d.undecided_by ? unknown_text(*d.undecided_by) : std::string("missing facts"));
      break;
  }
  if (d.walk.common && !d.walk.acs_redirect.empty() && d.map_type != MapType::kBusAddr) {
    const std::string ports = names == PortNames::kListed ? kListedPorts : join_bdfs(d.walk.acs_redirect, ", ");
    rule = acs_redirect_clause(ports) + rule;
  }
  return rule;
}

std::string flow_reason_text(const PairDecision& d, const Flow& flow, PortNames names) {
  switch (flow.reason) {
    case FlowReason::kAllowed: {
      // Undecided pairs have no overall map type: the path's is the way it would go.
      const MapType type = flow.verdict == Verdict::kUnknown ? d.path_map_type : d.map_type;
      std::string way = type == MapType::kBusAddr ? "inside the switch" : "through the root complex";
      // Undecided although the path alone passes: say that, never "unknown — allowed".
      if (flow.verdict == Verdict::kUnknown)
        return "undecided: the path alone is allowed " + way + ", but what the kernel decides also needs " +
               join(unknown_texts(d), "; ");
      return "allowed " + way;
    }
    case FlowReason::kSameAsRule: return rule_text(d, names);
    case FlowReason::kPreZenWritePasses:
      return "the kernel refuses it; the pre-Zen AMD root complex would pass this P2P write (NVMe writing into the GPU "
             "BAR)";
    case FlowReason::kPreZenReadDropped:
      return "the kernel refuses it, and pre-Zen AMD root complexes drop P2P reads (NVMe reading the GPU BAR) anyway";
    case FlowReason::kKnownBadKernel:
      return std::string(d.known_bad ? d.known_bad->name : "this") +
             " kernels can corrupt memory with P2PDMA: never use the fastpath here";
  }
  return "";
}

const char* hardware_token(Hardware hardware) {
  switch (hardware) {
    case Hardware::kPasses: return "passes";
    case Hardware::kDropped: return "dropped";
    case Hardware::kAsTheKernelSays: break;
  }
  return nullptr;
}

std::string later_text(const PairDecision& d) {
  if (!d.later) return "";
  const AllowlistEntry& row = *d.later;
  if (row.status == RowStatus::kPending)
    return "would be allowed once the pending allowlist row for " + std::string(row.name) + " is merged (" +
           row.source + ")";
  return "allowed from kernel " + row.since.str() + " on (" + row.name + "; " + row.source + ")";
}

}  // namespace p2pcheck
