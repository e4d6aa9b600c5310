// The route between a GPU and an NVMe, hop by hop, for `p2pcheck paths` and `explain`.
#pragma once

#include <string>
#include <vector>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/rules/p2pdma.h"

namespace p2pcheck {

struct Hop {
  const Function* function = nullptr;  // nullptr for a host bridge hop
  std::string host_bridge;             // "0000:40" for a host bridge hop
  std::string role;                    // "GPU", "NVMe", "switch downstream port", "root port", "host bridge"
};

struct PairPath {
  DevicePair pair;
  P2pWalk walk;            // provider = GPU, client = NVMe
  std::vector<Hop> hops;   // GPU first, NVMe last; the common bridge or host bridge(s) in between
  std::vector<std::string> host_bridges;  // host bridges the traffic crosses (none via a switch)
};

PairPath describe_path(const Topology& topo, const Inventory& inv, const DevicePair& pair);
// "GPU", "NVMe", or what the function is in the fabric ("switch upstream port", ...).
std::string role_of(const Function& fn, const Inventory& inv);

}  // namespace p2pcheck
