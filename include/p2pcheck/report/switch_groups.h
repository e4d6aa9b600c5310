// The PCIe switches a picture draws as one box: an upstream port and its downstream ports. Where
// the port types were read, they say it; where they are unknown (an lspci, udev or hwloc import
// without config space), the tree does: below a root port, bridges alternate upstream port,
// downstream ports, upstream port of a switch below, ... and a group is drawn only where a
// downstream port hangs below an upstream port.
#pragma once

#include <vector>

#include "p2pcheck/model/topology.h"

namespace p2pcheck {

struct SwitchGroup {
  const Function* upstream = nullptr;
  std::vector<const Function*> downstream;  // in address order
  bool inferred = false;                    // told by the tree's shape, not by the port types
};

// The switches among `shown` (functions in address order): only shown ports join a group.
std::vector<SwitchGroup> switch_groups(const Topology& topo, const std::vector<const Function*>& shown);

}  // namespace p2pcheck
