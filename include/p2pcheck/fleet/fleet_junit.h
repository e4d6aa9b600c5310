// `p2pcheck fleet --junit FILE`: JUnit XML as CI servers read it. One <testsuite> per host, one
// <testcase> per check (finding) and per GPU-NVMe pair: a FAIL that counts toward the result is a
// <failure>, an UNKNOWN is <skipped> (it could not be decided), the rest pass. Unreadable inputs are
// one more suite whose cases are <error>s.
#pragma once

#include <string>

#include "p2pcheck/fleet/fleet.h"

namespace p2pcheck {

std::string fleet_junit(const FleetReport& report);

}  // namespace p2pcheck
