// The kernel's P2PDMA decision, function for function as drivers/pci/p2pdma.c has it (6.1 and 6.12
// carry the same algorithm and table). p2pcheck's own additions are in rules/verdict.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/rules/cpu.h"
#include "p2pcheck/rules/policy.h"
#include "p2pcheck/rules/tri.h"

namespace p2pcheck {

// enum pci_p2pdma_map_type, plus kUnknown where a fact p2pcheck could not read decides it.
enum class MapType { kBusAddr, kThruHostBridge, kNotSupported, kUnknown };
const char* to_string(MapType t);  // the kernel's names: "BUS_ADDR", ...

// pci_bridge_has_acs_redir() (6.1 :261, 6.12 :388): ACS capability present and RR, CR or EC set in ACS Control.
// Unknown when the extended config space could not be read (needs root).
Tri pci_bridge_has_acs_redir(const Function& dev);

// Where two upstream chains (Topology::upstream_chain, the device first) meet: the kernel's loop in
// calc_map_type_and_dist(), `while (a) { for (bb = b; bb; bb = pci_upstream_bridge(bb)) if (a == bb) ...`.
struct ChainMeet {
  bool met = false;
  // Steps up each chain to the first device of a's chain also on b's (a_chain[a] == b_chain[b]);
  // each whole chain's length when they never meet: the kernel's dist_a and dist_b.
  std::size_t a = 0, b = 0;
  // The path distance pci_p2pdma_distance() returns: the one place dist_a + dist_b is summed.
  int distance() const { return static_cast<int>(a + b); }
};
ChainMeet meet_in_chains(const std::vector<const Function*>& a_chain, const std::vector<const Function*>& b_chain);

// How a pair's traffic goes, read off the walk: the kernel counts redirects only where the chains
// meet, and a redirecting port there sends the requests to the root complex, which routes them back.
enum class RouteKind : std::uint8_t {
  kBelowCommonBridge,  // BUS_ADDR: turns at the common bridge (a switch), no redirect below it
  kRedirected,         // a common bridge, but ACS redirect sends it up to the host bridge and back
  kRootComplex,        // no common bridge: up to the host bridge(s), across the CPU fabric between two
  kRedirectUnknown,    // a common bridge, ACS unreadable: it turns there, or goes up if a port redirects
};
// The walk's route kind from where the chains meet and what count_acs() found there.
RouteKind route_kind(bool met, bool acs_redirect, bool acs_unknown);
// The host bridges a route reaches, one or two: none below a common bridge, the common bridge's
// when ACS redirects (kRedirectUnknown: maybe), else the provider's and the client's if it differs.
std::vector<std::string> route_host_bridges(RouteKind kind, const Function& provider, const Function& client,
                                            const Function* common);

// A pair's walk, the one value every view of the pair reads: what calc_map_type_and_dist() finds
// before the host check (the common upstream bridge, the distance, the devices whose ACS redirect
// bits it counts, in its order) and the route the traffic takes because of it.
struct PairWalk {
  const Function* provider = nullptr;  // the GPU: its memory is used
  const Function* client = nullptr;    // the NVMe: it DMAs to it
  // The first device of the provider's pci_upstream_bridge() chain that is also on the client's
  // chain; nullptr when the chains never meet (different root ports or host bridges, root-bus devices).
  const Function* common = nullptr;
  int distance = 0;  // ChainMeet::distance()
  // provider, then its upstream bridges up to (without) `common`; the whole chain when none.
  std::vector<const Function*> provider_side;
  std::vector<const Function*> client_side;  // likewise from the client
  // Devices the kernel checks for ACS redirect, in the order it lists them in its warning:
  // provider side up to and including `common`, then the client side below `common`.
  // Only filled when a common bridge exists (without one the kernel does not consult ACS).
  std::vector<const Function*> acs_checked;
  std::vector<const Function*> acs_redirect;  // pci_bridge_has_acs_redir() yes
  std::vector<const Function*> acs_unknown;   // pci_bridge_has_acs_redir() unknown
  // BUS_ADDR (common bridge, no redirect), THRU_HOST_BRIDGE (redirect, or no common bridge), or
  // kUnknown (no redirect seen, but some ACS unreadable).
  MapType map_type = MapType::kUnknown;
  RouteKind route = RouteKind::kRootComplex;
  // kRedirected and kRedirectUnknown: the bridges above `common` up to the root bus, which the
  // traffic climbs to the host bridge (kRedirectUnknown: only if a port redirects); else empty.
  std::vector<const Function*> above_common;
  std::vector<std::string> host_bridges;  // route_host_bridges()
  DevicePair pair() const { return {provider->bdf, client->bdf}; }
};

// calc_map_type_and_dist() up to `map_through_host_bridge:` (6.1 :449-542, 6.12 :575-668), on the
// two upstream chains (the provider's first, each device first). `provider` is the device whose
// memory is used (the GPU's VRAM BAR, an NVMe CMB), `client` the device that DMAs to it. The result
// is the same either way round except the order of acs_checked.
PairWalk calc_map_type_and_dist(const std::vector<const Function*>& provider_chain,
                                const std::vector<const Function*>& client_chain);
PairWalk calc_map_type_and_dist(const Topology& topo, const Function& provider, const Function& client);

// pci_host_bridge_dev() (6.1 :339, 6.12 :466): the first device on the host bridge's root bus, if it is 00.0 or a root
// port. The model reads it (Topology::host_bridges); this names the kernel's view of it.
struct HostBridgeDev {
  bool in_topology = false;       // the host bridge is in the topology at all
  const Function* dev = nullptr;  // nullptr: none (never allowlisted), or unknown (below)
  bool unknown = false;           // the first root-bus device's port type is unreadable (needs root)
  std::string not_carried;        // or not in the input's format: its phrase ("not in this hwloc XML")
};
HostBridgeDev pci_host_bridge_dev(const Topology& topo, const std::string& host_bridge);

// Where the allowlist rows a decision reads come from; the allowlist step names it in text and JSON.
enum class AllowlistSource {
  kUpstreamTable,  // p2pcheck's table of upstream releases (policy.h), for the kernel's version
  kRunningKernel,  // pci_p2pdma_whitelist[] read through /proc/kallsyms and /proc/kcore
  kCapture,        // the rows a capture stored (read from its machine's kernel)
  kKernelImage,    // read from a kernel image or package (--what-if-kernel FILE)
};
// "table for upstream 6.12" (or "table for upstream releases" when the version is unknown),
// "running kernel", "capture", "kernel image".
std::string allowlist_source_text(AllowlistSource source, const std::optional<KernelVersion>& version);

// The kernel's own rows as allowlist entries (names from upstream's rows where the same).
struct OwnAllowlist {
  std::string source;  // what the rows' `source` points to: where they were read
  std::vector<AllowlistEntry> rows;
};

// The table the host check reads: the kernel's own rows where they were read, else upstream's rows of
// `version`.
struct AllowlistInUse {
  AllowlistSource source = AllowlistSource::kUpstreamTable;
  std::optional<KernelVersion> version;     // the release's upstream version (nullopt: unknown)
  std::shared_ptr<const OwnAllowlist> own;  // set exactly when source != kUpstreamTable
  // A distribution kernel (backports) whose own table was not read: a host bridge missing from
  // upstream's table may be a backported row there, so its refusal is unknown, never a no.
  bool distro_unread = false;
};

// Why one host bridge passes or fails __host_bridge_whitelist().
enum class BridgeResult {
  kAllowlisted,              // its row is in effect (and REQ_SAME_HOST_BRIDGE, if set, is met)
  kNotInTopology,            // the host bridge is missing from the topology
  kNoHostBridgeDevice,       // pci_host_bridge_dev() is NULL: nothing to look up
  kDeviceUnknown,            // pci_host_bridge_dev() could not be told (needs root)
  kNotOnAllowlist,           // no row in effect on the evaluated kernel
  kOnlyWithinOneHostBridge,  // REQ_SAME_HOST_BRIDGE row, but the pair crosses host bridges
};

// __host_bridge_whitelist() for one host bridge.
struct BridgeCheck {
  std::string host_bridge;         // "0000:00"
  std::optional<Bdf> device;       // pci_host_bridge_dev(); nullopt: none, or unknown
  bool device_unknown = false;     // first root-bus device's port type unreadable (needs root)
  std::string device_not_carried;  // or not in the input's format: its phrase ("not in this hwloc XML")
  std::uint16_t vendor = 0, device_id = 0;
  const AllowlistEntry* entry = nullptr;        // row in effect on the evaluated kernel
  const AllowlistEntry* later_entry = nullptr;  // row only newer (or pending) kernels have
  BridgeResult result = BridgeResult::kNotInTopology;
  // kNotOnAllowlist of upstream's table for a distribution kernel whose own table was not read: passes unknown.
  bool distro_unread = false;
  Tri passes = Tri::kUnknown;
  std::string ids() const;  // "8086:6f00", as the kernel's allowlist and warning print them
};

// The host check of map_through_host_bridge: cpu_supports_p2pdma() || host_bridge_whitelist().
struct HostCheck {
  Tri cpu_supports = Tri::kUnknown;         // cpu_supports_p2pdma()
  CpuClass cpu_class = CpuClass::kUnknown;  // why it answered so
  std::string cpu_vendor;                   // the facts it read: CPU 0's vendor_id ("" unknown) and family
  int cpu_family = -1;
  std::string cpu_architecture;  // "x86", "powerpc", ...; empty when unknown
  bool same_host_bridge = true;
  std::vector<BridgeCheck> bridges;  // provider's host bridge, then the client's if it differs
  // The kernel release whose allowlist rows were used; nullopt: release unknown, oldest verified table.
  std::optional<KernelVersion> table_version;
  AllowlistSource table_source = AllowlistSource::kUpstreamTable;  // where the rows came from
  Tri allowlisted = Tri::kUnknown;                                 // host_bridge_whitelist()
  Tri allowed = Tri::kUnknown;                                     // cpu_supports || allowlisted
};

// Whether an allowlist row is in the table of `version` (nullopt: the oldest table we verified).
// Pending rows are in no release.
bool allowlist_row_in_kernel(const AllowlistEntry& row, const std::optional<KernelVersion>& version);

// __host_bridge_whitelist(host, same_host_bridge) (6.1 :358, 6.12 :485). The kernel's name
// starts with "__", which C++ reserves.
BridgeCheck single_host_bridge_whitelist(const Topology& topo, const std::string& host_bridge, bool same_host_bridge,
                                         const AllowlistInUse& table);
// The same with upstream's table of `version`.
BridgeCheck single_host_bridge_whitelist(const Topology& topo, const std::string& host_bridge, bool same_host_bridge,
                                         const std::optional<KernelVersion>& version);

// cpu_supports_p2pdma() || host_bridge_whitelist(provider, client) (6.1 :391, 6.12 :518):
// one host bridge must match; two must both match, neither with REQ_SAME_HOST_BRIDGE.
HostCheck host_check(const Topology& topo, const CpuInfo& cpu, const AllowlistInUse& table, const Function& provider,
                     const Function& client);

// `map_through_host_bridge:` (6.1 :526, 6.12 :652): the walk's map type after the host check. With ACS unknown the
// kernel's answer stays unknown, unless the host check passes (then it is allowed either way).
MapType map_through_host_bridge(const PairWalk& walk, const HostCheck& host);

}  // namespace p2pcheck
