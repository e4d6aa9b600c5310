// `check --json` and `paths --json` (schema_version 2, docs/json.md; version 1, every pair in full
// with its hops, is retired): output that grows with the machine, not with GPUs x NVMe x hops. A `functions` table
// keyed by BDF (role, upstream, host bridge, link, ACS), a `decisions` table of the distinct decisions, and pairs as
// compact records referring to both, written to the stream one by one.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"

namespace p2pcheck {

inline constexpr int kCheckJsonSchemaVersion = 2;

// `functions`: every function on the upstream chain of each given device, keyed by BDF, in BDF order.
nlohmann::ordered_json functions_json(const Topology& topo, const Inventory& inv, const std::vector<Bdf>& devices);

// check --json. `head` is check_json(report) with what the caller adds (capture, plan); its
// schema_version becomes 2 and `functions` and `decisions` go before `pairs`. `head` is
// left holding the document written but its streamed tables (functions, decisions, pairs: written
// as they are made), for the caller to free when it likes (a fabric's document took as long to
// free as to write).
void write_check_json(std::ostream& out, const CheckReport& report, nlohmann::ordered_json& head, int indent);
// The whole check --json document as one value (tests, fuzzing, comparing two reports): what
// write_check_json() writes, read back.
nlohmann::ordered_json check_document(const CheckReport& report);

// paths --json of a check's pairs: each pair's route (common bridge, distance, locality) with its
// decision's verdict and map type and the way its traffic really goes (`route`: turned below the
// common bridge, redirected up to the host bridge by ACS, through the host bridge(s)). `head` is
// paths_head_json(report) (the check's `result` in it), left as write_check_json leaves it.
nlohmann::ordered_json paths_head_json(const CheckReport& report);
void write_paths_json(std::ostream& out, const CheckReport& report, nlohmann::ordered_json& head, int indent);
}  // namespace p2pcheck
