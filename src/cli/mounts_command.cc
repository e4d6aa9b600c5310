// `p2pcheck mounts`: each mounted file system on NVMe, its stack, its controllers and, per GPU, the
// check's pair verdicts and what the stack makes of them (the ais-check volume table, with the why).
#include <iostream>

#include "commands.h"
#include "p2pcheck/report/mounts.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck::cli {

static int run_mounts(const GlobalOptions& o) {
  Input input = open_input(o);
  auto report = checked(input, o, Load::kForCheck, Targets::kMounted);
  MountsView view = mounts_view(*report);
  if (o.json)
    std::cout << json_output(o, mounts_json(*report, view)) << "\n";
  else if (o.quiet)
    print_text(o, mounts_result_line(*report, view, text_style(o)));
  else
    print_text(o, input_text(input, o.verbose) + mounts_text(*report, view, text_style(o), o.verbose));
  int code = exit_for(report->result);
  free_at_exit(std::shared_ptr<const void>(std::move(report)));
  free_at_exit(input);
  return code;
}

Command add_mounts_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand(
      "mounts", "each mounted file system on NVMe: its stack, its NVMe and whether each GPU can go P2P with it");
  sub->fallthrough();
  return {sub, [&o] { return run_mounts(o); }};
}

}  // namespace p2pcheck::cli
