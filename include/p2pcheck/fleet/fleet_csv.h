// `p2pcheck fleet --csv`: one row per host (RFC 4180 quoting), then one per unreadable input, for
// spreadsheets: host, input, format, result, pairs by verdict, causes, topology and its group.
#pragma once

#include <string>

#include "p2pcheck/fleet/fleet.h"

namespace p2pcheck {

std::string fleet_csv(const FleetReport& report);

}  // namespace p2pcheck
