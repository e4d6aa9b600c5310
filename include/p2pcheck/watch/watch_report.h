// `p2pcheck watch`'s one decision model: the probe's counters (live/watch_probe.h) joined with
// p2pcheck's prediction for each pair (rules/verdict.h, as verify plans it), turned into rows,
// findings and a result. Text, JSON, the interval lines and a replayed recording are all views of
// a WatchReport; nothing here reads a file or prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/live/watch_probe.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/rules/kernel_rules.h"
#include "p2pcheck/rules/p2pdma.h"
#include "p2pcheck/rules/tri.h"
#include "p2pcheck/rules/verdict.h"
#include "p2pcheck/watch/watch_environment.h"

namespace p2pcheck {

// The command `watch -- COMMAND` ran, whose process tree the probe followed (WatchProbe::follow).
struct WatchCommand {
  std::uint32_t pid = 0;
  std::string name;  // its argv[0], as typed: hostile, printable() before text shows it
};

// What was watched besides the counters: a live run's facts, or a recording's.
struct WatchFacts {
  std::string kernel_release;  // the watched kernel's; "" when unknown
  WatchHookPlan hooks;         // with `attached` and `error` filled by the loader
  LockdownState lockdown;
  NvidiaFsState nvidia_fs;
  // Why the probe could not run at all (cannot_watch_reason(), watch_start_failure()); the report
  // then has no rows, and its result is UNKNOWN.
  std::optional<std::string> cannot_watch;
  std::optional<WatchCommand> command;  // none: no command was run (or a recording from before)
};

// --gpu, --nvme, --pid, --comm, --all. A P2P row passes --gpu when its provider is named; --nvme
// when its NVMe (by BDF, controller or namespace name) is. Rows without that side (host memory has
// no provider; a storage-stack refusal names only md/dm/loop) pass that selector. Each --gpu and
// --nvme must name a function of the machine (else UsageError, as check does).
struct WatchFilter {
  std::vector<std::string> gpu;   // BDFs ("0000:03:00.0" or "03:00.0")
  std::vector<std::string> nvme;  // BDF, nvme1, nvme1n1, /dev/nvme1n1[p2]
  std::optional<std::uint32_t> pid;
  std::optional<std::string> comm;
  bool all = false;  // --all: every process on the machine, not only the command's tree
  bool empty() const { return gpu.empty() && nvme.empty() && !pid && !comm; }
};

// Whose I/O a report counts.
enum class WatchScope {
  kMachine,   // every process: no command was run, or --all
  kTree,      // the command's process tree (WatchFacts::command), the default with a command
  kSelected,  // --pid or --comm
};
const char* to_string(WatchScope scope);  // "machine", "command_tree", "selected"

struct WatchCounts {
  std::uint64_t requests = 0;  // completed (refusals: refused) requests
  std::uint64_t bytes = 0;     // completed without error
  std::uint64_t segments = 0;
  std::uint64_t errors = 0;
  std::uint64_t error_bytes = 0;
  std::uint32_t last_status = 0;  // the last error's blk_status_t seen in these rows (0: none)
  std::uint64_t requeues = 0;     // requeued before completing; counted only where requeues_counted
  bool any() const { return requests || errors; }
};

struct WatchProcess {
  std::uint32_t tgid = 0;
  std::string comm;  // as the kernel gave it: hostile, printable() before text shows it
  std::uint64_t requests = 0;
  std::uint64_t bytes = 0;
};

// The rows the scope left out (they passed --gpu and --nvme): said, never silently dropped.
struct WatchOutside {
  std::uint64_t requests = 0, bytes = 0;
  std::vector<WatchProcess> processes;  // most bytes first
  // P2P, refused or failed requests that kernel workers issued (so no process is known for them):
  // they may be the command's.
  std::uint64_t worker_p2p_requests = 0;
};

// The errno a refused request failed with: from its blk_status_t when the probe saw the request
// end, else the one this kernel sets (WatchHookPlan::refusal_errno), never guessed otherwise.
struct WatchRefusal {
  std::string errno_name;  // "EREMOTEIO"; "" when the status is not one this kernel's table names
  int errno_value = 0;     // 0 with errno_name ""
  std::uint32_t status = 0;
  bool observed = false;  // false: "expected for this kernel"
};

// One (provider, client) pair on one path, every direction.
struct WatchPair {
  std::string provider;            // the P2P memory's PCI device, as the kernel named it; "" when unseen
  std::string provider_role;       // "GPU", "CMB of nvme0", "endpoint" (as verify names it); "" when not in the tree
  std::string client;              // the NVMe function's PCI name; "" when unseen
  std::string controller;          // "nvme1"; "" when not known
  std::vector<std::string> disks;  // the request disks seen (refusals end before one is known)
  WatchPath path = WatchPath::kBusAddr;
  bool in_machine = false;  // both devices are in the machine the prediction is made for
  MapType predicted = MapType::kUnknown;
  Verdict verdict = Verdict::kUnknown;
  // The prediction's rule in words and its fix (explain/); "" when the pair is not in the machine.
  std::string rule, fix;
  // The prediction's fix for a pair it refuses; "" when it does not refuse it.
  std::string refused_fix() const { return verdict == Verdict::kNotSupported ? fix : ""; }
  Tri agrees = Tri::kUnknown;
  WatchCounts to_device, to_storage, other;
  std::vector<WatchProcess> processes;  // most bytes, then most requests first
  std::optional<WatchRefusal> refusal;  // path kRefused
  const WatchCounts& counts(WatchDir dir) const;
  WatchCounts total() const;
};

// Host-memory I/O, or a storage-stack refusal, on one disk in one direction.
struct WatchDiskRow {
  std::string disk;        // "nvme1n1", "loop0"
  std::string controller;  // the disk's NVMe controller in this machine, when it is one
  std::string client;      // that controller's PCI function; "" when not known
  WatchDir dir = WatchDir::kOther;
  WatchCounts counts;
  std::vector<WatchProcess> processes;
};

enum class WatchResult {
  kP2pSeen,  // P2P I/O seen, all completed, none contradicting the prediction (exit 0)
  kFail,     // something refused, failed, fell back or mismatched (exit 1)
  kUnknown,  // could not watch: no rows at all (exit 2)
  kNoP2p,    // no P2P bytes seen, or no P2PDMA in this kernel (exit 4)
};
const char* to_string(WatchResult result);  // "P2P SEEN", "FAIL", "UNKNOWN", "NO P2P"

struct WatchReport {
  std::string source;  // the machine the predictions are for (MachineState::source)
  double seconds = 0;  // watched (the snapshot's)
  WatchFacts facts;
  WatchFilter filter;
  WatchScope scope = WatchScope::kMachine;
  WatchOutside outside;  // what the scope left out
  // Why nothing could be watched: facts.cannot_watch, or a hook the counting needs that did not
  // attach, or no decision hook on a kernel that has P2PDMA.
  std::optional<std::string> cannot_watch;
  std::vector<WatchPair> pairs;    // by provider, client, path
  std::vector<WatchDiskRow> host;  // only when the block tracepoints were attached
  std::vector<WatchDiskRow> stack_refused;
  std::uint64_t unpaired = 0, dropped_rows = 0, inflight_full = 0, tree_full = 0;
  // block_rq_requeue was attached (a recording made before watch counted requeues has no such
  // hook): else every WatchCounts::requeues is 0 because nothing counted, and the JSON says null.
  bool requeues_counted = false;
  std::vector<Finding> findings;  // in the order made; the text view sorts by level
  WatchResult result = WatchResult::kUnknown;
  std::uint64_t p2p_bytes() const;  // completed bytes on bus_addr and thru_host_bridge pairs
};

// The report of `snapshot` (cumulative counters) on the machine `state` with the kernel `rules`
// (kernel_rules_for(state.machine, std::nullopt)). Throws UsageError for a --gpu or --nvme value
// that names no function of `state` (as check's selection does).
WatchReport build_watch_report(const WatchSnapshot& snapshot, const WatchFacts& facts, const MachineState& state,
                               const KernelRules& rules, const WatchFilter& filter = {});

// What happened between two snapshots of the same probe: each row's counters minus the previous
// ones (rows that did not move are left out), seconds the time between them. A report of it is one
// interval (watch_interval_text, watch_interval_json). A row whose counters went back (a new
// probe) counts from zero.
WatchSnapshot watch_delta(const WatchSnapshot& previous, const WatchSnapshot& current);

// "kworker/u8:2": a kernel worker, which hides the process that asked for the I/O.
bool is_kernel_worker(const std::string& comm);

}  // namespace p2pcheck
