// `p2pcheck fleet INPUT...`: one report over many machines (captures, imports, directories of
// them, saved check --json files), as text, JSON, CSV, JUnit XML and one HTML page.
#include "fleet_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <sys/stat.h>

#include "output_file.h"
#include "p2pcheck/fleet/fleet.h"
#include "p2pcheck/fleet/fleet_csv.h"
#include "p2pcheck/fleet/fleet_html.h"
#include "p2pcheck/fleet/fleet_json.h"
#include "p2pcheck/fleet/fleet_junit.h"
#include "p2pcheck/fleet/fleet_text.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/printable.h"

namespace p2pcheck::cli {
namespace {

struct FleetCommandOptions {
  std::vector<std::string> inputs;
  unsigned jobs = 0;
  std::string junit, html;
  bool csv = false;
};

int exit_for(FleetResult result) {
  switch (result) {
    case FleetResult::kPass: return kExitOk;
    case FleetResult::kFail: return kExitFail;
    case FleetResult::kUnknown: return kExitUnknown;
    case FleetResult::kNoPairs: return kExitNoPair;
    case FleetResult::kUnreadable: return kExitInput;
  }
  return kExitInput;
}

int run_fleet_command(const GlobalOptions& o, const FleetCommandOptions& f) {
  if (!o.root.empty() || !o.dump.empty())
    throw UsageError("fleet takes its machines as arguments (p2pcheck fleet FILE|DIR...), not --root or --dump");
  if (!o.selection.gpu.empty() || !o.selection.nvme.empty())
    throw UsageError(
        "fleet checks each machine's pairs (those its capture recorded with capture --gpu/--nvme, else every pair); "
        "--gpu and --nvme apply to one machine");
  if (o.json && f.csv) throw UsageError("--json and --csv both print to stdout; pick one");
  FleetOptions options;
  options.jobs = f.jobs;
  options.check = check_options(o);
  std::vector<UnreadableInput> unreadable;
  std::vector<std::string> skipped;
  std::vector<std::string> inputs = expand_inputs(f.inputs, unreadable, skipped);
  if (inputs.empty() && unreadable.empty() && !skipped.empty())
    throw Error(f.inputs.front(), "no capture, dump or check --json in it: " + std::to_string(skipped.size()) +
                                      " file(s) that are none (" + printable(skipped.front()) + ", ...)");
  // Progress on stderr: rewritten in place on a terminal, about every tenth otherwise (logs).
  bool tty = isatty(STDERR_FILENO);
  if (!o.quiet)
    options.progress = [tty](std::size_t done, std::size_t total) {
      std::size_t step = std::max<std::size_t>(1, total / 10);
      if (tty)
        std::cerr << "\rp2pcheck fleet: " << done << "/" << total << " inputs read" << (done == total ? "\n" : "")
                  << std::flush;
      else if (done % step == 0 || done == total)
        std::cerr << "p2pcheck fleet: " << done << "/" << total << " inputs read\n";
    };
  FleetReport report = run_fleet(inputs, std::move(unreadable), options);
  for (const auto& path : skipped) report.skipped.push_back(printable(path));
  if (!f.junit.empty()) write_whole_file(f.junit, fleet_junit(report));
  if (!f.html.empty()) write_whole_file(f.html, fleet_html(report));
  if (o.json) {
    write_fleet_json(std::cout, report, json_indent(o));
    std::cout << "\n";
  } else if (f.csv)
    std::cout << fleet_csv(report);
  else if (o.quiet)
    print_text(o, fleet_result_line(report, text_style(o)));
  else
    print_text(o, fleet_text(report, text_style(o), o.verbose));
  return exit_for(report.result);
}

}  // namespace

Command add_fleet_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub = app.add_subcommand("fleet", "one report over many machines: captures, dumps, directories, check --json");
  // Static: CLI11 fills these during parse, after this function has returned.
  static FleetCommandOptions f;
  sub->add_option("inputs", f.inputs,
                  "captures, --dump inputs (archives, lspci/udev/hwloc files, sosreports), saved check --json files, "
                  "or directories of them")
      ->required()
      ->option_text("INPUT...");
  sub->add_option("-j,--jobs", f.jobs, "inputs read at once (default: one per core)")
      ->check(CLI::Range(1u, 256u))
      ->option_text("N");
  sub->add_option("--junit", f.junit,
                  "also write JUnit XML to FILE: a testsuite per host, a testcase per check and pair")
      ->option_text("FILE");
  sub->add_option("--html", f.html, "also write one static HTML page to FILE: summary, causes, each host's matrix")
      ->option_text("FILE");
  sub->add_flag("--csv", f.csv, "print one CSV row per host (and per unreadable input) instead of the text");
  sub->fallthrough();
  return {sub, [&o] { return run_fleet_command(o, f); }};
}

}  // namespace p2pcheck::cli
