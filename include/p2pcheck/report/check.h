// `p2pcheck check`: the kernel and stack findings and every pair's verdict, as text and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

// The check document but its tables: its empty "pairs" is where write_check_json (compact_json.h)
// writes the tables and the pairs.
nlohmann::ordered_json check_json(const CheckReport& report);
// Problems first; PASS and INFO findings only when `verbose`. `input_notes` (what an imported dump
// lacked, the CLI's words) goes under the RESULT line and its limits: the answer comes first.
std::string check_text(const CheckReport& report, const TextStyle& style, bool verbose = false,
                       const std::string& input_notes = "");
// "RESULT: FAIL — 4 refused of 4 GPU–NVMe pair(s); failing: ..." and a newline: what decided the
// result first, then the pairs' tally, what is unknown and how to give it, what --fail-on left out.
std::string result_line(const CheckReport& report, const TextStyle& style);
// "storage.stack (nvme6n1, nvme7n1)": the findings of `level` that concern the pairs, by id and subject.
std::string causes_text(const CheckReport& report, Level level);
// Pair i's locality (model/locality.h), from the chains its decision walked.
Locality pair_locality(const CheckReport& report, std::size_t i);
// Pair i's code in check's pair matrix ("SW", "RC", "XA", "?"; the legend is check's).
std::string pair_code(const CheckReport& report, std::size_t i);
// check's first lines: tool, kernel, OS, CPU, how many GPUs and NVMe, the source, the machine.
std::string check_banner_text(const CheckReport& report);
// The RESULT word's terminal colour (check's line, fleet's per-host results).
const char* result_color(Result result);
// "if booted with kernel 6.8: " for a what-if, else "".
std::string what_if_prefix(const KernelRules& rules);
// A pair's decision as a `decisions` row of check --json: what pairs of one class, common bridge
// and locality share (rule, rule_id, fix, flows, host check), without the pair's own members: its
// words name no ACS redirect port (each pair lists its own, `port_lists`).
nlohmann::ordered_json decision_row_json(const CheckReport& report, const PairDecision& d);
// The same decision with the pair's own members at their places (devices, distance, path_distance,
// hops, bandwidth ceiling, the kernel's answer): explain --json.
nlohmann::ordered_json pair_decision_json(const CheckReport& report, const PairDecision& d);
// The running kernel's own answer for the pair (p2pprobe), and whether it agrees: a pair's `kernel`.
nlohmann::ordered_json kernel_answer_json(const PairDecision& d);
// `explain --json`: the envelope (schema p2pcheck.explain), the identity, then the pair's decision.
nlohmann::ordered_json explain_json(const CheckReport& report, const PairDecision& d);

}  // namespace p2pcheck
