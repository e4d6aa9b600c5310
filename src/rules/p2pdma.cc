// The kernel's P2PDMA decision. Read beside drivers/pci/p2pdma.c (6.1 :261-542, 6.12 :388-668):
// each function below is the kernel's function of the same name, three-valued where a fact could
// not be read. p2pcheck's own rules on top are in p2pcheck_rules.cc.
#include "p2pcheck/rules/p2pdma.h"

#include <cstdio>

namespace p2pcheck {

const char* to_string(MapType t) {
  switch (t) {
    case MapType::kBusAddr: return "BUS_ADDR";
    case MapType::kThruHostBridge: return "THRU_HOST_BRIDGE";
    case MapType::kNotSupported: return "NOT_SUPPORTED";
    case MapType::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

Tri pci_bridge_has_acs_redir(const Function& dev) {
  if (dev.acs.presence == Presence::kUnknown) return Tri::kUnknown;
  return tri(dev.acs.redirect());
}

ChainMeet meet_in_chains(const std::vector<const Function*>& a_chain, const std::vector<const Function*>& b_chain) {
  const ChainMeet apart{false, a_chain.size(), b_chain.size()};  // both whole chains walked
  // Whole chains are paths up a tree: past a device they share, they are the same up to the root
  // bus. So the kernel's first device of a's chain on b's is where their common tail begins,
  // found from the root end in a few steps instead of a chain times a chain.
  if (!a_chain.empty() && !b_chain.empty() && a_chain.size() < kLongestChain && b_chain.size() < kLongestChain) {
    std::size_t i = a_chain.size(), j = b_chain.size();
    while (i > 0 && j > 0 && a_chain[i - 1] == b_chain[j - 1]) --i, --j;
    if (i == a_chain.size()) return apart;
    return {true, i, j};
  }
  // A chain cut in a loop: the kernel's loop itself.
  // while (a) { for (bb = b; bb; bb = pci_upstream_bridge(bb)) if (a == bb) goto check_b_path_acs; ... }
  for (std::size_t i = 0; i < a_chain.size(); ++i)
    for (std::size_t j = 0; j < b_chain.size(); ++j)
      if (a_chain[i] == b_chain[j]) return {true, i, j};
  return apart;
}

RouteKind route_kind(bool met, bool acs_redirect, bool acs_unknown) {
  if (!met) return RouteKind::kRootComplex;
  if (acs_redirect) return RouteKind::kRedirected;
  return acs_unknown ? RouteKind::kRedirectUnknown : RouteKind::kBelowCommonBridge;
}

std::vector<std::string> route_host_bridges(RouteKind kind, const Function& provider, const Function& client,
                                            const Function* common) {
  switch (kind) {
    case RouteKind::kBelowCommonBridge: return {};
    case RouteKind::kRedirected:
    case RouteKind::kRedirectUnknown: return {common->host_bridge};
    case RouteKind::kRootComplex: break;
  }
  // Through the root complex: up to the provider's host bridge, across to the client's if it differs.
  if (client.host_bridge == provider.host_bridge) return {provider.host_bridge};
  return {provider.host_bridge, client.host_bridge};
}

namespace {

// The kernel's `if (pci_bridge_has_acs_redir(x)) { seq_buf_print_bus_devfn(&acs_list, x); acs_cnt++; }`.
void count_acs(PairWalk& walk, const Function* dev) {
  walk.acs_checked.push_back(dev);
  Tri redirect = pci_bridge_has_acs_redir(*dev);
  if (redirect == Tri::kUnknown)
    walk.acs_unknown.push_back(dev);
  else if (redirect == Tri::kYes)
    walk.acs_redirect.push_back(dev);
}

// After the walk: the route its ACS count gives, and (when the traffic climbs from the common
// bridge) the provider's chain above `common` (common's own chain: a tree's chains share their tail).
void route_after_walk(PairWalk& walk, const std::vector<const Function*>& provider_chain, const ChainMeet& at) {
  walk.route = route_kind(at.met, !walk.acs_redirect.empty(), !walk.acs_unknown.empty());
  if (walk.route == RouteKind::kRedirected || walk.route == RouteKind::kRedirectUnknown)
    walk.above_common.assign(provider_chain.begin() + static_cast<std::ptrdiff_t>(at.a) + 1, provider_chain.end());
  walk.host_bridges = route_host_bridges(walk.route, *walk.provider, *walk.client, walk.common);
}

}  // namespace

PairWalk calc_map_type_and_dist(const std::vector<const Function*>& provider_chain,
                                const std::vector<const Function*>& client_chain) {
  PairWalk walk;
  walk.provider = provider_chain.front();
  walk.client = client_chain.front();
  const ChainMeet at = meet_in_chains(provider_chain, client_chain);
  walk.common = at.met ? provider_chain[at.a] : nullptr;
  walk.distance = at.distance();
  walk.provider_side.assign(provider_chain.begin(), provider_chain.begin() + static_cast<std::ptrdiff_t>(at.a));
  walk.client_side.assign(client_chain.begin(), client_chain.begin() + static_cast<std::ptrdiff_t>(at.b));
  if (!walk.common) {
    // No common bridge: the kernel does not consult ACS; through the host bridge(s).
    walk.map_type = MapType::kThruHostBridge;
  } else {
    // The kernel counts ACS on every `a` it visits (provider side and the common bridge), then on
    // the client side below the common bridge (check_b_path_acs).
    for (const Function* a : walk.provider_side) count_acs(walk, a);
    count_acs(walk, walk.common);
    for (const Function* bb : walk.client_side) count_acs(walk, bb);
    // if (!acs_cnt) BUS_ADDR; else acs_redirects = true and on to map_through_host_bridge.
    walk.map_type = !walk.acs_redirect.empty()  ? MapType::kThruHostBridge
                    : !walk.acs_unknown.empty() ? MapType::kUnknown
                                                : MapType::kBusAddr;
  }
  route_after_walk(walk, provider_chain, at);
  return walk;
}

PairWalk calc_map_type_and_dist(const Topology& topo, const Function& provider, const Function& client) {
  return calc_map_type_and_dist(topo.upstream_chain(provider), topo.upstream_chain(client));
}

HostBridgeDev pci_host_bridge_dev(const Topology& topo, const std::string& host_bridge) {
  HostBridgeDev root;
  auto it = topo.host_bridges.find(host_bridge);
  if (it == topo.host_bridges.end()) return root;
  root.in_topology = true;
  root.unknown = it->second.bridge_device_unknown;
  root.not_carried = it->second.bridge_device_not_carried;
  if (it->second.bridge_device) root.dev = &topo.at(*it->second.bridge_device);
  return root;
}

std::string BridgeCheck::ids() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%04x", vendor, device_id);
  return buf;
}

bool allowlist_row_in_kernel(const AllowlistEntry& row, const std::optional<KernelVersion>& version) {
  if (row.status == RowStatus::kPending) return false;
  return row.since <= version.value_or(kOldestVerifiedTable);
}

std::string allowlist_source_text(AllowlistSource source, const std::optional<KernelVersion>& version) {
  switch (source) {
    case AllowlistSource::kRunningKernel: return "running kernel";
    case AllowlistSource::kCapture: return "capture";
    case AllowlistSource::kKernelImage: return "kernel image";
    case AllowlistSource::kUpstreamTable: break;
  }
  return version ? "table for upstream " + version->str() : std::string("table for upstream releases");
}

namespace {

// The first row in effect for the bridge's IDs, and a newer upstream row the kernel lacks.
void find_rows(const AllowlistInUse& table, BridgeCheck& check) {
  auto matches = [&](const AllowlistEntry& row) {
    return row.vendor == check.vendor && (!row.device || *row.device == check.device_id);
  };
  if (table.own)
    for (const AllowlistEntry& row : table.own->rows)
      if (!check.entry && matches(row)) check.entry = &row;
  for (const AllowlistEntry& row : host_bridge_allowlist()) {
    if (!matches(row)) continue;
    if (allowlist_row_in_kernel(row, table.version)) {
      if (!table.own && !check.entry) check.entry = &row;
    } else if (!check.later_entry) {
      check.later_entry = &row;
    }
  }
}

}  // namespace

BridgeCheck single_host_bridge_whitelist(const Topology& topo, const std::string& host_bridge, bool same_host_bridge,
                                         const AllowlistInUse& table) {
  BridgeCheck check;
  check.host_bridge = host_bridge;
  HostBridgeDev root = pci_host_bridge_dev(topo, host_bridge);
  if (!root.in_topology) {
    check.result = BridgeResult::kNotInTopology;
    check.passes = Tri::kNo;
    return check;
  }
  check.device_unknown = root.unknown;
  check.device_not_carried = root.not_carried;
  if (!root.dev) {
    // if (!root) return false; unless we could not tell whether there is one.
    check.result = root.unknown ? BridgeResult::kDeviceUnknown : BridgeResult::kNoHostBridgeDevice;
    check.passes = root.unknown ? Tri::kUnknown : Tri::kNo;
    return check;
  }
  check.device = root.dev->bdf;
  check.vendor = root.dev->vendor;
  check.device_id = root.dev->device;
  find_rows(table, check);
  // The first matching row decides: REQ_SAME_HOST_BRIDGE fails across host bridges.
  if (!check.entry)
    check.result = BridgeResult::kNotOnAllowlist;
  else if (check.entry->req_same_host_bridge && !same_host_bridge)
    check.result = BridgeResult::kOnlyWithinOneHostBridge;
  else
    check.result = BridgeResult::kAllowlisted;
  check.passes = tri(check.result == BridgeResult::kAllowlisted);
  if (check.result == BridgeResult::kNotOnAllowlist && table.distro_unread) {
    check.distro_unread = true;
    check.passes = Tri::kUnknown;
  }
  return check;
}

BridgeCheck single_host_bridge_whitelist(const Topology& topo, const std::string& host_bridge, bool same_host_bridge,
                                         const std::optional<KernelVersion>& version) {
  AllowlistInUse table;
  table.version = version;
  return single_host_bridge_whitelist(topo, host_bridge, same_host_bridge, table);
}

HostCheck host_check(const Topology& topo, const CpuInfo& cpu, const AllowlistInUse& table, const Function& provider,
                     const Function& client) {
  HostCheck host;
  host.cpu_supports = cpu_supports_p2pdma(cpu);
  host.cpu_class = classify_cpu(cpu);
  host.cpu_vendor = cpu.vendor_id;
  host.cpu_architecture = cpu.architecture;
  host.cpu_family = cpu.family;
  host.table_version = table.version;
  host.table_source = table.source;
  host.same_host_bridge = provider.host_bridge == client.host_bridge;
  if (host.same_host_bridge) {
    host.bridges.push_back(single_host_bridge_whitelist(topo, provider.host_bridge, true, table));
    host.allowlisted = host.bridges[0].passes;
  } else {
    host.bridges.push_back(single_host_bridge_whitelist(topo, provider.host_bridge, false, table));
    host.bridges.push_back(single_host_bridge_whitelist(topo, client.host_bridge, false, table));
    host.allowlisted = tri_and(host.bridges[0].passes, host.bridges[1].passes);
  }
  host.allowed = tri_or(host.cpu_supports, host.allowlisted);
  return host;
}

MapType map_through_host_bridge(const PairWalk& walk, const HostCheck& host) {
  if (walk.map_type == MapType::kBusAddr) return MapType::kBusAddr;  // `goto done`: no host check
  // THRU_HOST_BRIDGE stays; an unknown walk is allowed either way, its map type still open.
  if (host.allowed == Tri::kYes) return walk.map_type;
  if (host.allowed == Tri::kNo && walk.map_type == MapType::kThruHostBridge) return MapType::kNotSupported;
  return MapType::kUnknown;
}

}  // namespace p2pcheck
