// fleet applies the output rule for names from input (source/printable.h) once, to each host's
// summary and each unreadable input as it is read: every fleet output (text, CSV, JSON, JUnit,
// HTML) then shows control characters escaped, and no host name or file name adds a line.
#pragma once

#include "p2pcheck/fleet/fleet.h"

namespace p2pcheck {

void make_printable(HostSummary& host);
void make_printable(UnreadableInput& input);

}  // namespace p2pcheck
