// `p2pcheck diff`'s outputs: text for people and JSON (schema p2pcheck.diff, docs/json.md) of a
// DriftReport (drift.h). Names from input arrive escaped (printable_summary.h); JSON escapes its own.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "p2pcheck/fleet/drift.h"

namespace p2pcheck {

// At most `max_lines` changed pairs are listed one per line; the rest are counted ("and N more").
std::string drift_text(const DriftReport& drift, std::size_t max_lines = 50);
// The last line of drift_text alone ("DIFF: WORSE — ...; result PASS -> FAIL"), for --quiet.
std::string drift_result_line(const DriftReport& drift);
// Every change, whatever the count: the document is as large as the inputs' pair lists at most.
nlohmann::ordered_json drift_json(const DriftReport& drift);

}  // namespace p2pcheck
