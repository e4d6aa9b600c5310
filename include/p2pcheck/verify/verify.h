// `p2pcheck verify`: a real P2P DMA write and read between a GPU (or another P2P memory provider)
// and an NVMe, each direction reported on its own: passed, refused (by the kernel, naming the rule
// p2pcheck's verdict engine says decided; or by the storage stack), failed (errno and what it means),
// data mismatch (first bad block), or no completion before the deadline.
//
// Two steps so the CLI can show what will happen (and the raw-mode warning) before anything moves:
// plan_verify() reads the machine, picks an engine and a target per pair and applies every safety
// refusal; run_verify() moves the data. Nothing here prints.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/checks/storage.h"
#include "p2pcheck/live/device_actions.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/rules/verdict.h"
#include "p2pcheck/verify/verify_engine.h"
#include "p2pcheck/verify/verify_evidence.h"
#include "p2pcheck/verify/verify_io.h"
#include "p2pcheck/verify/verify_target.h"

namespace p2pcheck {

// Where verify leaves its JSON document for `p2pcheck capture` (schema "p2pcheck.verify",
// docs/json.md): kVerifyResultsPath in device_actions.h, beside the list capture reads.

inline constexpr std::uint64_t kDefaultVerifySize = 64ull << 20;
inline constexpr std::uint64_t kProviderChunk = 4ull << 20;  // p2pmem per mapping, P2PPROBE_DMA_MAX_CHUNK
inline constexpr std::uint64_t kHipfileChunk = 16ull << 20;  // VRAM buffer per hipFile call
inline constexpr double kDefaultVerifyTimeout = 60;          // seconds, per direction

struct VerifyOptions {
  PairSelection selection;
  std::vector<std::string> targets;      // --target DIR (repeatable): scratch files go there
  std::vector<std::string> raw_devices;  // --raw DEVICE (repeatable)
  std::optional<std::uint64_t> offset;   // --offset N, raw only, required there
  bool allow_destructive = false;        // --allow-destructive, required for raw
  std::optional<std::uint64_t> size;     // --size; default 64 MiB or the provider's free p2pmem
  std::optional<EngineKind> engine;      // --engine; nullopt = auto
  double timeout_s = kDefaultVerifyTimeout;
  bool force = false;                 // run on a kernel known to corrupt memory with P2PDMA
  bool try_anyway = false;            // run pairs the verdict says the kernel refuses (to watch it refuse)
  std::optional<std::uint64_t> seed;  // pattern seed; random when not given
  // --direction: both by default. One alone keeps a direction known to hang (pre-Zen P2P reads)
  // out of a run, or isolates the one under study.
  std::vector<Direction> directions = {Direction::kToDevice, Direction::kToStorage};
};

// "64M", "1G", "512K", "4096" -> bytes (binary units). Throws UsageError naming `option`.
std::uint64_t parse_size(const std::string& text, const std::string& option = "--size");

enum class Outcome { kPassed, kRefused, kFailed, kMismatch, kTimedOut, kNotP2p, kNotRun };
const char* to_string(Outcome o);  // "passed", "refused", "failed", "mismatch", "timeout", "not_p2p", "not_run"

struct PairPlan {
  PairDecision decision;      // points into the plan's topology
  std::string rule;           // the decision's rule in words (explain/rule_text.h)
  std::string provider_role;  // "GPU", "CMB of nvme0", or what the provider is ("endpoint")
  std::string provider_driver;
  std::string nvme_name;  // "nvme0", or "" when no controller name is known
  std::optional<EngineKind> engine;
  std::optional<TargetPlan> target;
  // Why p2pcheck will not run this pair; empty when it runs. refusal_level says what it means for
  // the result: kFail (refused on purpose: known-bad kernel, a pair the kernel refuses, memory a GPU
  // driver owns) or kUnknown (cannot tell: unknown verdict, no engine for this provider).
  std::string refusal;
  Level refusal_level = Level::kFail;
  bool skipped = false;  // its NVMe was not named and has no target: not part of the result
  std::uint64_t size = 0, chunk = 0;
  std::optional<double> ceiling;  // path_ceiling(): bytes/s of the slowest link
  std::vector<std::string> notes;
};

struct VerifyPlan {
  std::string source;
  Topology topo;
  Inventory inv;
  Machine machine;
  KernelRules rules;
  StorageLayout storage;
  VerifyOptions options;
  std::optional<int> io_timeout_s;  // nvme_core io_timeout
  std::vector<PairPlan> pairs;
  std::vector<std::string> warnings;  // to show before anything runs
};

// Reads the machine through `source` (targets through `io`: stat only). Throws UsageError for bad
// options, a selector that matches nothing, a target that is not on a selected NVMe, a raw device in
// use; Error for unreadable input. A plan with no pairs means the machine has no GPU–NVMe pair.
std::unique_ptr<VerifyPlan> plan_verify(Source& source, VerifyIo& io, const VerifyOptions& options);

struct DirectionResult {
  Direction direction = Direction::kToDevice;
  Outcome outcome = Outcome::kNotRun;
  std::string refused_by;  // kRefused: "kernel" or "storage stack"
  std::string reason;      // one line: the rule, the errno's meaning, the mismatch, the fallback
  int error = 0;           // negative errno, 0 when none
  std::string error_text;
  std::uint64_t bytes = 0;
  double seconds = 0;                // inside the P2P I/O calls
  std::optional<double> throughput;  // bytes/s
  std::optional<DataMismatch> mismatch;
  std::optional<CounterEvidence> counters;
  std::vector<std::string> notes;
};

struct PairResult {
  std::vector<DirectionResult> directions;  // to_device, to_storage; empty when the pair did not start
  std::string problem;                      // why it did not start (engine unavailable, target not opened)
  Level problem_level = Level::kUnknown;
  std::vector<std::string> engine_facts;
  std::string target_file;  // the scratch file, or the raw device
  bool target_removed = false;
  std::uint64_t seed = 0;
  std::vector<Bdf> aer_devices;
  std::vector<AerChange> aer_changes;
  std::vector<Bdf> aer_not_reported;
  std::vector<std::string> aer_unreadable;
  std::vector<std::string> kernel_log;  // relevant messages logged while the pair ran
  std::string kernel_log_problem;
  std::vector<std::string> notes;
};

// Everything live that run_verify touches.
struct VerifyEnvironment {
  Source& source;                // AER counters, before and after
  std::shared_ptr<VerifyIo> io;  // targets and the ordinary half of each direction
  EngineProvider& engines;
  KernelLog* kernel_log = nullptr;  // null: not read
  std::function<void(const PairPlan&, Direction)> on_transfer_start;
  std::function<void(const PairPlan&, const PairResult&)> on_pair_done;
  // Waits this long (the CLI sleeps); null: never waits. A removed NVMe answers as a 0-byte device
  // before the kernel takes its function out of sysfs: a transfer that failed so looks again for a
  // while (kRemovalGrace) before its error is taken for what it says.
  std::function<void(std::chrono::milliseconds)> pause;
};

// How long a transfer that failed as a removed device fails (ENOSPC, ENODEV, ENXIO) looks for its
// functions to leave /sys/bus/pci/devices, and how often.
inline constexpr std::chrono::milliseconds kRemovalGrace{3000}, kRemovalPoll{100};

struct VerifyReport {
  std::unique_ptr<VerifyPlan> plan;
  std::vector<PairResult> results;  // one per plan->pairs entry
  Level result = Level::kUnknown;   // PASS only when something ran and everything that ran passed
  std::string summary;
  bool abandoned = false;   // a transfer did not complete by the deadline; nothing after it started
  std::string finished_at;  // UTC, ISO 8601: when run_verify returned
};

VerifyReport run_verify(std::unique_ptr<VerifyPlan> plan, VerifyEnvironment& env);

// The live engines: hipfile (dlopen), kmod (/dev/p2pprobe), p2pmem (sysfs allocate). Opened lazily.
std::unique_ptr<EngineProvider> open_live_engines(std::shared_ptr<VerifyIo> io);

}  // namespace p2pcheck
