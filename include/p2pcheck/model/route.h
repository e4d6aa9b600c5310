// A hop of the route between a GPU and an NVMe, and what each function on it is: topology facts.
// The route itself is read off the pair's walk (rules/pair_walk.h), which the kernel's rules make.
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

// "GPU", "NVMe", or what the function is in the fabric ("switch upstream port", ...).
std::string role_of(const Function& fn, const Inventory& inv);

}  // namespace p2pcheck
