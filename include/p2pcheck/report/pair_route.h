// The links a pair's traffic really crosses, read off its decision's walk: the pictures colour
// them and `topo --paths` lists their functions. An ACS redirect below the common bridge sends
// the traffic up to the root complex and back, so those links are part of the route too.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "p2pcheck/model/topology.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

enum class RouteKind {
  kBelowCommonBridge,  // BUS_ADDR: turns at the common bridge (a switch), no redirect below it
  kRedirected,         // a common bridge, but ACS redirect sends it up to the host bridge and back
  kRootComplex,        // no common bridge: up to the host bridge(s), across the CPU fabric between two
  kRedirectUnknown,    // a common bridge, ACS unreadable: it turns there, or goes up if a port redirects
};

// One link: `lower` and the bridge above it (`upper`), or its host bridge when `upper` is null.
struct RouteLink {
  const Function* lower = nullptr;
  const Function* upper = nullptr;
  // Taken only if an unreadable ACS redirects (kRedirectUnknown, above the common bridge).
  bool only_if_redirected = false;
  bool operator==(const RouteLink&) const = default;
};

struct PairRoute {
  RouteKind kind = RouteKind::kRootComplex;
  const Function* turn = nullptr;  // the common bridge, when there is one
  std::vector<RouteLink> links;    // each once, the GPU's side first
  // The host bridges reached (kRedirected, kRootComplex; kRedirectUnknown: maybe), one or two.
  std::vector<std::string> host_bridges;
  bool crosses_cpu_fabric() const { return host_bridges.size() == 2; }
  // Every function on the route, each once, the GPU first.
  std::vector<const Function*> functions() const;
};

PairRoute pair_route(const Topology& topo, const PairDecision& decision);

// `topo --paths`: every function on the pairs' routes and the bridges above them up to the root
// bus, so a tree or a picture of them still hangs from its host bridges.
std::set<Bdf> functions_on_routes(const Topology& topo, const PairList& pairs);

// How a route goes, in a few words for a label: "in switch" (or "below bridge" where the common
// bridge is no switch port), "redirected to host", "via host bridge", "in switch or via host" (ACS
// unread: it turns in the switch unless a port redirects).
std::string route_words(const PairRoute& route);
// paths --json's `route.kind`: below_common_bridge, redirected, root_complex, redirect_unknown.
const char* route_kind_token(RouteKind kind);

}  // namespace p2pcheck
