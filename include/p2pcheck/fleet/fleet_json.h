// `p2pcheck fleet --json` (schema p2pcheck.fleet, docs/json.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "p2pcheck/fleet/fleet.h"

namespace p2pcheck {

// Written in order through JsonWriter, each host's object made, written and dropped in turn.
void write_fleet_json(std::ostream& out, const FleetReport& report, int indent);
// The same document as one value (tests, fuzzing): what write_fleet_json() writes, read back.
nlohmann::ordered_json fleet_json(const FleetReport& report);

}  // namespace p2pcheck
