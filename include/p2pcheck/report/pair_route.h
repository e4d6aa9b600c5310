// A pair's route in words, read off its walk (rules/p2pdma.h, rules/pair_walk.h): what the pictures
// write beside the links they colour, paths --json's route kind, and the functions `topo --paths` draws.
#pragma once

#include <set>
#include <string>

#include "p2pcheck/model/topology.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/pair_walk.h"

namespace p2pcheck {

// `topo --paths`: every function on the pairs' routes and the bridges above them up to the root
// bus, so a tree or a picture of them still hangs from its host bridges.
std::set<Bdf> functions_on_routes(const Topology& topo, const PairList& pairs);

// How a route goes, in a few words for a label: "in switch" (or "below bridge" where the common
// bridge is no switch port), "redirected to host", "via host bridge", "in switch or via host" (ACS
// unread: it turns in the switch unless a port redirects).
std::string route_words(const PairWalk& walk);
// paths --json's `route.kind`: below_common_bridge, redirected, root_complex, redirect_unknown.
const char* route_kind_token(RouteKind kind);

}  // namespace p2pcheck
