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

static int run_paths(const GlobalOptions& o) {
  Input input = open_input(o);
  PairSelection selection = selection_for(input, o);
  // A path as --nvme: the check resolves it (mounts, block layer); the paths are then its controllers'.
  std::vector<PathTarget> targets;
  if (std::any_of(selection.nvme.begin(), selection.nvme.end(), [](auto& s) { return is_path_selector(s); })) {
    auto report = checked(input, o);
    targets = report->targets;
    selection.nvme.clear();
    for (std::size_t i = 0; i < report->pairs.size(); ++i) {
      std::string nvme = report->pairs.pair(i).nvme.str();
      if (std::find(selection.nvme.begin(), selection.nvme.end(), nvme) == selection.nvme.end())
        selection.nvme.push_back(nvme);
    }
  }
  MachineState state = load_state(input, Load::kPciOnly);
  std::vector<DevicePair> pairs = select_pairs(state.topo, state.inv, selection);
  std::vector<PairPath> paths;
  if (o.json) {
    // No hops in JSON: the routes' common bridges and distances are found without them.
    auto head = std::make_shared<nlohmann::ordered_json>(paths_json(state.topo));
    if (!targets.empty()) (*head)["targets"] = targets_json(targets);
    write_paths_json(std::cout, state.topo, state.inv, pairs, *head, json_indent(o));
    std::cout << "\n";
    free_at_exit(head);
  } else {
    for (const DevicePair& pair : pairs) paths.push_back(describe_path(state.topo, state.inv, pair));
    print_text(o, targets_text(targets) + paths_text(state.topo, state.inv, paths, text_style(o)));
  }
  int code = kExitOk;
  if (pairs.empty()) {
    print_no_pair(state.topo.source_description, state.inv.gpus.size(), state.inv.nvmes.size());
    code = kExitNoPair;
  }
  free_at_exit(std::make_shared<std::vector<PairPath>>(std::move(paths)));
  free_at_exit(std::make_shared<std::vector<DevicePair>>(std::move(pairs)));
  free_at_exit(std::make_shared<MachineState>(std::move(state)));
  free_at_exit(input);
  return code;
}

Command add_paths_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("paths", "every GPU–NVMe pair with the hops between them");
  sub->fallthrough();
  return {sub, [&o] { return run_paths(o); }};
}

}  // namespace p2pcheck::cli
