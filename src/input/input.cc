// Opening every input through one door, and what each says of itself (input.h).
#include "p2pcheck/input/input.h"

#include <algorithm>
#include <cctype>

#include "p2pcheck/plan/plan.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"

namespace p2pcheck {
namespace {

// A manifest's string member, or "" (manifests are read from input: any member may be missing).
const nlohmann::ordered_json* member(const CaptureInfo& info, const char* key) {
  auto it = info.manifest.find(key);
  return it == info.manifest.end() ? nullptr : &*it;
}

// As a plan gives names (plan_builder.h): nothing to escape, nothing to split a shell word on.
bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

OpenedDump open_input_path(const std::string& path, const ImportOptions& options, bool plan) {
  if (plan) return open_plan(path);
  return open_input_path(path, identify_input(path), options);
}

OpenedDump open_input_path(const std::string& path, const IdentifiedInput& identified, const ImportOptions& options) {
  if (identified.kind == InputKind::kPlan) return open_plan(path);
  return open_dump(path, identified, options);
}

UncarriedAreas uncarried_areas(const CaptureInfo& info) {
  static const std::pair<const char*, CheckArea> kAreas[] = {{"kernel_module", CheckArea::kKernelModule},
                                                             {"iommu", CheckArea::kIommu},
                                                             {"gpu_stack", CheckArea::kGpuStack},
                                                             {"storage", CheckArea::kStorage},
                                                             {"recorded_verify", CheckArea::kRecordedVerify}};
  UncarriedAreas out;
  const auto* areas = member(info, "not_carried_areas");
  if (!areas || !areas->is_array() || info.not_carried.phrase.empty()) return out;
  out.why = info.not_carried.phrase;
  for (const auto& [name, area] : kAreas)
    if (std::find(areas->begin(), areas->end(), name) != areas->end()) out.areas.push_back(area);
  return out;
}

std::vector<std::pair<std::string, Bdf>> device_names(const CaptureInfo& info) {
  std::vector<std::pair<std::string, Bdf>> out;
  const auto* names = member(info, "device_names");
  if (!names || !names->is_object()) return out;
  for (const auto& [name, address] : names->items()) {
    auto bdf = address.is_string() ? Bdf::parse(address.get<std::string>()) : std::nullopt;
    if (bdf && valid_name(name)) out.emplace_back(name, *bdf);
  }
  std::sort(out.begin(), out.end());
  return out;
}

MachineState load_input_state(Source& source, const CaptureInfo* info, Load what) {
  MachineState state = load_machine_state(source, what);
  if (!info) return state;
  const auto* redacted = member(*info, "redacted");
  state.machine.identity.redacted = redacted && redacted->is_boolean() && redacted->get<bool>();
  describe_machine(*info, state);
  return state;
}

void describe_machine(const CaptureInfo& info, MachineState& state) {
  Topology& topo = state.topo;
  for (const auto& [name, bdf] : device_names(info))
    if (auto it = topo.functions.find(bdf); it != topo.functions.end()) it->second.name = name;
  if (const auto* bridges = member(info, "host_bridge_names"); bridges && bridges->is_object())
    for (const auto& [id, name] : bridges->items())
      if (auto it = topo.host_bridges.find(id);
          it != topo.host_bridges.end() && name.is_string() && valid_name(name.get<std::string>()))
        it->second.name = name.get<std::string>();
  const auto* origins = member(info, "origins");
  if (!origins || !origins->is_object()) return;
  // Printable, as every name from input that reaches a report (the manifest is input).
  auto origin = [&](std::string& file) {
    auto it = origins->find(file);
    if (it != origins->end() && it->is_string()) file = printable(it->get<std::string>());
  };
  origin(state.machine.cpu.evidence_file);
  origin(state.machine.config.file);
  for (std::string& tried : state.machine.config.tried) origin(tried);
}

std::string device_selector(const CaptureInfo& info, const std::string& value) {
  for (const auto& [name, bdf] : device_names(info))
    if (name == value) return bdf.str();
  return value;
}

void add_input_summary(nlohmann::ordered_json& j, const CaptureInfo& info) {
  if (info.format != "plan") {
    j["capture"] = capture_summary_json(info);
    return;
  }
  const auto* plan = member(info, "plan");
  if (plan && plan->is_object()) j["plan"] = *plan;
}

}  // namespace p2pcheck
