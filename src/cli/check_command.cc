// `p2pcheck check` (the default command): the verdict for every GPU–NVMe pair, with findings and fixes.
#include <iostream>

#include "commands.h"
#include "exports.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/mounts.h"
#include "p2pcheck/report/report.h"

namespace p2pcheck::cli {

static int run_check_command(const GlobalOptions& o, const ExportOptions& e) {
  check_export_options(e);
  Input input = open_input(o);
  auto report = checked(input, o);
  // The files first: a machine's scrape or labels never wait on a slow terminal.
  if (exports_asked(e)) write_exports(e, *report, input, o);
  // Names from input in the findings' text (a driver, a mount point) escaped for text; JSON escapes its own.
  if (!o.json) make_printable(report->findings);
  if (o.json) {
    nlohmann::ordered_json j = check_json(*report);  // the head: the tables are written as they are made
    if (input.replay) add_input_summary(j, *input.replay);
    if (!report->targets.empty()) j["targets"] = targets_json(report->targets);
    // Pair by pair: a fabric's document would not fit in memory as a whole.
    write_check_json(std::cout, *report, j, json_indent(o));
    std::cout << "\n";
    if (report->result == Result::kNoPairs)
      print_no_pair(report->source, report->inv.gpus.size(), report->inv.nvmes.size());
  } else if (o.quiet) {
    print_text(o, result_line(*report, text_style(o)));
  } else {
    print_text(
        o, targets_text(report->targets) + check_text(*report, text_style(o), o.verbose, input_text(input, o.verbose)));
  }
  int code = exit_for(report->result);
  free_at_exit(std::shared_ptr<const void>(std::move(report)));
  free_at_exit(input);
  return code;
}

Command add_check_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("check", "the verdict for every GPU–NVMe pair, with findings and fixes (default)");
  // Static: CLI11 fills it during parse, after this function has returned.
  static ExportOptions e;
  add_export_options(*sub, e);
  sub->fallthrough();
  return {sub, [&o] { return run_check_command(o, e); }};
}

}  // namespace p2pcheck::cli
