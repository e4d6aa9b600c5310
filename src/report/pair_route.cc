#include "p2pcheck/report/pair_route.h"

namespace p2pcheck {

std::set<Bdf> functions_on_routes(const Topology& topo, const PairList& pairs) {
  std::set<Bdf> out;
  for (const PairDecision& d : pairs)
    for (const Function* fn : route_functions(d.walk))
      if (out.insert(fn->bdf).second)
        for (const Function* up : topo.upstream_chain(*fn)) out.insert(up->bdf);
  return out;
}

std::string route_words(const PairWalk& walk) {
  switch (walk.route) {
    case RouteKind::kBelowCommonBridge: {
      bool in_switch = walk.common && (walk.common->port_type == PortType::kUpstreamPort ||
                                       walk.common->port_type == PortType::kDownstreamPort);
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
