// The kernel's P2PDMA decision. Read beside drivers/pci/p2pdma.c (6.1 :449-542, 6.12 :575-668):
// the walk below mirrors calc_map_type_and_dist() loop for loop.
#include "p2pcheck/rules/p2pdma.h"

#include <algorithm>
#include <cstdio>

#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {
namespace {

// pci_bridge_has_acs_redir(): ACS capability present and RR, CR or EC enabled in ACS Control.
void count_acs(P2pWalk& walk, const Function* dev) {
  walk.acs_checked.push_back(dev);
  if (dev->acs.presence == Presence::kUnknown) walk.acs_unknown.push_back(dev);
  else if (dev->acs.redirect()) walk.acs_redirect.push_back(dev);
}

}  // namespace

P2pWalk walk_p2p(const Topology& topo, const Function& provider, const Function& client) {
  P2pWalk walk;
  walk.provider = &provider;
  walk.client = &client;
  std::vector<const Function*> a_chain = topo.upstream_chain(provider);
  std::vector<const Function*> b_chain = topo.upstream_chain(client);

  // while (a) { for (bb = b; bb; bb = pci_upstream_bridge(bb)) if (a == bb) goto check_b_path_acs; ... }
  for (size_t dist_a = 0; dist_a < a_chain.size(); ++dist_a) {
    const Function* a = a_chain[dist_a];
    auto hit = std::find(b_chain.begin(), b_chain.end(), a);
    if (hit == b_chain.end()) continue;
    size_t dist_b = static_cast<size_t>(hit - b_chain.begin());
    walk.common = a;
    walk.distance = static_cast<int>(dist_a + dist_b);
    walk.provider_side.assign(a_chain.begin(), a_chain.begin() + static_cast<long>(dist_a));
    walk.client_side.assign(b_chain.begin(), hit);
    // The kernel counts ACS on every `a` it visits (provider side and the common bridge), then on
    // the client side below the common bridge (check_b_path_acs).
    for (size_t i = 0; i <= dist_a; ++i) count_acs(walk, a_chain[i]);
    for (const Function* bb : walk.client_side) count_acs(walk, bb);
    return walk;
  }
  // No common bridge: distance is both whole chains (dist_a + the last dist_b); ACS not consulted.
  walk.distance = static_cast<int>(a_chain.size() + b_chain.size());
  walk.provider_side = a_chain;
  walk.client_side = b_chain;
  return walk;
}


// ---- The verdict: policy on top of the walk (map_through_host_bridge and what follows). ----


