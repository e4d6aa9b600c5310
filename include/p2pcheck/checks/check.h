// `p2pcheck check`: everything the fastpath needs, for every selected GPU-NVMe pair. run_check
// loads the machine once, decides the pairs, runs each check's read step and then its pure check
// (kernel.h, kernel_module.h, iommu.h, links.h, gpu.h, storage.h, recorded.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "p2pcheck/checks/path_target.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/kernel_image.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/model/supplied.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/rules/kernel_answers.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/verdict.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

// Parts of the check that need what some inputs cannot carry: a plan has no drivers, no IOMMU
// state, no block devices. For such an input the part is not run on files that are simply absent
// (which would read as FAIL or WARN); each becomes one UNKNOWN finding "...: not in a plan".
enum class CheckArea {
  kKernelModule,    // the kernel's own answers (p2pprobe, live or recorded): no finding, as on any replay
  kIommu,           // IOMMU mode, kernel command line, ACS the IOMMU changed
  kGpuStack,        // amdgpu, KFD, the HIP runtime, hipFile, BAR sizes
  kStorage,         // namespaces, partitions, file systems, device mapper, multipath
  kRecordedVerify,  // a recorded `verify` run: no finding, as on any replay without one
};
struct UncarriedAreas {
  std::string why;  // "not in a plan": the end of each finding's message
  std::vector<CheckArea> areas;
  bool has(CheckArea area) const;
};

// What makes the run FAIL (--fail-on): refused pairs, failing checks (the stack), anything unknown,
// warnings. The default, refused and stack, leaves unknowns UNKNOWN and warnings a note. A policy
// only ever tightens that on its own: a name adds to the default, and only an explicit "-stack"
// takes one away. Whatever it says, no pair allowed is never a PASS (result_for).
struct FailPolicy {
  bool refused = true;
  bool stack = true;
  bool unknown = false;
  bool warn = false;
  bool operator==(const FailPolicy&) const = default;
  // Something of the default is taken away (--fail-on -stack): the RESULT line says so.
  bool below_default() const { return !refused || !stack; }
};
// --fail-on's text: the default, plus each name ("unknown,warn"), minus each "-name" ("-stack");
// "default" is the default itself. Throws UsageError on an empty list or a name it does not know.
FailPolicy parse_fail_policy(const std::string& text);
// The policy a saved check --json names (its `fail_on`: exactly these words); nullopt on a word
// that is no category.
std::optional<FailPolicy> fail_policy_of_words(const std::vector<std::string>& words);
std::vector<std::string> fail_policy_words(const FailPolicy& policy);  // {"refused", "stack"}
// How a policy reads on the command line that gives it: "refused,stack,unknown", "-stack".
std::string fail_policy_option(const FailPolicy& policy);

struct CheckOptions {
  PairSelection selection;
  std::optional<std::string> what_if_kernel;  // --what-if-kernel: this release's rules instead of the input's
  // --what-if-kernel FILE: the kernel image or package read (its release is what_if_kernel too).
  std::shared_ptr<const KernelImage> what_if_image;
  SuppliedFacts supplied;  // facts for what the input lacks (model/supplied.h)
  FailPolicy fail_on;
  // The running kernel's own answers for the decided pairs (live only): the CLI hands in how to ask
  // the p2pprobe module (live/p2pprobe_client.h), so that checks/ never talks to a device itself.
  // Unset on a replay, or when the module is not asked: then `kernel_module_problem` says why.
  std::function<ModuleAnswers(const PairList& pairs)> ask_kernel_module;
  std::string kernel_module_problem;  // why the module is not there on a live machine ("not loaded", "needs root")
  UncarriedAreas not_carried;         // what the input cannot carry; empty: everything
  // `mounts`: the NVMe side is every controller below a mounted file system (report.targets).
  bool mounted_targets = false;
  // How much of each function to read: `topo --dot` asks for everything (the NUMA node its boxes
  // show), as a capture reads it; the check itself needs only kForCheck.
  Load load = Load::kForCheck;
};

// The one answer of `check`: the RESULT line, JSON `result` and the exit code all say this.
enum class Result {
  kPass,     // every selected pair can use P2PDMA and nothing that concerns them fails
  kFail,     // a selected pair is refused, or a finding that concerns them fails
  kUnknown,  // nothing fails, but something that decides them could not be seen
  kNoPairs,  // no GPU-NVMe pair to judge
};
const char* to_string(Result result);  // "PASS", "FAIL", "UNKNOWN", "NO PAIRS"

// The RESULT's numbers: the selected pairs by verdict, and the findings that concern them by level.
struct ResultCounts {
  std::size_t pairs = 0, allowed = 0, refused = 0, undecided = 0;
  std::size_t failing = 0, unknown = 0, warnings = 0;
};

struct CheckReport {
  std::string source;
  Topology topo;
  Inventory inv;
  Machine machine;
  KernelRules rules;
  std::vector<Finding> findings;      // kernel, CPU, IOMMU, GPU stack, storage, links
  PairList pairs;                     // point into `topo` and `inv`: keep the report in one place
  std::set<Bdf> selected_devices;     // the GPUs and NVMe of `pairs`, for concerns_selected_pairs
  std::vector<SuppliedUse> supplied;  // what became of each --kernel-release, --kernel-config, --cpu
  FailPolicy fail_on;
  ResultCounts counts;
  Result result = Result::kNoPairs;  // over the selected pairs and the findings that concern them
  // Paths given as --nvme (and with mounted_targets every file system on NVMe): each with its mount,
  // stacks and controllers (path_target.h). targets_unknown: why the mount table is unknown then.
  std::vector<PathTarget> targets;
  std::string targets_unknown;
  // Every --nvme value was a path: of the storage stacks, only the targets' own bear on the result.
  bool nvme_by_path_only = false;
};

// The result under a policy: NO PAIRS without a pair; FAIL when the policy counts something
// present, or when no pair is allowed and one is refused (a kernel known to corrupt memory refuses
// every pair: no policy passes that); else UNKNOWN when a pair is undecided or a finding unknown;
// else PASS.
Result result_for(const ResultCounts& counts, const FailPolicy& policy);

// Whether a finding bears on the selected pairs: machine-wide findings always do; a finding about
// particular devices (a GPU, an NVMe's storage stack) only when one of them is in a selected pair.
bool concerns_selected_pairs(const Finding& finding, const CheckReport& report);

// Reads everything through `source` and decides. Throws Error on unreadable input, UsageError on
// a selector that matches nothing.
std::unique_ptr<CheckReport> run_check(Source& source, const CheckOptions& options);
// The same on a machine already built (a plan builds the model directly): `rest` answers every
// read beyond the PCI tree and the machine facts (an empty in-memory tree for a plan).
std::unique_ptr<CheckReport> run_check(MachineState state, Source& rest, const CheckOptions& options);

// Every read run_check makes through `source`, and nothing it decides: the machine loaded, the
// pairs selected (throwing as run_check does), each check's read step. Deciding and the checks
// read no file (rules/ and the pure checks never see a Source), so a capture recording this holds
// the same files as one recording run_check, without deciding tens of thousands of pairs.
struct CheckInputs {
  MachineState state;
  std::vector<DevicePair> pairs;  // selected, not decided
};
CheckInputs read_check_inputs(Source& source, const CheckOptions& options);

}  // namespace p2pcheck
