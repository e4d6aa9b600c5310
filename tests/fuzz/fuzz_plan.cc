// A --plan file (TOML through toml++, bounded first by check_toml_bounds), entered as its tree, then
// the whole check on the planned machine as `p2pcheck --plan FILE check` and `topo --dot` render it.
#include "fuzz.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/input/input.h"
#include "p2pcheck/plan/plan.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/topo_dot.h"
#include "p2pcheck/source/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    Plan plan = parse_plan(fuzz::as_text(data, size), "plan.toml");
    auto source = open_memory_source(plan_tree(plan), "plan plan.toml");
    auto info = read_capture_info(*source);
    CheckOptions options;
    options.not_carried = uncarried_areas(*info);
    MachineState state = load_machine_state(*source, Load::kForCheck);
    describe_machine(*info, state);
    auto report = run_check(std::move(state), *source, options);
    (void)check_text(*report, TextStyle{false, true}, true);
    (void)json_text(check_document(*report));
    (void)topology_dot(*report);
  });
  return 0;
}
