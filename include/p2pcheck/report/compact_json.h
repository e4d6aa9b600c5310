// `check --json` (schema_version 4, docs/json.md) and `paths --json` (schema_version 2): output that
// grows with the machine, not with GPUs x NVMe x hops. A `functions` table keyed by BDF (role,
// upstream, host bridge, link, ACS), a `decisions` table of the distinct decisions (check's name no
// ACS redirect port, so pairs crossing different ports share them), check's `port_lists` of each
// side's ACS redirect ports, and pairs as compact records referring to them, each document written
// once, in order, through JsonWriter
// (source/json_writer.h): every table and record is made, written and dropped in turn.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/json_writer.h"

namespace p2pcheck {

// check --json's; version 1 (every pair in full), 2 (a pair an object repeating its locality) and 3
// (decisions rows naming each pair's ACS redirect ports) are retired.
inline constexpr int kCheckJsonSchemaVersion = 4;
// paths --json's (its own count: its records did not change with check's version 3).
inline constexpr int kPathsJsonSchemaVersion = 2;

// check --json. `head` is check_json(report) with what the caller adds (capture, plan): its members
// are written in order, and at its (empty) `pairs` member the tables (functions, decisions,
// devices, port_lists, kernel_answers) and the pairs, each made as it is written.
void write_check_json(std::ostream& out, const CheckReport& report, const nlohmann::ordered_json& head, int indent);
// The whole check --json document as one value (tests, fuzzing, comparing two reports): what
// write_check_json() writes, read back.
nlohmann::ordered_json check_document(const CheckReport& report);

// paths --json of a check's pairs: each pair's route (common bridge, distance, locality) with its
// decision's verdict and map type and the way its traffic really goes (`route`: turned below the
// common bridge, redirected up to the host bridge by ACS, through the host bridge(s)). `head` is
// paths_head_json(report) (the check's `result` in it), written as write_check_json writes its head.
nlohmann::ordered_json paths_head_json(const CheckReport& report);
void write_paths_json(std::ostream& out, const CheckReport& report, const nlohmann::ordered_json& head, int indent);

namespace report_detail {
// `head`'s members in order, `tables_and_pairs` writing in place of its `pairs` member (the tables
// go before the pairs that refer to them, and what a caller added after `pairs` stays after); a
// head without `pairs` has them written last, never left out.
void write_around_pairs(JsonWriter& out, const nlohmann::ordered_json& head,
                        const std::function<void()>& tables_and_pairs);
// The `functions` member: every function on the upstream chain of each device, keyed by BDF in BDF
// order, each row made, written and dropped in turn.
void write_functions(JsonWriter& out, const Topology& topo, const Inventory& inv, const std::vector<Bdf>& devices);
}  // namespace report_detail
}  // namespace p2pcheck
