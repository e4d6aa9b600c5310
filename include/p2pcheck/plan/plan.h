// `--plan FILE`: a server that is not built yet, described in a small TOML file (docs/plan.md),
// entered like every import: the plan is read and numbered into the model as firmware would number
// the machine (Plan), then made the sysfs tree SysfsBuilder builds for an import (plan_tree), with
// the manifest that says what a plan is ("title", "plan") and what it cannot carry: the check's
// areas ("not_carried_areas": drivers, IOMMU state, the storage stack, the kernel's own answers) and
// the files of NUMA, drivers and the machine's identity, each UNKNOWN "not in a plan".
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "p2pcheck/import/dump.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/source/memory_source.h"

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

// The planned machine as an import's tree: its functions with config space images of what the plan
// says, /proc/cpuinfo and the kernel's files, /manifest.json, and what a plan does not carry.
MemoryTree plan_tree(const Plan& plan);

// FILE read as a plan (load_plan), entered as its tree: a Source described "plan FILE", and its
// manifest as read_capture_info reads it. Throws Error("FILE:LINE", ...) on a bad plan.
OpenedDump open_plan(const std::string& file);

}  // namespace p2pcheck
