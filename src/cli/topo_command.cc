// `p2pcheck topo`: the PCI tree with roles, link speed and width, ACS state.
#include <iostream>

#include "commands.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck::cli {

static int run_topo(const GlobalOptions& o) {
  auto source = open_source(o);
  auto info = replay_info(*source);
  MachineState state = load_machine_state(*source, Load::kPciOnly);
  if (o.json) {
    auto j = topology_json(state.topo, state.inv);
    j["identity"] = identity_json(state.machine.identity, info && replay_redacted(*info));
    if (info) j["capture"] = capture_summary_json(*info);
    std::cout << json_output(o, j) << "\n";
  } else {
    print_text(o, replay_text(info) + topology_text(state.topo, state.inv, text_style(o)));
  }
  return kExitOk;
}

Command add_topo_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("topo", "the PCI tree with roles, link speed and width, ACS state");
  sub->fallthrough();
  return {sub, [&o] { return run_topo(o); }};
}

}  // namespace p2pcheck::cli
