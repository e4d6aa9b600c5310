// The p2pcheck command: registers the global options and each subcommand, parses, and runs the one
// chosen (check when none is). Commands print and pick exit codes; main turns errors into 3 and 5.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "commands.h"
#include "completion_names.h"
#include "fleet_command.h"
#include "heap.h"
#include "help_format.h"
#include "kmod_command.h"
#include "man_page.h"
#include "options.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "usage_errors.h"
#include "verify_command.h"
#include "version.h"
#include "watch_command.h"

namespace {

// The input a last-resort error message names: "FILE: " for --dump/--root/--plan, else nothing.
std::string input_named(const p2pcheck::cli::GlobalOptions& o) {
  if (!o.dump.empty()) return o.dump + ": ";
  if (!o.root.empty()) return o.root + ": ";
  if (!o.plan.empty()) return o.plan + ": ";
  return "";
}

// A write that failed (a full disk, /dev/full, a closed stdout) is exit 5 with a message, never
// success: std::cout only fails at the flush when its buffer held everything.
int checked_exit(int rc) {
  errno = 0;
  std::cout.flush();
  bool failed = !std::cout;
  failed = std::fflush(stdout) != 0 || failed || std::ferror(stdout);
  if (!failed) return rc;
  std::cerr << "p2pcheck: cannot write the output to standard output: "
            << (errno ? std::strerror(errno) : "write error") << "\n";
  return p2pcheck::cli::kExitInput;
}

// Each subcommand's --help: the global options it takes, and its examples.
void finish_subcommand_help(CLI::App& app, const std::vector<p2pcheck::cli::Command>& commands) {
  using namespace p2pcheck::cli;
  std::vector<CLI::App*> takes_global_options;  // verify has its own (it is live only)
  for (const Command& command : commands) takes_global_options.push_back(command.app);
  list_global_options_in_subcommand_help(app, takes_global_options);
  app.get_subcommand("verify")->footer(help_examples("verify"));
  for (const char* parent : {"kmod", "slurm"})
    for (CLI::App* sub : app.get_subcommand(parent)->get_subcommands({}))
      sub->footer(help_examples(std::string(parent) + " " + sub->get_name()));
}

// p2pcheck(1) from the roff template at `man_source` and the options registered on `app`.
void print_man_page(const CLI::App& app, const std::string& man_source) {
  using namespace p2pcheck;
  using namespace p2pcheck::cli;
  std::ifstream in(man_source);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw Error(man_source, "cannot read the man page template");
  std::cout << man_page(app, text.str(), man_source, version_text());
}

// Long: one registration line per command (watch made it 61); splitting it would hide the list.
int run(int argc, char** argv) {
  using namespace p2pcheck;
  using namespace p2pcheck::cli;
  prefer_huge_pages_for_the_heap();
  CLI::App app{"p2pcheck: can each GPU move data straight to and from each NVMe drive by PCIe P2PDMA?"};
  // Before any subcommand is added: each copies its parent's formatter.
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_version_flag("-V,--version", version_text());
  app.require_subcommand(0, 1);
  GlobalOptions o;
  add_global_options(app, o);
  // Registration order is the order --help lists them in.
  std::vector<Command> commands = {add_check_command(app, o), add_explain_command(app, o), add_topo_command(app, o),
                                   add_paths_command(app, o), add_capture_command(app, o), add_kmod_command(app, o)};
  commands.push_back(add_mounts_command(app, o));
  commands.push_back(add_fleet_command(app, o));
  commands.push_back(add_diff_command(app, o));
  commands.push_back(add_slurm_command(app, o));
  commands.push_back(add_watch_command(app, o));
  auto verify = add_verify_command(app);
  // The build writes p2pcheck(1) with this from these registrations and src/cli/p2pcheck.1.in
  // (packaging/CMakeLists.txt); hidden, as it is no command for users.
  std::string man_source;
  app.add_option("--man-page", man_source, "print the man page made from this roff template")->group("");
  // The bash completion asks this for the devices of a --dump or --plan on the line; hidden too.
  std::string complete_kind;
  app.add_option("--complete", complete_kind, "print the GPU or NVMe names of the input, one per line")->group("");

  finish_subcommand_help(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << usage_error_text(app, e, std::vector<std::string>(argv + 1, argv + argc));
    return kExitUsage;
  }
  try {
    if (!man_source.empty()) {
      print_man_page(app, man_source);
      return kExitOk;
    }
    if (!complete_kind.empty()) {
      std::cout << completion_names(o, complete_kind);
      return kExitOk;
    }
    if (verify->selected()) return verify->run();
    for (const Command& command : commands)
      if (command.app->parsed()) return command.run();
    return commands.front().run();  // check is the default
  } catch (const UsageError& e) {
    std::cerr << "p2pcheck: " << printable(e.what()) << "\n";
    return kExitUsage;
  } catch (const Error& e) {
    std::cerr << "p2pcheck: " << printable(e.what()) << "\n";
    return kExitInput;
  } catch (const std::exception& e) {
    // A last resort, not the way errors are reported: the library throws Error naming the file.
    // Anything else that escapes still ends as bad input (exit 5), never std::terminate's abort.
    std::cerr << "p2pcheck: " << printable(input_named(o) + "unexpected error: " + e.what()) << "\n";
    return kExitInput;
  } catch (...) {
    std::cerr << "p2pcheck: " << printable(input_named(o)) << "unexpected error\n";
    return kExitInput;
  }
}

}  // namespace

int main(int argc, char** argv) { return checked_exit(run(argc, argv)); }
