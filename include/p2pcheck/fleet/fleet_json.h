// `p2pcheck fleet --json` (schema p2pcheck.fleet, docs/json.md).
#pragma once

#include <nlohmann/json.hpp>

#include "p2pcheck/fleet/fleet.h"

namespace p2pcheck {

nlohmann::ordered_json fleet_json(const FleetReport& report);

}  // namespace p2pcheck