const char* to_string(MapType t) {
  switch (t) {
    case MapType::kBusAddr: return "BUS_ADDR";
    case MapType::kThruHostBridge: return "THRU_HOST_BRIDGE";
    case MapType::kNotSupported: return "NOT_SUPPORTED";
    case MapType::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kSupported: return "supported";
    case Verdict::kNotSupported: return "not_supported";
    case Verdict::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string BridgeCheck::ids() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%04x", vendor, device_id);
  return buf;
}

bool cpu_is_pre_zen_amd(const CpuInfo& cpu) { return cpu.vendor_id == "AuthenticAMD" && cpu.family >= 0 && cpu.family < 0x17; }

KernelRules kernel_rules_for(const Machine& machine, const std::optional<std::string>& assume_release) {
  KernelRules rules;
  rules.release = assume_release ? *assume_release : machine.kernel_release;
  rules.assumed = assume_release.has_value();
  rules.version = parse_kernel_version(rules.release);
  // el8/el9/el10 and SLES "-default" kernels carry backports their version number does not show.
  rules.vendor_kernel = rules.release.find(".el") != std::string::npos ||
                        rules.release.find("-default") != std::string::npos;
  if (!rules.version) {
    rules.table_note = "kernel release unknown: evaluated with the 6.1-6.12 allowlist (verified from source)";
  } else if (*rules.version < kOldestVerifiedTable) {
    rules.table_note = "kernel " + rules.version->str() +
                       " is older than 6.1: evaluated with 6.1's algorithm and the rows dated by release; "
                       "history before 6.1 is not verified (before 5.9 AMD Zen was allowlisted by root "
                       "complex ID instead of CPU family, and early kernels refused any ACS redirect)";
  } else {
    rules.table_note = "allowlist as of " + rules.version->str() +
                       (*rules.version <= KernelVersion{6, 12, 999} ? " (same table as 6.1-6.12, verified from source)"
                                                                    : " (rows newer than 6.12 are from reports)");
  }
  if (rules.vendor_kernel)
    rules.table_note += "; vendor kernel: backports may differ from upstream " +
                        (rules.version ? rules.version->str() : std::string("?")) +
                        ", the kernel module's own answer settles it";
  if (!rules.assumed) {
    rules.config_file = machine.config.file;
    if (auto value = machine.config.get("CONFIG_PCI_P2PDMA")) rules.p2pdma_enabled = *value == "y";
  }
  rules.known_bad = find_known_bad_kernel(rules.release);
  return rules;
}

namespace {

bool row_in_effect(const AllowlistEntry& row, const KernelRules& rules) {
  if (row.status == RowStatus::kPending) return false;
  KernelVersion v = rules.version.value_or(kOldestVerifiedTable);
  return row.since <= v;
}

// __host_bridge_whitelist(host, same_host_bridge).
BridgeCheck check_bridge(const Topology& topo, const std::string& id, bool same_host_bridge, const KernelRules& rules) {
  BridgeCheck check;
  check.host_bridge = id;
  auto it = topo.host_bridges.find(id);
  if (it == topo.host_bridges.end()) {
    check.passes = false;
    return check;
  }
  const HostBridge& hb = it->second;
  check.device = hb.bridge_device;
  check.device_unknown = hb.bridge_device_unknown;
  if (!hb.bridge_device) {
    // The kernel has no host bridge device to look up: never allowlisted (unless we could not tell).
    if (!check.device_unknown) check.passes = false;
    return check;
  }
  const Function& dev = topo.at(*hb.bridge_device);
  check.vendor = dev.vendor;
  check.device_id = dev.device;
  for (const AllowlistEntry& row : host_bridge_allowlist()) {
    if (row.vendor != dev.vendor || (row.device && *row.device != dev.device)) continue;
    if (row_in_effect(row, rules)) {
      if (!check.entry) check.entry = &row;
    } else if (!check.later_entry) {
      check.later_entry = &row;
    }
  }
  // The first matching row decides: REQ_SAME_HOST_BRIDGE fails across host bridges.
  check.passes = check.entry && !(check.entry->req_same_host_bridge && !same_host_bridge);
  return check;
}

std::optional<bool> tri_and(std::optional<bool> a, std::optional<bool> b) {
  if (a == false || b == false) return false;
  if (!a || !b) return std::nullopt;
  return true;
}

std::optional<bool> tri_or(std::optional<bool> a, std::optional<bool> b) {
  if (a == true || b == true) return true;
  if (!a || !b) return std::nullopt;
  return false;
}

HostCheck host_check(const Topology& topo, const Machine& machine, const KernelRules& rules,
                     const Function& provider, const Function& client) {
  HostCheck host;
  if (!machine.cpu.vendor_id.empty() && machine.cpu.family >= 0)
    host.cpu_supports = machine.cpu.vendor_id == "AuthenticAMD" && machine.cpu.family >= 0x17;
  host.same_host_bridge = provider.host_bridge == client.host_bridge;
  if (host.same_host_bridge) {
    host.bridges.push_back(check_bridge(topo, provider.host_bridge, true, rules));
    host.allowlisted = host.bridges[0].passes;
  } else {
    host.bridges.push_back(check_bridge(topo, provider.host_bridge, false, rules));
    host.bridges.push_back(check_bridge(topo, client.host_bridge, false, rules));
    host.allowlisted = tri_and(host.bridges[0].passes, host.bridges[1].passes);
  }
  host.allowed = tri_or(host.cpu_supports, host.allowlisted);
  return host;
}

std::string bridge_text(const BridgeCheck& b) {
  if (!b.device) return "host bridge " + b.host_bridge + (b.device_unknown ? " (device unknown: needs root)" : " (no 00.0 device or root port first on its bus)");
  return "host bridge " + b.host_bridge + " (" + b.ids() + " at " + b.device->str() + ")";
}

// Why the host check refused, and what kernel or change would allow it.
void explain_refusal(const Machine& machine, const KernelRules& rules, PairDecision& d) {
  char family[16];
  std::snprintf(family, sizeof family, "0x%x", machine.cpu.family);
  std::string cpu = machine.cpu.vendor_id.empty() ? "CPU unknown" : machine.cpu.vendor_id + " family " + family;
  std::vector<std::string> reasons;
  for (const BridgeCheck& b : d.host.bridges) {
    if (b.passes == true) continue;
    std::string why = bridge_text(b);
    if (b.entry && b.entry->req_same_host_bridge && !d.host.same_host_bridge)
      why += " is allowlisted only for traffic within one host bridge (REQ_SAME_HOST_BRIDGE)";
    else if (b.device)
      why += " is not on " + (rules.version ? rules.version->str() + "'s" : std::string("the")) + " P2PDMA allowlist";
    reasons.push_back(why);
    if (b.later_entry) {
      const AllowlistEntry& row = *b.later_entry;
      if (row.status == RowStatus::kPending)
        d.later = "would be allowed once the pending allowlist row for " + std::string(row.name) + " is merged (" + row.source + ")";
      else
        d.later = "allowed from kernel " + row.since.str() + " on (" + row.name + "; " + row.source + ")";
    }
  }
  d.rule = "through the root complex, and " + cpu + " is not an AMD Zen or newer CPU; " +
           (reasons.empty() ? std::string("host bridge not allowlisted") : reasons.front()) +
           (reasons.size() > 1 ? "; " + reasons[1] : "");
}

}  // namespace

PairDecision decide_pair(const Topology& topo, const Inventory& inv, const Machine& machine, const KernelRules& rules,
                         const DevicePair& pair) {
  PairDecision d;
  d.path = describe_path(topo, inv, pair);
  const P2pWalk& walk = d.path.walk;
  const Function& provider = *walk.provider;
  const Function& client = *walk.client;

  // Which map type the walk leads to (calc_map_type_and_dist before map_through_host_bridge).
  std::optional<bool> through_host;
  if (walk.common) {
    if (!walk.acs_redirect.empty()) {
      through_host = true;
      std::string list;
      for (const Function* f : walk.acs_redirect) list += (list.empty() ? "" : ";") + f->bdf.str();
      d.acs_fix = "pci=disable_acs_redir=" + list;
    } else if (!walk.acs_unknown.empty()) {
      through_host = std::nullopt;
      for (const Function* f : walk.acs_unknown)
        d.unknowns.push_back("ACS control of " + f->bdf.str() + " (" + (f->config_note.empty() ? "not readable" : f->config_note) + ")");
    } else {
      through_host = false;
    }
  } else {
    through_host = true;
  }

  if (through_host != false) {
    d.host_checked = true;
    d.host = host_check(topo, machine, rules, provider, client);
    if (!d.host.cpu_supports) d.unknowns.push_back("CPU vendor and family (no /proc/cpuinfo)");
    for (const BridgeCheck& b : d.host.bridges)
      if (b.device_unknown) d.unknowns.push_back("host bridge device of " + b.host_bridge + " (first device's port type needs root)");
  }

  if (through_host == false) {
    d.map_type = MapType::kBusAddr;
    d.rule = "common upstream bridge " + walk.common->bdf.str() + " and no ACS redirect on the path: traffic stays below it";
  } else if (through_host == true && d.host.allowed == true) {
    d.map_type = MapType::kThruHostBridge;
    d.rule = d.host.cpu_supports == true ? "through the root complex; allowed because the CPU is AMD Zen or newer (cpu_supports_p2pdma)"
                                         : "through the root complex; allowed because the host bridge is on the allowlist";
  } else if (through_host == true && d.host.allowed == false) {
    d.map_type = MapType::kNotSupported;
    explain_refusal(machine, rules, d);
  } else if (d.host.allowed == true) {
    // ACS unknown, but either outcome is allowed: supported, map type open.
    d.map_type = MapType::kUnknown;
    d.rule = "allowed either way: BUS_ADDR if no ACS redirect, else through a host bridge that passes the host check";
  } else {
    d.map_type = MapType::kUnknown;
    d.rule = "cannot decide: " + (d.unknowns.empty() ? std::string("missing facts") : d.unknowns.front());
  }
  if (walk.common && !walk.acs_redirect.empty() && d.map_type != MapType::kBusAddr)
    d.rule = "ACS redirect on " + [&] {
      std::string s;
      for (const Function* f : walk.acs_redirect) s += (s.empty() ? "" : ", ") + f->bdf.str();
      return s;
    }() + " sends the traffic up through the root complex; " + d.rule;

  d.verdict = d.map_type == MapType::kNotSupported ? Verdict::kNotSupported
              : d.map_type == MapType::kUnknown && d.host.allowed != true ? Verdict::kUnknown
                                                                          : Verdict::kSupported;
  d.distance = d.verdict == Verdict::kNotSupported ? -1 : walk.distance;
  if (d.verdict == Verdict::kUnknown) d.distance.reset();

  // What the kernel does not know, and what overrides the path rules.
  bool pre_zen = cpu_is_pre_zen_amd(machine.cpu);
  std::string way = d.map_type == MapType::kBusAddr ? "inside the switch" : "through the root complex";
  d.to_gpu = {d.verdict, d.verdict == Verdict::kSupported ? "allowed " + way : d.rule, ""};
  d.from_gpu = d.to_gpu;
  if (d.map_type == MapType::kNotSupported && pre_zen) {
    d.to_gpu.reason = "the kernel refuses it; the pre-Zen AMD root complex would pass this P2P write (NVMe writing into the GPU BAR)";
    d.to_gpu.hardware = "passes";
    d.from_gpu.reason = "the kernel refuses it, and pre-Zen AMD root complexes drop P2P reads (NVMe reading the GPU BAR) anyway";
    d.from_gpu.hardware = "dropped";
  }
  if (rules.p2pdma_enabled == false) {
    d.verdict = Verdict::kNotSupported;
    d.distance = -1;
    d.map_type = MapType::kNotSupported;
    d.rule = "kernel built without CONFIG_PCI_P2PDMA (" + rules.config_file + "): every P2PDMA call is a stub";
    d.to_gpu = d.from_gpu = {Verdict::kNotSupported, d.rule, ""};
  } else if (rules.known_bad) {
    std::string why = std::string(rules.known_bad->name) + " kernels can corrupt memory with P2PDMA: never use the fastpath here";
    d.verdict = Verdict::kNotSupported;
    d.to_gpu = d.from_gpu = {Verdict::kNotSupported, why, ""};
  } else if (!rules.p2pdma_enabled && !rules.assumed) {
    d.unknowns.push_back("CONFIG_PCI_P2PDMA (no kernel config found)");
    if (d.verdict == Verdict::kSupported) {
      d.verdict = Verdict::kUnknown;
      d.to_gpu.verdict = d.from_gpu.verdict = Verdict::kUnknown;
    }
  }
  return d;
}

}  // namespace p2pcheck
