// JSON schema_version 2 of `check --json` and `paths --json` (`--json-schema 2`, docs/json.md):
// output that grows with the machine, not with GPUs x NVMe x hops. A `functions` table keyed by BDF
// (role, upstream, host bridge, link, ACS), a `decisions` table of the distinct decisions, and
// pairs as compact records referring to both, written to the stream one by one.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/model/route.h"

namespace p2pcheck {

inline constexpr int kCompactJsonSchemaVersion = 2;

// `functions`: every function on the upstream chain of each given device, keyed by BDF, in BDF order.
nlohmann::ordered_json functions_json(const Topology& topo, const Inventory& inv, const std::vector<Bdf>& devices);

// A version 2 pair as version 1 says it, less its hops, distances, bandwidth and kernel answer: its
// decision's members (common bridge and ACS redirect ports included: a decision is shared only by
// pairs with the same ones) with the fix's devices named where they are the pair's own GPU and NVMe.
nlohmann::ordered_json pair_as_version_1(const nlohmann::ordered_json& decision, const std::string& gpu,
                                         const std::string& nvme);

// check --json, version 2. `head` is check_json(report, false) with what the caller adds (capture,
// plan); its schema_version becomes 2 and `functions` and `decisions` go before `pairs`. `head` is
// left holding the document written but its streamed tables (functions, decisions, pairs: written
// as they are made), for the caller to free when it likes (a fabric's document took as long to
// free as to write).
void write_check_json_v2(std::ostream& out, const CheckReport& report, nlohmann::ordered_json& head, int indent);

// paths --json, version 2. `head` is paths_json(topo, inv, {}), left as write_check_json_v2 leaves it.
void write_paths_json_v2(std::ostream& out, const Topology& topo, const Inventory& inv,
                         const std::vector<PairPath>& paths, nlohmann::ordered_json& head, int indent);
// The same from the pairs alone: their routes' common bridges and distances found here, each
// device's chain walked once, no hop list made (a fabric's paths are not printed hop by hop).
void write_paths_json_v2(std::ostream& out, const Topology& topo, const Inventory& inv,
                         const std::vector<DevicePair>& pairs, nlohmann::ordered_json& head, int indent);
}  // namespace p2pcheck
