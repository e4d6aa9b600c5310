// Supplied facts fill only what the input could not show, and say so.
#include "p2pcheck/model/supplied.h"

#include "p2pcheck/source/error.h"

namespace p2pcheck {

std::vector<SuppliedUse> apply_supplied(Machine& machine, const SuppliedFacts& supplied) {
  std::vector<SuppliedUse> uses;
  if (supplied.kernel_release) {
    SuppliedUse use{"--kernel-release", *supplied.kernel_release, false, ""};
    if (machine.kernel_release.empty()) {
      machine.kernel_release = *supplied.kernel_release;
      machine.kernel_release_supplied = true;
      use.used = true;
    } else {
      use.why_not_used = "the input shows its own kernel release (" + machine.kernel_release + ")";
    }
    uses.push_back(use);
  }
  if (supplied.kernel_config) {
    SuppliedUse use{"--kernel-config", supplied.kernel_config_given, false, ""};
    if (!machine.config.known()) {
      std::vector<std::string> tried = machine.config.tried;
      machine.config = *supplied.kernel_config;
      machine.config.supplied = true;
      machine.config.tried = tried;
      use.used = true;
    } else {
      use.why_not_used = "the input carries its own kernel config (" + machine.config.file + ")";
    }
    uses.push_back(use);
  }
  if (supplied.cpu) {
    SuppliedUse use{"--cpu", supplied.cpu_given, false, ""};
    if (machine.cpu.vendor_id.empty() && machine.cpu.architecture.empty()) {
      machine.cpu = *supplied.cpu;
      machine.cpu.supplied = true;
      use.used = true;
    } else {
      use.why_not_used = "the input shows its own CPU (" +
                         (machine.cpu.vendor_id.empty() ? machine.cpu.architecture : machine.cpu.vendor_id) +
                         (machine.cpu.evidence_file.empty() ? "" : ", " + machine.cpu.evidence_file) + ")";
    }
    uses.push_back(use);
  }
  return uses;
}

KernelConfig supplied_kernel_config(const std::string& label, const std::optional<std::string>& file_bytes) {
  if (!file_bytes) {
    KernelConfig config;
    config.file = label;
    if (label == "--kernel-config p2pdma=y")
      config.options["CONFIG_PCI_P2PDMA"] = "y";
    else if (label != "--kernel-config p2pdma=n")
      throw UsageError(label + ": expected p2pdma=y, p2pdma=n or a kernel config file");
    return config;
  }
  KernelConfig config = parse_kernel_config(*file_bytes, label);
  if (config.options.empty())
    throw UsageError(label + ": no CONFIG_ line in it; expected a kernel config (/boot/config-REL or /proc/config.gz)");
  return config;
}

}  // namespace p2pcheck
