// The one door for every input that is not this machine: a file or directory (--dump, fleet's
// inputs) or a plan (--plan), identified once (identify_input) and opened into a Source with what
// the input says about itself, its manifest: a capture's, an import's or a plan's. What a manifest
// says is read here for every command: the check's areas the input cannot carry, the names it
// gives its devices, and its summary in JSON. No caller asks which kind of input it was.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/input_kind.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/model/machine_state.h"

namespace p2pcheck {

// `path` opened by what identify_input() found (a plan is read as one, a saved check --json is
// refused as no machine); with `plan` set (--plan) it is read as a plan whatever its head shows, so a
// broken plan gets the plan reader's error. Throws Error naming `path` on input it cannot read.
OpenedDump open_input_path(const std::string& path, const ImportOptions& options, bool plan = false);
OpenedDump open_input_path(const std::string& path, const IdentifiedInput& identified, const ImportOptions& options);

// The check's parts the input cannot carry ("not_carried_areas"), each UNKNOWN with its phrase.
UncarriedAreas uncarried_areas(const CaptureInfo& info);

// The names the input gives its devices ("device_names": "gpu0" -> 0000:43:00.0), valid ones only
// (letters, digits, '-', '_', '.'; at most 64), in name order.
std::vector<std::pair<std::string, Bdf>> device_names(const CaptureInfo& info);
// What the input says of the machine beyond its files, put on the machine loaded from them: those
// names and the host bridges' ("host_bridge_names") on what they name, and where in the input a file
// it made came from ("origins": /proc/cpuinfo -> "server.toml [cpu]"), which the evidence then cites.
void describe_machine(const CaptureInfo& info, MachineState& state);
// The machine loaded from `source` as every command sees it: with what its manifest (`info`, none
// for this machine) says put on it by describe_machine(), and its identity marked redacted where the
// capture was made with --redact.
MachineState load_input_state(Source& source, const CaptureInfo* info, Load what);
// A --gpu/--nvme value that is one of those names becomes its address; anything else is returned
// unchanged for select_pairs to judge.
std::string device_selector(const CaptureInfo& info, const std::string& value);

// The input's own object in check and topo JSON: "plan" for a plan (docs/json.md), else "capture".
void add_input_summary(nlohmann::ordered_json& j, const CaptureInfo& info);

}  // namespace p2pcheck
