// `p2pcheck topo`: every PCI function under its host bridge, the GPUs and the NVMe, as text and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

nlohmann::ordered_json topology_json(const Topology& topo, const Inventory& inv);
// Lines fit `style.width` columns: a long device name is cut with an ellipsis, annotations carry on
// to the next line under the node. `only` (topo --paths): just these functions, and the host
// bridges and NVMe among them. `identity`: the machine's DMI and host name for the header
// (identity_line), when given.
std::string topology_text(const Topology& topo, const Inventory& inv, const TextStyle& style,
                          const std::set<Bdf>* only = nullptr, const MachineIdentity* identity = nullptr);

}  // namespace p2pcheck
