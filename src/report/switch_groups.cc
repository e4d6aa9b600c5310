#include "p2pcheck/report/switch_groups.h"

#include <map>

namespace p2pcheck {
namespace {

bool may_be(const Function& fn, PortType type) {
  return fn.is_bridge() && (fn.port_type == type || fn.port_type == PortType::kUnknown);
}

}  // namespace

std::vector<SwitchGroup> switch_groups(const Topology& topo, const std::vector<const Function*>& shown) {
  std::map<Bdf, SwitchGroup> groups;
  for (const Function* fn : shown) {
    if (!may_be(*fn, PortType::kDownstreamPort)) continue;
    const Function* up = topo.upstream_bridge(*fn);
    // A switch's upstream port hangs below a root port or another switch: never on a root bus.
    if (!up || !may_be(*up, PortType::kUpstreamPort) || !topo.upstream_bridge(*up)) continue;
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
