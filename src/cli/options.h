// What every p2pcheck command shares: the global options, the source they select, the text style,
// the replay banner and the exit codes. Each command lives in its own <name>_command.cc.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/input/input.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck::cli {

// Exit codes, documented in README.md.
enum Exit {
  kExitOk = 0,
  kExitFail = 1,
  kExitUnknown = 2,
  kExitUsage = 3,
  kExitNoPair = 4,
  kExitInput = 5,
};

struct GlobalOptions {
  std::string root;
  std::string dump;
  bool json = false;         // --json: compact, one line (for machines)
  bool json_pretty = false;  // --json=pretty: indented (for people; the goldens)
  std::string json_style;    // what CLI11 parsed: "compact" or "pretty"
  int json_schema = 4;       // --json-schema: only check --json's version (4); 1, 2 and 3 are refused with a why
  std::string color = "auto";
  bool ascii = false;
  bool verbose = false;  // check: also the checks that pass and the notes
  bool quiet = false;    // check: only the RESULT line
  PairSelection selection;
  std::string what_if_kernel;          // --what-if-kernel (or its alias --assume-kernel)
  std::string kernel_release;          // --kernel-release: supplied where the input has none
  std::string kernel_config;           // --kernel-config FILE|p2pdma=y|n: supplied likewise
  std::string cpu;                     // --cpu: supplied likewise
  std::optional<std::string> fail_on;  // --fail-on: given (even empty, an error) or not
  std::string plan;                    // --plan FILE: a planned server instead of a machine
};
void add_global_options(CLI::App& app, GlobalOptions& o);
// Each of these subcommands' --help ends with the global options, which apply to them too.
void list_global_options_in_subcommand_help(CLI::App& app, const std::vector<CLI::App*>& subcommands);

// A subcommand as registered on the app, and what to run when the user chose it.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// The machine's files: --root, --dump or the live machine. --plan has none: UsageError.
std::unique_ptr<Source> open_source(const GlobalOptions& o);

// What check, explain, topo and paths analyse: a source of machine files (--root, --dump, --plan
// through the one door, input/input.h, or this machine) and what the input says of itself.
struct Input {
  std::unique_ptr<Source> source;
  std::optional<CaptureInfo> replay;  // a capture's, import's or plan's manifest
};
Input open_input(const GlobalOptions& o);
// The machine loaded, with what the input says of it (input.h describe_machine).
MachineState load_state(Input& input, Load what);
// The banner before text output (replay_text); `verbose` (-v) lists every record of an import's
// grouped notes.
std::string input_text(const Input& input, bool verbose = false);
// The pair selection, with the input's device names ("gpu0") turned into their addresses; a replayed
// capture's recorded selection (capture --gpu/--nvme) when neither --gpu nor --nvme is given.
PairSelection selection_for(const Input& input, const GlobalOptions& o);
// "--gpu A,B --nvme C": a selection as the command line writes it ("every pair" when empty).
std::string selection_args(const PairSelection& selection);
// Replays of captures and imports say what they are and what they could not tell.
std::optional<CaptureInfo> replay_info(Source& source);
std::string replay_text(const std::optional<CaptureInfo>& info, bool verbose = false);
TextStyle text_style(const GlobalOptions& o);
// Columns for text output: $COLUMNS, else the terminal's (TIOCGWINSZ), else TextStyle's default.
std::size_t output_width();
// JSON text as --json or --json=pretty asked for it.
std::string json_output(const GlobalOptions& o, const nlohmann::ordered_json& j);
int json_indent(const GlobalOptions& o);  // json_output()'s indent: 2 for --json=pretty, else -1 (compact)
// Text output to stdout; with --ascii or a locale that is not UTF-8 in plain ASCII (report/common.h ascii_text).
void print_text(const GlobalOptions& o, const std::string& text);
int exit_for(Result result);
// The check's options from the command line: the what-if kernel, supplied facts (files read here),
// the --fail-on policy. Throws UsageError on a value it cannot take.
CheckOptions check_options(const GlobalOptions& o);
// Which NVMe `checked` pairs the GPUs with: those selected, or (`mounts`) every controller below a
// mounted file system.
enum class Targets { kSelected, kMounted };
// The check every command runs: run_check with the command line's options and pairs, the areas the
// input cannot carry, on the live machine the running kernel answering for itself through p2pprobe
// when it is loaded, and the machine's identity marked redacted for a redacted capture.
// `load`: how much of each function to read (CheckOptions::load).
std::unique_ptr<CheckReport> checked(Input& input, const GlobalOptions& o, Load load = Load::kForCheck,
                                     Targets targets = Targets::kSelected);
// On stderr when a command found no pair to judge.
void print_no_pair(const std::string& source, std::size_t gpus, std::size_t nvmes);

// For the last step of a command: the process ends next, and freeing a fabric's model and the
// source's caches node by node cost 6-10% of a check; the OS takes the pages back at once.
// Held from a global, so leak checkers see it reachable, not lost.
void free_at_exit(std::shared_ptr<const void> object);
void free_at_exit(Input& input);

}  // namespace p2pcheck::cli
