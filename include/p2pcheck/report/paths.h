// `p2pcheck paths`: each GPU-NVMe route hop by hop, as text and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

// The paths document but its tables, which write_paths_json (compact_json.h) streams.
nlohmann::ordered_json paths_json(const Topology& topo);
std::string paths_text(const Topology& topo, const Inventory& inv, const std::vector<PairPath>& paths,
                       const TextStyle& style);

}  // namespace p2pcheck
