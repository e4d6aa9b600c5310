// `p2pcheck fleet` as text: the summary line, failures and unknowns by cause (the hosts and the fix
// once per cause), the topology groups, the per-host table, the unreadable inputs, the RESULT line.
#pragma once

#include <string>

#include "p2pcheck/fleet/fleet.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

std::string fleet_text(const FleetReport& report, const TextStyle& style, bool verbose = false);
// "RESULT: FAIL — 3 of 24 hosts fail; 1 input unreadable" and a newline.
std::string fleet_result_line(const FleetReport& report, const TextStyle& style);
// "host-0001, host-0002 and 3 more": at most `shown` names.
std::string host_list_text(const FleetReport& report, const std::vector<std::size_t>& hosts, std::size_t shown);

}  // namespace p2pcheck
