// `p2pcheck diff BASELINE [CURRENT]`: what changed between a baseline result of a machine and now,
// and whether it got worse (fleet/drift.h). Each side is a capture, a dump or a saved check --json;
// CURRENT left out is the machine the global options select (this one, --root, --dump).
#include <iostream>

#include "commands.h"
#include "host_input.h"
#include "p2pcheck/fleet/drift_view.h"
#include "p2pcheck/fleet/printable_summary.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck::cli {

namespace {

struct DiffOptions {
  std::string baseline, current;
};

int run_diff_command(const GlobalOptions& o, const DiffOptions& d) {
  if (!d.current.empty() && (!o.root.empty() || !o.dump.empty() || !o.plan.empty()))
    throw UsageError("diff takes CURRENT either as its second argument or from --root/--dump/--plan, not both");
  // The baseline first: an unreadable one stops before the machine is read.
  HostSummary baseline = named_host(d.baseline, "baseline", o);
  HostSummary current = d.current.empty() ? selected_host(o).summary : named_host(d.current, "current", o);
  make_printable(baseline);
  make_printable(current);
  DriftReport drift = compare_hosts(baseline, current);
  if (o.json) {
    std::cout << json_output(o, drift_json(drift)) << "\n";
  } else {
    print_text(o, o.quiet ? drift_result_line(drift) : drift_text(drift));
  }
  return drift.overall == Change::kWorse ? kExitFail : kExitOk;
}

}  // namespace

Command add_diff_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub =
      app.add_subcommand("diff", "what changed since a baseline (pairs, ACS ports, checks) and if it got worse");
  // Static: CLI11 fills these during parse, after this function has returned.
  static DiffOptions d;
  sub->add_option("baseline", d.baseline, "the result accepted before: a saved check --json, a capture or a dump")
      ->required()
      ->option_text("BASELINE");
  sub->add_option("current", d.current,
                  "now: a saved check --json, a capture or a dump (default: the machine --root/--dump/live selects)")
      ->option_text("CURRENT");
  sub->fallthrough();
  return {sub, [&o] { return run_diff_command(o, d); }};
}

}  // namespace p2pcheck::cli
