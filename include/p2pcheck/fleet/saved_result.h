// A saved `check --json` is judged again by fleet, not taken at its word: its `result` is
// recomputed from its pairs and findings by README's RESULT table (issue 33: a report whose pairs
// were all not_supported, or that had no pair at all, passed as written).
#pragma once

#include "p2pcheck/fleet/host_summary.h"

namespace p2pcheck {

// fleet's own finding (not a check's: docs/json.md, fleet): the stored result disagreed.
inline constexpr const char* kSavedResultFinding = "fleet.saved_result";

// The check's RESULT rule (checks/check.h result_for) over the saved pairs and the findings that
// concern them, under the report's own fail_on.
Result result_from_pairs_and_findings(const HostSummary& host);

// Sets host.result to result_from_pairs_and_findings(); when the stored one said otherwise, adds
// the UNKNOWN finding `fleet.saved_result` saying both, so every fleet output shows it.
void recompute_saved_result(HostSummary& host);

}  // namespace p2pcheck
