// The route between a GPU and an NVMe, hop by hop: a topology fact for `p2pcheck paths`, `explain`
// and the link checks. Whether the kernel lets traffic take it is rules/' business (rules/p2pdma.h).
#pragma once

#include <string>
#include <vector>

#include "p2pcheck/model/inventory.h"

namespace p2pcheck {

struct Hop {
  const Function* function = nullptr;  // nullptr for a host bridge hop
  std::string host_bridge;             // "0000:40" for a host bridge hop
  std::string role;                    // "GPU", "NVMe", "switch downstream port", "root port", "host bridge"
};

struct PairPath {
  DevicePair pair;
  // The first device of the GPU's upstream chain that is also on the NVMe's (Topology::upstream_chain);
  // nullptr when the chains never meet (different root ports or host bridges, root-bus devices).
  const Function* common = nullptr;
  int distance = 0;                        // steps from both ends up to `common`; both whole chains without one
  std::vector<const Function*> gpu_side;   // the GPU, then its bridges below `common`; the whole chain without one
  std::vector<const Function*> nvme_side;  // likewise from the NVMe
  std::vector<std::string> host_bridges;   // host bridges the traffic crosses (none via a switch)
};

// The route's hops, GPU first, NVMe last, the common bridge or host bridge(s) in between. Made when
// printed, not kept: a fabric's pairs share their hops many times over.
std::vector<Hop> path_hops(const Inventory& inv, const PairPath& path);
// The functions of path_hops() in the same order, without naming their roles.
std::vector<const Function*> path_functions(const PairPath& path);

PairPath describe_path(const Topology& topo, const Inventory& inv, const DevicePair& pair);
// The same from where the chains meet (a = GPU, b = NVMe), when the caller has it already.
PairPath describe_path(const Inventory& inv, const UpstreamMeeting& meeting);
// "GPU", "NVMe", or what the function is in the fabric ("switch upstream port", ...).
std::string role_of(const Function& fn, const Inventory& inv);

}  // namespace p2pcheck
