// Facts the user gives for what the input lacks (--kernel-release, --kernel-config, --cpu). They are
// used only where the input has no value of its own; where it has one, the input wins and the
// report says the supplied value was not used. A what-if kernel (--what-if-kernel) is another
// question altogether and lives in rules/kernel_rules.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/machine.h"

namespace p2pcheck {

struct SuppliedFacts {
  std::optional<std::string> kernel_release;  // --kernel-release REL
  // --kernel-config FILE or p2pdma=y|n; `file` is the label the report cites ("--kernel-config p2pdma=y").
  std::optional<KernelConfig> kernel_config;
  std::optional<CpuInfo> cpu;  // --cpu; `evidence_file` is the label ("--cpu amd-zen")
  // What the user typed after --kernel-config and --cpu ("p2pdma=y", "amd-zen"), for the report.
  std::string kernel_config_given, cpu_given;
  bool empty() const { return !kernel_release && !kernel_config && !cpu; }
};

// What became of one supplied fact.
struct SuppliedUse {
  std::string option;  // "--kernel-release"
  std::string value;   // "6.8.0-142-generic", "p2pdma=y", "amd-zen"
  bool used = false;
  std::string why_not_used;  // "the input shows its own kernel release (6.1.0-13-amd64)"
};

// Fills the machine's unknown facts from `supplied`, marking each as supplied (Machine::supplied);
// returns what was used and what was not, in option order.
std::vector<SuppliedUse> apply_supplied(Machine& machine, const SuppliedFacts& supplied);

// --kernel-config's value: "p2pdma=y" / "p2pdma=n", or the text of a kernel config file (plain or
// gzip, as /proc/config.gz). Throws UsageError naming `label` when it is neither.
KernelConfig supplied_kernel_config(const std::string& label, const std::optional<std::string>& file_bytes);

}  // namespace p2pcheck
