// `p2pcheck topo --dot`: the PCI tree as a Graphviz graph, drawn from the same model and decisions
// as `check`. Host bridges, root ports, switches (a cluster of their ports), GPUs and NVMe are
// nodes; other functions are left out (the graph's label counts them). Every checked pair's hops
// are drawn bold and coloured by the verdicts of the pairs over them; ACS-redirecting ports have a
// red double border; with few pairs each pair is also a dashed GPU-NVMe edge in its colour.
#pragma once

#include <string>

#include "p2pcheck/checks/check.h"

namespace p2pcheck {

// At most this many pairs are drawn as their own GPU-NVMe edge; past it the colours summarise.
inline constexpr std::size_t kDotPairEdges = 16;

std::string topology_dot(const CheckReport& report);

}  // namespace p2pcheck
