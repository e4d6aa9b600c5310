// `--plan FILE`: a server that is not built yet, described in a small TOML file (docs/plan.md), turned
// straight into the model the rules and the reports read (Topology, Inventory, Machine). No sysfs
// tree is made: what a plan says becomes the model; what it cannot say is listed in one place
// (plan_not_carried) and comes out UNKNOWN "not in a plan".
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

struct Plan {
  std::string file;
  std::string description;
  MachineState state;
  // The planner's names and the addresses they were given (docs/plan.md says how): "gpu0" -> 0000:03:00.0.
  std::map<std::string, Bdf> names;
};

// Reads and checks FILE. Throws Error("FILE:LINE", what was expected) on a bad plan.
Plan load_plan(const std::string& file);
// The same over text already read; `name` is what errors name.
Plan parse_plan(std::string_view text, const std::string& name);

// What a plan cannot describe (drivers, IOMMU state, block devices, the kernel's own answers): the
// checks of these parts are not run on absent files; each is UNKNOWN "not in a plan".
UncarriedAreas plan_not_carried();

// The Source for every read beyond the model: an empty in-memory tree, described as "plan FILE".
std::unique_ptr<Source> plan_source(const Plan& plan);

// {"file", "description", "not_carried"}: the `plan` object of check and topo JSON (docs/json.md).
nlohmann::ordered_json plan_summary_json(const Plan& plan);

// A --gpu/--nvme value that names a planned device ("gpu0") becomes its address; anything else is
// returned unchanged for select_pairs to judge.
std::string plan_selector(const Plan& plan, const std::string& value);

}  // namespace p2pcheck
