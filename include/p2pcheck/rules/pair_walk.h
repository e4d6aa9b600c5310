// A pair's route read off its walk (PairWalk, rules/p2pdma.h), for every view that shows it: the
// hops `paths`, `explain` and the JSON list, the functions whose links bound its bandwidth, the
// links the pictures colour, and its locality. Made from the walk, never by meeting the chains again.
#pragma once

#include <vector>

#include "p2pcheck/model/locality.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/rules/p2pdma.h"

namespace p2pcheck {

// The path's hops, provider (GPU) first, client (NVMe) last, the common bridge or host bridge(s)
// in between. Made when printed, not kept: a fabric's pairs share their hops many times over.
std::vector<Hop> walk_hops(const Inventory& inv, const PairWalk& walk);
// The functions of walk_hops() in the same order, without naming their roles.
std::vector<const Function*> walk_functions(const PairWalk& walk);

// One link of the route: `lower` and the bridge above it (`upper`), or its host bridge when `upper` is null.
struct RouteLink {
  const Function* lower = nullptr;
  const Function* upper = nullptr;
  // Taken only if an unreadable ACS redirects (kRedirectUnknown, above the common bridge).
  bool only_if_redirected = false;
  bool operator==(const RouteLink&) const = default;
};
// The links the traffic really crosses, each once, the provider's side first: up to the common
// bridge (or the host bridges) and, when ACS redirects there, on up to the host bridge and back.
std::vector<RouteLink> route_links(const PairWalk& walk);
// Every function on route_links(), each once, the provider first.
std::vector<const Function*> route_functions(const PairWalk& walk);

// How near the pair sits (model/locality.h), from where its walk found the chains meet.
Locality walk_locality(const Topology& topo, const PairWalk& walk);

}  // namespace p2pcheck
