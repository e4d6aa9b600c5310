// A plan file (docs/plan.md) read with toml++ and turned into the model: the functions a planned
// server will have, at the addresses firmware would give them (buses depth-first, in device order).
// plan_read.cc reads and places the devices, plan_layout.cc numbers them and makes the model.
#include "p2pcheck/plan/plan.h"

#include <toml++/toml.h>

#include "p2pcheck/plan/toml_bounds.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/memory_source.h"
#include "p2pcheck/source/printable.h"
#include "plan_builder.h"

namespace p2pcheck {
namespace plan_internal {

Plan PlanBuilder::build() {
  r_.only_keys(doc_, "the plan",
               {"description", "cpu", "kernel", "host_bridge", "root_port", "switch", "gpu", "nvme", "device"});
  Plan plan;
  // Shown in the banner and reports: escaped as every name from input (printable.h).
  plan.file = printable(r_.name());
  plan.description = printable(r_.text(doc_, "description", "the plan").value_or(""));
  read_machine(plan.state.machine);
  // Who the machine is: a plan names no host and no DMI model (unknown, said so, not absent).
  for (const char* key : {"hostname", "dmi_vendor", "dmi_product", "dmi_serial"})
    plan.state.machine.identity.why[key] = "not in a plan";
  read_host_bridges();
  read_root_ports();
  read_switches();
  read_endpoints();
  place();
  assign_buses();
  make_model(plan);
  const std::size_t gpus = plan.state.inv.gpus.size(), nvmes = plan.state.inv.nvmes.size();
  if (gpus * nvmes > kMaxPlanPairs)
    r_.fail(0, std::to_string(gpus) + " GPU and " + std::to_string(nvmes) + " NVMe functions (VFs included) make " +
                   std::to_string(gpus * nvmes) + " pairs; a plan may have at most " + std::to_string(kMaxPlanPairs) +
                   ", so that its check --json stays within what fleet reads back");
  return plan;
}

}  // namespace plan_internal

using plan_internal::kMaxPlanBytes;
using plan_internal::PlanBuilder;

Plan parse_plan(std::string_view text, const std::string& name) {
  if (text.size() > kMaxPlanBytes) throw Error(name, "larger than 1 MiB; a plan is a few kilobytes");
  check_toml_bounds(text, name);
  toml::table doc;
  try {
    doc = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw Error(name + ":" + std::to_string(e.source().begin.line), "not valid TOML: " + std::string(e.description()) +
                                                                        " (column " +
                                                                        std::to_string(e.source().begin.column) + ")");
  }
  return PlanBuilder(doc, name).build();
}

Plan load_plan(const std::string& file) {
  // Only a regular file: a FIFO would block the read forever.
  return parse_plan(read_input_file(file, kMaxPlanBytes, "the plan file", "a plan is a few kilobytes"), file);
}

UncarriedAreas plan_not_carried() {
  return {"not in a plan",
          {CheckArea::kKernelModule, CheckArea::kIommu, CheckArea::kGpuStack, CheckArea::kStorage,
           CheckArea::kRecordedVerify}};
}

std::unique_ptr<Source> plan_source(const Plan& plan) {
  return open_memory_source(std::make_shared<const MemoryTree>(), "plan " + plan.file);
}

nlohmann::ordered_json plan_summary_json(const Plan& plan) {
  nlohmann::ordered_json areas = nlohmann::ordered_json::array();
  for (CheckArea area : plan_not_carried().areas) {
    switch (area) {
      case CheckArea::kKernelModule: areas.push_back("kernel_module"); break;
      case CheckArea::kIommu: areas.push_back("iommu"); break;
      case CheckArea::kGpuStack: areas.push_back("gpu_stack"); break;
      case CheckArea::kStorage: areas.push_back("storage"); break;
      case CheckArea::kRecordedVerify: areas.push_back("recorded_verify"); break;
    }
  }
  return {{"file", plan.file}, {"description", plan.description}, {"not_carried", areas}};
}

std::string plan_selector(const Plan& plan, const std::string& value) {
  auto it = plan.names.find(value);
  return it == plan.names.end() ? value : it->second.str();
}

}  // namespace p2pcheck
