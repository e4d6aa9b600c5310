// `p2pcheck fleet INPUT...`: one report over many machines. Each input (a capture, any --dump
// import, a directory of them, a saved check --json) is opened with the same code as --dump,
// checked with run_check(), and kept as a HostSummary; then hosts are counted by result, their
// failures and unknowns grouped by cause, and the machines grouped by identical PCI trees.
// An input that cannot be read is listed with the reason; it never stops the report.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/fleet/host_summary.h"

namespace p2pcheck {

struct UnreadableInput {
  std::string input;
  std::string reason;  // the Error's message: names the file and what was expected
};

// The inputs named on the command line, with directories of inputs expanded (sorted, recursively).
// A directory that is itself one machine (a captured root or sosreport, at its top or in its one
// folder; an lspci bundle: loose files beside a cpuinfo or lspci -t file) stays one input.
// What cannot be listed goes to `unreadable`. Every file found in a directory is an input (a
// truncated upload is an unreadable host, never passed over), but notes: a README, SOURCE, NOTES or
// LICENSE file, markdown, and a selection file beside an input (NAME.args, or args in a folder named
// after it), which go to `skipped`.
std::vector<std::string> expand_inputs(const std::vector<std::string>& args, std::vector<UnreadableInput>& unreadable,
                                       std::vector<std::string>& skipped);

// The --gpu/--nvme selection kept beside an input, as the QEMU lab and collectors store it:
// `DIR/NAME.args` for `DIR/NAME.tar.zst` (NAME: the file name without its extensions), or `DIR/args`
// when DIR is named NAME. Its text is "--gpu LIST --nvme LIST" (either may be missing). nullopt when
// there is none; Error naming the file when it is not that.
std::optional<PairSelection> selection_beside(const std::string& input);

struct FleetOptions {
  unsigned jobs = 0;  // worker threads; 0: std::thread::hardware_concurrency()
  // As for check: the what-if kernel, supplied facts (each used only on hosts whose input lacks the
  // fact), --fail-on. A saved check --json was judged when it was made and cannot take the first two.
  CheckOptions check;
  // Called after each input, from the worker that read it, one call at a time: inputs done, total.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// One input: a saved check --json (by content), else open_dump_source() + run_check(). Throws
// Error (or UsageError) when it cannot be read; run_fleet turns that into an UnreadableInput.
HostSummary read_host(const std::string& input, const FleetOptions& options);

// The whole fleet's answer, the exit code's order of strength: a failing host is certain whatever
// else is unread (1); else an unread input could hide one (5); else unknown (2); else hosts
// without pairs (4); else every host passes (0).
enum class FleetResult { kPass, kFail, kUnknown, kNoPairs, kUnreadable };
const char* to_string(FleetResult result);  // "PASS", "FAIL", "UNKNOWN", "NO PAIRS", "UNREADABLE INPUT"

// One cause of failures (or unknowns) and the hosts it hits.
// One group is one problem: the same finding id at the same level with the same Finding::cause (an md
// array is not a dm-crypt volume), or the same pair cause; its fix is that finding's own.
struct CauseGroup {
  std::string cause;  // a finding id ("kernel.config_p2pdma") or a pair cause's token ("pair.acs_redirect")
  // The pair cause whose pairs joined it (a kernel cause shares its finding's group); kNone when
  // only findings did.
  Cause pair_cause = Cause::kNone;
  std::string detail;          // the finding's cause within its id ("md", "dm-crypt"); "" when the id says it
  Level level = Level::kFail;  // kFail or kUnknown
  // How every view names it: "storage.stack:md", or the cause alone.
  std::string label() const { return detail.empty() ? cause : cause + ":" + detail; }
  // A group of pairs whose cause is the path's (pair.*), not a finding's: JSON `kind` "pair".
  bool pairs_only() const { return pair_cause != Cause::kNone && !row(pair_cause).finding; }
  std::string title;               // what it is, in words (the first host's finding message, or fleet's own words)
  std::string title_host;          // the host the title is quoted from when the hosts' messages differ; else ""
  std::string fix;                 // shown once for the group: the first host's
  std::string fix_host;            // the host that fix is quoted from, when the hosts' fixes differ; else ""
  std::vector<std::size_t> hosts;  // indexes into FleetReport::hosts, in host order
  std::size_t pairs = 0;           // pairs with this cause over those hosts (pair causes)
};

// Hosts that need the same whole change (their reports' host_fix: kernel command line and every
// step, subjects included), so one change can be rolled out to them together.
struct FixGroup {
  HostFix fix;
  std::vector<std::size_t> hosts;  // indexes into FleetReport::hosts, in host order
};

// Machines with the same topology_fingerprint(); hosts[0] is the one the group is named after.
struct TopologyGroup {
  std::string fingerprint;
  std::vector<std::size_t> hosts;
};

struct FleetReport {
  std::size_t inputs = 0;                      // inputs after expansion
  std::vector<HostSummary> hosts;              // sorted by host, then input path
  std::vector<UnreadableInput> unreadable;     // sorted by input
  std::vector<CauseGroup> failures, unknowns;  // most hosts first
  std::vector<TopologyGroup> topologies;       // most hosts first; hosts without a tree are in none
  std::vector<FixGroup> fixes;                 // most hosts first; hosts with nothing to fix are in none
  std::vector<std::size_t> without_fix;        // hosts whose saved report has no host_fix (an older p2pcheck)
  std::vector<std::string> skipped;            // notes beside the inputs: READMEs, selection files (expand_inputs)
  // Hosts by result; cause groups count only hosts with pairs (a host without one has no cause to fix).
  std::size_t passing = 0, failing = 0, unknown = 0, no_pairs = 0;
  FleetResult result = FleetResult::kPass;
};

// Reads every input on `options.jobs` threads (each owning its Source) and builds the report;
// the result is the same whatever the number of threads. `unreadable` carries what expansion
// could not list. Throws UsageError when there is no input at all.
FleetReport run_fleet(const std::vector<std::string>& inputs, std::vector<UnreadableInput> unreadable,
                      const FleetOptions& options);

// Fleet's fix for a pair cause (its words are explain/vocabulary.h's CauseRow): the fix when it is
// the same on every machine ("" when each host's differs or there is none).
std::string pair_cause_fix(Cause cause);

// Groups, counts and the result over summaries already read (run_fleet's last step; tests).
FleetReport build_fleet_report(std::vector<HostSummary> hosts, std::vector<UnreadableInput> unreadable,
                               std::size_t inputs);

}  // namespace p2pcheck
