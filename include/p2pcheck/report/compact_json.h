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
#include "p2pcheck/model/route.h"

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

// paths --json. `head` is paths_json(topo, inv, {}), left as write_check_json leaves it.
void write_paths_json(std::ostream& out, const Topology& topo, const Inventory& inv, const std::vector<PairPath>& paths,
                      nlohmann::ordered_json& head, int indent);
// The same from the pairs alone: their routes' common bridges and distances found here, each
// device's chain walked once, no hop list made (a fabric's paths are not printed hop by hop).
void write_paths_json(std::ostream& out, const Topology& topo, const Inventory& inv,
                      const std::vector<DevicePair>& pairs, nlohmann::ordered_json& head, int indent);
}  // namespace p2pcheck
