// A plan file (docs/plan.md) read with toml++ and turned into the model: the functions a planned
// server will have, at the addresses firmware would give them (buses depth-first, in device order).
// plan_read.cc reads and places the devices, plan_layout.cc numbers them and makes the model.
#include "p2pcheck/plan/plan.h"

#include <toml++/toml.h>

#include "p2pcheck/plan/toml_bounds.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
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

}  // namespace p2pcheck
