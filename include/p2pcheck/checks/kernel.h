// Kernel and CPU findings: the release, CONFIG_PCI_P2PDMA, known-bad kernels, hipFile's distribution
// table, which allowlist table the verdicts use, and the CPU rule. Everything they need was read by
// load_machine_state (Machine) and decided by kernel_rules_for (KernelRules): no read step of their own.
#pragma once

#include <string>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// kernel.release, kernel.config_p2pdma, kernel.known_bad, kernel.distribution (when the OS is in
// hipFile's table), kernel.allowlist_table and cpu.p2pdma_rule, in that order.
std::vector<Finding> check_kernel(const Machine& machine, const KernelRules& rules);

// Which allowlist table was assumed and how sure that is, in one sentence (the allowlist_table
// finding, and the kernel line of the text and JSON reports).
std::string allowlist_table_note(const KernelRules& rules);

}  // namespace p2pcheck
