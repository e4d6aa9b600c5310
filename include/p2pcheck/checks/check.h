// `p2pcheck check`: everything the fastpath needs, for every selected GPU-NVMe pair. run_check
// loads the machine once, decides the pairs, runs each check's read step and then its pure check
// (kernel.h, kernel_module.h, iommu.h, links.h, gpu.h, storage.h, recorded.h).
#pragma once

#include <memory>
#include <optional>
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

struct CheckReport {
  std::string source;
  Topology topo;
  Inventory inv;
  Machine machine;
  KernelRules rules;
  std::vector<Finding> findings;    // kernel, CPU, IOMMU, GPU stack, storage, links
  std::vector<PairDecision> pairs;  // point into `topo`: keep the report in one place
  Level result = Level::kPass;      // FAIL if a finding fails or a pair is not supported
};

// Reads everything through `source` and decides. Throws Error on unreadable input, UsageError on
// a selector that matches nothing.
std::unique_ptr<CheckReport> run_check(Source& source, const CheckOptions& options);

}  // namespace p2pcheck
