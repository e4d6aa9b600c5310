// `p2pcheck check`: everything the fastpath needs, for every selected GPU-NVMe pair. run_check
// loads the machine once, decides the pairs, runs each check's read step and then its pure check
// (kernel.h, kernel_module.h, iommu.h, links.h, gpu.h, storage.h, recorded.h).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/rules/verdict.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

class P2pprobeClient;

struct CheckOptions {
  PairSelection selection;
  std::optional<std::string> assume_kernel;  // evaluate for this release instead of the source's
  // The running kernel's own answers (live only); null when the module is absent or not asked.
  P2pprobeClient* kernel_module = nullptr;
  std::string kernel_module_problem;  // why it is null on a live machine ("not loaded", "needs root")
};

// The one answer of `check`: the RESULT line, JSON `result` and the exit code all say this.
enum class Result {
  kPass,     // every selected pair can use P2PDMA and nothing that concerns them fails
  kFail,     // a selected pair is refused, or a finding that concerns them fails
  kUnknown,  // nothing fails, but something that decides them could not be seen
  kNoPairs,  // no GPU-NVMe pair to judge
};
const char* to_string(Result result);  // "PASS", "FAIL", "UNKNOWN", "NO PAIRS"

struct CheckReport {
  std::string source;
  Topology topo;
  Inventory inv;
  Machine machine;
  KernelRules rules;
  std::vector<Finding> findings;     // kernel, CPU, IOMMU, GPU stack, storage, links
  std::vector<PairDecision> pairs;   // point into `topo`: keep the report in one place
  std::set<Bdf> selected_devices;    // the GPUs and NVMe of `pairs`, for concerns_selected_pairs
  Result result = Result::kNoPairs;  // over the selected pairs and the findings that concern them
};

// Whether a finding bears on the selected pairs: machine-wide findings always do; a finding about
// particular devices (a GPU, an NVMe's storage stack) only when one of them is in a selected pair.
bool concerns_selected_pairs(const Finding& finding, const CheckReport& report);

// Reads everything through `source` and decides. Throws Error on unreadable input, UsageError on
// a selector that matches nothing.
std::unique_ptr<CheckReport> run_check(Source& source, const CheckOptions& options);

}  // namespace p2pcheck
