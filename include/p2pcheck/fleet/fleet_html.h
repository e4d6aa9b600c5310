// `p2pcheck fleet --html FILE`: one static page (inline CSS, no script, nothing fetched) with the
// summary, the causes, the topology groups, the host table and each host's GPU x NVMe matrix.
// Well-formed XHTML, so both HTML and XML parsers read it.
#pragma once

#include <string>

#include "p2pcheck/fleet/fleet.h"

namespace p2pcheck {

std::string fleet_html(const FleetReport& report);

}  // namespace p2pcheck
