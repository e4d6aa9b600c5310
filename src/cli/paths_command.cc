// `p2pcheck paths`: every GPU–NVMe pair with the check's verdict, the way its traffic goes and the
// hops between them. The same check as `check` for the same selection: the same verdicts, RESULT
// and exit code.
#include <iostream>

#include "commands.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/mounts.h"
#include "p2pcheck/report/report.h"

namespace p2pcheck::cli {

static int run_paths(const GlobalOptions& o) {
  Input input = open_input(o);
  auto report = std::shared_ptr<CheckReport>(checked(input, o));
  if (o.json) {
    nlohmann::ordered_json head = paths_head_json(*report);
    if (!report->targets.empty()) head["targets"] = targets_json(report->targets);
    write_paths_json(std::cout, *report, head, json_indent(o));
    std::cout << "\n";
  } else if (o.quiet) {
    print_text(o, result_line(*report, text_style(o)));
  } else {
    TextStyle style = text_style(o);
    print_text(o, targets_text(report->targets) + paths_text(*report, style) + "\n" + result_line(*report, style));
  }
  if (report->pairs.empty())
    print_no_pair(report->topo.source_description, report->inv.gpus.size(), report->inv.nvmes.size());
  int code = exit_for(report->result);
  free_at_exit(report);
  free_at_exit(input);
  return code;
}

Command add_paths_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("paths", "every GPU–NVMe pair: its verdict, the way its traffic goes, the hops");
  sub->fallthrough();
  return {sub, [&o] { return run_paths(o); }};
}

}  // namespace p2pcheck::cli
