// `p2pcheck paths`: every GPU–NVMe pair with the hops between them.
#include <algorithm>
#include <iostream>

#include "commands.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/mounts.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck::cli {

// A path as --nvme: the check resolves it (mounts, block layer) and selects its controllers' pairs;
// the paths are that report's. Else the PCI tree alone, no check.
struct PathsInput {
  std::unique_ptr<CheckReport> report;  // when an --nvme value is a path
  MachineState state;                   // otherwise
  std::vector<DevicePair> pairs;
  const Topology& topo() const { return report ? report->topo : state.topo; }
  const Inventory& inv() const { return report ? report->inv : state.inv; }
};

static PathsInput paths_input(Input& input, const GlobalOptions& o) {
  PathsInput in;
  PairSelection selection = selection_for(input, o);
  if (std::none_of(selection.nvme.begin(), selection.nvme.end(), [](auto& s) { return is_path_selector(s); })) {
    in.state = load_state(input, Load::kPciOnly);
    in.pairs = select_pairs(in.state.topo, in.state.inv, selection);
    return in;
  }
  in.report = checked(input, o);
  for (std::size_t i = 0; i < in.report->pairs.size(); ++i) in.pairs.push_back(in.report->pairs.pair(i));
  return in;
}

static int run_paths(const GlobalOptions& o) {
  Input input = open_input(o);
  auto in = std::make_shared<PathsInput>(paths_input(input, o));
  const Topology& topo = in->topo();
  const Inventory& inv = in->inv();
  const std::vector<DevicePair>& pairs = in->pairs;
  static const std::vector<PathTarget> kNoTargets;
  const std::vector<PathTarget>& targets = in->report ? in->report->targets : kNoTargets;
  std::vector<PairPath> paths;
  if (o.json) {
    // No hops in JSON: the routes' common bridges and distances are found without them.
    auto head = std::make_shared<nlohmann::ordered_json>(paths_json(topo));
    if (!targets.empty()) (*head)["targets"] = targets_json(targets);
    write_paths_json(std::cout, topo, inv, pairs, *head, json_indent(o));
    std::cout << "\n";
    free_at_exit(head);
  } else {
    for (const DevicePair& pair : pairs) paths.push_back(describe_path(topo, inv, pair));
    print_text(o, targets_text(targets) + paths_text(topo, inv, paths, text_style(o)));
  }
  int code = kExitOk;
  if (pairs.empty()) {
    print_no_pair(topo.source_description, inv.gpus.size(), inv.nvmes.size());
    code = kExitNoPair;
  }
  free_at_exit(std::make_shared<std::vector<PairPath>>(std::move(paths)));
  free_at_exit(in);
  free_at_exit(input);
  return code;
}

Command add_paths_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("paths", "every GPU–NVMe pair with the hops between them");
  sub->fallthrough();
  return {sub, [&o] { return run_paths(o); }};
}

}  // namespace p2pcheck::cli
