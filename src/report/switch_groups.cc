#include "p2pcheck/report/switch_groups.h"

#include <cstddef>
#include <map>

namespace p2pcheck {
namespace {

// Bridges above `fn` up to the root bus: a root port 0, a switch's upstream port 1, its downstream
// ports 2, a switch below them 3 and 4.
std::size_t bridges_above(const Topology& topo, const Function& fn) { return topo.upstream_chain(fn).size() - 1; }

// What the port type says, or where it is unknown, the tree: upstream ports sit an odd number of
// bridges below the root bus, downstream ports an even number (not a downstream port that has
// bridges below it drawn as an upstream port, nor a switch inside each switch).
bool may_be(const Topology& topo, const Function& fn, PortType type) {
  if (!fn.is_bridge()) return false;
  if (fn.port_type != PortType::kUnknown) return fn.port_type == type;
  std::size_t above = bridges_above(topo, fn);
  return type == PortType::kUpstreamPort ? above % 2 == 1 : above >= 2 && above % 2 == 0;
}

}  // namespace

std::vector<SwitchGroup> switch_groups(const Topology& topo, const std::vector<const Function*>& shown) {
  std::map<Bdf, SwitchGroup> groups;
  for (const Function* fn : shown) {
    if (!may_be(topo, *fn, PortType::kDownstreamPort)) continue;
    const Function* up = topo.upstream_bridge(*fn);
    // A switch's upstream port hangs below a root port or another switch: never on a root bus.
    if (!up || !may_be(topo, *up, PortType::kUpstreamPort) || !topo.upstream_bridge(*up)) continue;
    SwitchGroup& group = groups[up->bdf];
    group.upstream = up;
    group.downstream.push_back(fn);
    if (fn->port_type == PortType::kUnknown || up->port_type == PortType::kUnknown) group.inferred = true;
  }
  std::vector<SwitchGroup> out;
  for (auto& [bdf, group] : groups) out.push_back(std::move(group));
  return out;
}

}  // namespace p2pcheck
