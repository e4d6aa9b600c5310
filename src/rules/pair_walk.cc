// The route read off a pair's walk (pair_walk.h).
#include "p2pcheck/rules/pair_walk.h"

#include <algorithm>

namespace p2pcheck {

std::vector<Hop> walk_hops(const Inventory& inv, const PairWalk& walk) {
  std::vector<Hop> hops;
  hops.reserve(walk.provider_side.size() + walk.client_side.size() + 2);
  for (const Function* fn : walk.provider_side) hops.push_back({fn, "", role_of(*fn, inv)});
  if (walk.common) {
    hops.push_back({walk.common, "", role_of(*walk.common, inv)});
  } else {
    for (const auto& id : walk.host_bridges) hops.push_back({nullptr, id, "host bridge"});
  }
  for (auto it = walk.client_side.rbegin(); it != walk.client_side.rend(); ++it)
    hops.push_back({*it, "", role_of(**it, inv)});
  return hops;
}

std::vector<const Function*> walk_functions(const PairWalk& walk) {
  std::vector<const Function*> fns(walk.provider_side.begin(), walk.provider_side.end());
  if (walk.common) fns.push_back(walk.common);
  fns.insert(fns.end(), walk.client_side.rbegin(), walk.client_side.rend());
  return fns;
}

namespace {

void add_link(std::vector<RouteLink>& links, RouteLink link) {
  if (std::find(links.begin(), links.end(), link) == links.end()) links.push_back(link);
}

// `chain` is a device and its bridges below `top`; `top` null: the chain reaches its host bridge.
void add_side(std::vector<RouteLink>& links, const std::vector<const Function*>& chain, const Function* top,
              bool maybe) {
  for (std::size_t i = 0; i < chain.size(); ++i)
    add_link(links, {chain[i], i + 1 < chain.size() ? chain[i + 1] : top, maybe});
}

}  // namespace

std::vector<RouteLink> route_links(const PairWalk& walk) {
  std::vector<RouteLink> links;
  add_side(links, walk.provider_side, walk.common, false);
  add_side(links, walk.client_side, walk.common, false);
  if (walk.route == RouteKind::kRedirected || walk.route == RouteKind::kRedirectUnknown) {
    // Up from the common bridge to its host bridge: the redirected requests' way to the root complex.
    std::vector<const Function*> up{walk.common};
    up.insert(up.end(), walk.above_common.begin(), walk.above_common.end());
    add_side(links, up, nullptr, walk.route == RouteKind::kRedirectUnknown);
  }
  return links;
}

std::vector<const Function*> route_functions(const PairWalk& walk) {
  std::vector<const Function*> out;
  auto add = [&out](const Function* fn) {
    if (fn && std::find(out.begin(), out.end(), fn) == out.end()) out.push_back(fn);
  };
  for (const RouteLink& link : route_links(walk)) {
    add(link.lower);
    add(link.upper);
  }
  return out;
}

Locality walk_locality(const Topology& topo, const PairWalk& walk) {
  return classify_locality(topo, *walk.provider, *walk.client, walk.common, walk.provider_side.size(),
                           walk.client_side.size());
}

}  // namespace p2pcheck
