#include "p2pcheck/report/pair_route.h"

#include <algorithm>

namespace p2pcheck {
namespace {

void add_link(PairRoute& route, RouteLink link) {
  if (std::find(route.links.begin(), route.links.end(), link) == route.links.end()) route.links.push_back(link);
}

// `chain` is a device and its bridges below `top`; `top` null: the chain reaches its host bridge.
void add_side(PairRoute& route, const std::vector<const Function*>& chain, const Function* top) {
  for (std::size_t i = 0; i < chain.size(); ++i)
    add_link(route, {chain[i], i + 1 < chain.size() ? chain[i + 1] : top, false});
}

void add_host_bridge(PairRoute& route, const std::string& id) {
  if (std::find(route.host_bridges.begin(), route.host_bridges.end(), id) == route.host_bridges.end())
    route.host_bridges.push_back(id);
}

}  // namespace

PairRoute pair_route(const Topology& topo, const PairDecision& decision) {
  const P2pWalk& walk = decision.walk;
  PairRoute route;
  route.turn = walk.common;
  add_side(route, walk.provider_side, walk.common);
  add_side(route, walk.client_side, walk.common);
  if (!walk.common) {
    for (const auto* side : {&walk.provider_side, &walk.client_side})
      if (!side->empty()) add_host_bridge(route, side->back()->host_bridge);
    return route;
  }
  // The kernel counts redirects only where the chains meet; a redirecting port there sends the
  // pair's requests to the root complex, which routes them back down.
  if (!walk.acs_redirect.empty())
    route.kind = RouteKind::kRedirected;
  else if (!walk.acs_unknown.empty())
    route.kind = RouteKind::kRedirectUnknown;
  else
    route.kind = RouteKind::kBelowCommonBridge;
  if (route.kind == RouteKind::kBelowCommonBridge) return route;
  bool maybe = route.kind == RouteKind::kRedirectUnknown;
  std::vector<const Function*> up = topo.upstream_chain(*walk.common);
  for (std::size_t i = 0; i < up.size(); ++i) add_link(route, {up[i], i + 1 < up.size() ? up[i + 1] : nullptr, maybe});
  add_host_bridge(route, walk.common->host_bridge);
  return route;
}

std::vector<const Function*> PairRoute::functions() const {
  std::vector<const Function*> out;
  auto add = [&out](const Function* fn) {
    if (fn && std::find(out.begin(), out.end(), fn) == out.end()) out.push_back(fn);
  };
  for (const RouteLink& link : links) {
    add(link.lower);
    add(link.upper);
  }
  return out;
}

std::set<Bdf> functions_on_routes(const Topology& topo, const PairList& pairs) {
  std::set<Bdf> out;
  for (const PairDecision& d : pairs)
    for (const Function* fn : pair_route(topo, d).functions())
      if (out.insert(fn->bdf).second)
        for (const Function* up : topo.upstream_chain(*fn)) out.insert(up->bdf);
  return out;
}

std::string route_words(const PairRoute& route) {
  switch (route.kind) {
    case RouteKind::kBelowCommonBridge: {
      bool in_switch = route.turn && (route.turn->port_type == PortType::kUpstreamPort ||
                                      route.turn->port_type == PortType::kDownstreamPort);
      return in_switch ? "in switch" : "below bridge";
    }
    case RouteKind::kRedirected: return "redirected to host";
    case RouteKind::kRootComplex: return "via host bridge";
    case RouteKind::kRedirectUnknown: return "in switch or via host";
  }
  return "";
}

const char* route_kind_token(RouteKind kind) {
  switch (kind) {
    case RouteKind::kBelowCommonBridge: return "below_common_bridge";
    case RouteKind::kRedirected: return "redirected";
    case RouteKind::kRootComplex: return "root_complex";
    case RouteKind::kRedirectUnknown: return "redirect_unknown";
  }
  return "";
}

}  // namespace p2pcheck
