// `p2pcheck topo --dot`: the PCI tree as a Graphviz graph, drawn from the same model and decisions
// as `check`, left to right (CPU, host bridges, root ports, switches, devices) so that a server
// with many GPUs and NVMe fits a screen. Host bridges, root ports, switches (a box around their
// ports, inferred from the tree where port types are unknown), GPUs and NVMe are nodes, inside a
// box per NUMA node where the functions' NUMA node is known; other functions are left out (the
// legend counts them). Every checked pair colours the links it really crosses (pair_route.h: up
// to the host bridge where ACS redirect sends it there) by its verdict; each GPU and NVMe lists
// its peers by verdict and route (peer_summary.h); ACS-redirecting ports have a red double border.
#pragma once

#include <string>

#include "p2pcheck/checks/check.h"

namespace p2pcheck {

struct DotOptions {
  bool paths_only = false;  // `topo --paths`: only the functions on the checked pairs' routes
};

std::string topology_dot(const CheckReport& report, const DotOptions& options = {});

}  // namespace p2pcheck
