// Link health on the GPU-NVMe paths: downtrained links, and the bandwidth the slowest hop allows.
// Pure: the link speeds and widths were read with the topology.
#pragma once

#include <optional>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/pair_walk.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// link.downtrained per function on any pair's path, or one link.health PASS when none is.
std::vector<Finding> check_links(const Topology& topo, const Inventory& inv, const PairList& pairs);
// Bytes per second the slowest hop of a path can carry (after line encoding); nullopt if unknown.
std::optional<double> path_ceiling(const PairWalk& walk);

}  // namespace p2pcheck
