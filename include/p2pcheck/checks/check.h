// `p2pcheck check`: everything the fastpath needs, for every selected GPU-NVMe pair.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/rules/verdict.h"

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
  std::vector<Finding> findings;     // kernel, CPU, IOMMU, GPU stack, storage, links
  std::vector<PairDecision> pairs;   // point into `topo`: keep the report in one place
  Level result = Level::kPass;       // FAIL if a finding fails or a pair is not supported
};

// Reads everything through `source` and decides. Throws Error on unreadable input, UsageError on
// a selector that matches nothing.
std::unique_ptr<CheckReport> run_check(Source& source, const CheckOptions& options);

// Kernel and CPU findings (config, known-bad kernels, distribution table, allowlist table, CPU rule).
std::vector<Finding> check_kernel(const Machine& machine, const KernelRules& rules);
// What the kernel command line says about a device's ACS (pci=disable_acs_redir=, pci=config_acs=).
enum class AcsOverride { kNone, kRedirectDisabled, kConfigured };
AcsOverride acs_override(const std::string& cmdline, const Function& fn);

// IOMMU state and its effect on ACS redirect.
std::vector<Finding> check_iommu(Source& source, const Machine& machine, const Topology& topo,
                                 const std::vector<PairDecision>& pairs);
// Link health on every hop of every pair: downtrained links, and the path's bandwidth ceiling.
std::vector<Finding> check_links(const Topology& topo, const std::vector<PairDecision>& pairs);
// The kernel module's answers beside ours: PASS when all agree, FAIL naming each disagreement.
struct RecordedKernelAnswers;
// A capture's recorded p2pprobe answers (recorded.h) beside ours, on replay.
std::vector<Finding> check_recorded_kernel_answers(const RecordedKernelAnswers& recorded, std::vector<PairDecision>& pairs);
std::vector<Finding> check_kernel_module(const CheckOptions& options, bool live, std::vector<PairDecision>& pairs);
// Bytes per second the slowest hop of a path can carry (after line encoding); nullopt if unknown.
std::optional<double> path_ceiling(const PairPath& path);

}  // namespace p2pcheck
