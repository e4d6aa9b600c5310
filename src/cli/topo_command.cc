// `p2pcheck topo`: the PCI tree with roles, link speed and width, ACS state; as a picture with
// --dot (Graphviz DOT) or --svg FILE (rendered by `dot`).
#include <iostream>
#include <set>

#include "commands.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/report/pair_route.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"
#include "svg_render.h"

namespace p2pcheck::cli {
namespace {

struct TopoOptions {
  bool dot = false;
  bool paths = false;
  std::string svg;
};

// `topo --paths` as text: the tree of the functions on the checked pairs' routes.
int run_topo_paths(const GlobalOptions& o, Input& input) {
  auto report = checked(input, o, Load::kEverything);
  std::set<Bdf> on_routes = functions_on_routes(report->topo, report->pairs);
  if (!o.quiet)
    print_text(o, input_text(input, o.verbose) +
                      topology_text(report->topo, report->inv, text_style(o), &on_routes, &report->machine.identity));
  free_at_exit(std::shared_ptr<CheckReport>(std::move(report)));
  free_at_exit(input);
  return kExitOk;
}

int run_topo(const GlobalOptions& o, const TopoOptions& t) {
  Input input = open_input(o);
  if (t.paths && o.json)
    throw UsageError("topo --paths is a view of the tree; `p2pcheck paths --json` gives every pair's hops");
  if (t.dot || !t.svg.empty()) {
    if (o.json) throw UsageError("topo: --json and --dot/--svg are different outputs; give one");
    // The picture colours the checked pairs: the same decisions as `check`, each function read in
    // full for the NUMA node its box shows.
    auto report = checked(input, o, Load::kEverything);
    std::string dot = topology_dot(*report, DotOptions{t.paths});
    if (!t.svg.empty()) {
      render_svg(dot, t.svg);
      if (!o.quiet) std::cerr << "p2pcheck: wrote " << t.svg << "\n";
    }
    if (t.dot) std::cout << dot;
    return kExitOk;
  }
  if (t.paths) return run_topo_paths(o, input);
  MachineState state = load_state(input, Load::kPciOnly);
  if (o.quiet && !o.json) {
    // topo has no verdict: quiet, it only reads the input (exit 0, or the error that stopped it).
  } else if (o.json) {
    auto j = topology_json(state.topo, state.inv);
    j["identity"] = identity_json(state.machine.identity);
    if (input.replay) add_input_summary(j, *input.replay);
    std::cout << json_output(o, j) << "\n";
  } else {
    print_text(o, input_text(input, o.verbose) +
                      topology_text(state.topo, state.inv, text_style(o), nullptr, &state.machine.identity));
  }
  free_at_exit(std::make_shared<MachineState>(std::move(state)));
  free_at_exit(input);
  return kExitOk;
}

}  // namespace

Command add_topo_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("topo", "the PCI tree with roles, link speed and width, ACS state");
  // Static: CLI11 writes the options here during parse, after this function has returned.
  static TopoOptions t;
  sub->add_flag("--dot", t.dot, "the tree as a Graphviz graph, each checked pair's path coloured by its verdict");
  sub->add_option("--svg", t.svg, "render that graph to FILE as SVG (needs Graphviz's dot)")->option_text("FILE");
  sub->add_flag("--paths", t.paths,
                "only the functions on the checked pairs' routes (every pair, or those of --gpu/--nvme); "
                "also with --dot/--svg");
  sub->fallthrough();
  return {sub, [&o] { return run_topo(o, t); }};
}

}  // namespace p2pcheck::cli
