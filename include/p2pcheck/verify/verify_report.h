// `p2pcheck verify` results as text and as the JSON document "p2pcheck.verify" (docs/json.md), and
// the copy left at kVerifyResultsPath for `p2pcheck capture`. Builds strings; the CLI prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "p2pcheck/report/report.h"
#include "p2pcheck/verify/verify.h"

namespace p2pcheck {

// What will run, shown before anything moves (with the warnings).
std::string verify_plan_text(const VerifyPlan& plan, const TextStyle& style);
std::string verify_text(const VerifyReport& report, const TextStyle& style);
nlohmann::ordered_json verify_json(const VerifyReport& report);

// "storage -> GPU", "GPU -> storage" (or CMB / p2pmem for other providers).
std::string direction_label(const PairPlan& pair, Direction direction);
// 2.06e9 -> "2.06 GB/s"
std::string rate_text(double bytes_per_second);

// Writes `doc` to `path` (parent directories created, replaced atomically). Throws Error.
void save_verify_results(const nlohmann::ordered_json& doc, const std::string& path);

}  // namespace p2pcheck
