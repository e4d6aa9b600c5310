// `p2pcheck paths`: each GPU-NVMe route hop by hop, as text and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

// The paths document but its tables: its empty "pairs" is where write_paths_json (compact_json.h)
// writes them and the pairs.
nlohmann::ordered_json paths_json(const Topology& topo);
// Each pair of a check: its verdict and rule, the way its traffic goes (pair_route.h: up to the host
// bridge and back where ACS redirects it), its locality and its hops.
std::string paths_text(const CheckReport& report, const TextStyle& style);

}  // namespace p2pcheck
