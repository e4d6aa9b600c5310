// The kernel a verdict is for: its release, its allowlist table, whether it has P2PDMA at all, and
// whether it is known to corrupt memory. Judged alike for the input's, a supplied and a what-if release.
#include "p2pcheck/rules/kernel_rules.h"

namespace p2pcheck {

const char* to_string(KernelOrigin origin) {
  switch (origin) {
    case KernelOrigin::kInput: return "input";
    case KernelOrigin::kSupplied: return "supplied";
    case KernelOrigin::kWhatIf: return "what_if";
    case KernelOrigin::kUnknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(P2pdmaBasis basis) {
  switch (basis) {
    case P2pdmaBasis::kConfig: return "config";
    case P2pdmaBasis::kBeforeP2pdma: return "before_p2pdma";
    case P2pdmaBasis::kDistroTable: return "distro_table";
    case P2pdmaBasis::kWhatIfAssumed: return "what_if_assumed";
    case P2pdmaBasis::kUnknown: return "unknown";
  }
  return "unknown";
}

namespace {

TableBasis table_basis_for(const std::optional<KernelVersion>& version) {
  if (!version) return TableBasis::kReleaseUnknown;
  if (*version < kOldestVerifiedTable) return TableBasis::kOlderThanVerified;
  if (verified_allowlist_for(*version)) return TableBasis::kVerified;
  return TableBasis::kNewerRowsReported;
}

// CONFIG_PCI_P2PDMA of the kernel judged: a config says it; else a release before P2PDMA existed
// has none; else a distribution-table row the release names says what that default kernel has;
// else a what-if release is taken as built with it (the question is "what would its rules decide").
void judge_p2pdma(const KernelConfig* config, KernelRules& rules) {
  if (config && config->known()) {
    rules.p2pdma_basis = P2pdmaBasis::kConfig;
    rules.config_file = config->file;
    rules.config_supplied = config->supplied;
    if (auto value = config->get("CONFIG_PCI_P2PDMA")) rules.p2pdma_enabled = tri(*value == "y");
    return;
  }
  if (rules.version && *rules.version < kFirstP2pdmaRelease) {
    rules.p2pdma_basis = P2pdmaBasis::kBeforeP2pdma;
    rules.p2pdma_enabled = Tri::kNo;
  } else if (rules.distro) {
    rules.p2pdma_basis = P2pdmaBasis::kDistroTable;
    rules.p2pdma_enabled = tri(rules.distro->p2pdma);
  } else if (rules.what_if()) {
    rules.p2pdma_basis = P2pdmaBasis::kWhatIfAssumed;
    rules.p2pdma_enabled = Tri::kYes;
  }
}

}  // namespace

KernelRules kernel_rules_for(const Machine& machine, const std::optional<std::string>& what_if_release) {
  KernelRules rules;
  rules.input_release = machine.kernel_release_supplied ? std::string() : machine.kernel_release;
  rules.release = what_if_release ? *what_if_release : machine.kernel_release;
  rules.origin = what_if_release                   ? KernelOrigin::kWhatIf
                 : machine.kernel_release.empty()  ? KernelOrigin::kUnknown
                 : machine.kernel_release_supplied ? KernelOrigin::kSupplied
                                                   : KernelOrigin::kInput;
  rules.version = parse_kernel_version(rules.release);
  rules.vendor_kernel = is_vendor_kernel(rules.release);
  rules.table_basis = table_basis_for(rules.version);
  rules.distro = find_distro_kernel_by_release(rules.release);
  // A what-if is another kernel: the input's own config says nothing about it (a supplied
  // --kernel-config may, and is then the what-if kernel's).
  const KernelConfig* config = &machine.config;
  if (rules.what_if() && !machine.config.supplied) config = nullptr;
  judge_p2pdma(config, rules);
  if (!rules.what_if()) rules.config_not_carried = machine.not_carried({"/proc/config.gz", "/boot"});
  rules.known_bad = find_known_bad_kernel(rules.release);
  if (KnownBadIdentity id = identify_known_bad_kernel(rules.release); id.match == KnownBadMatch::kSameBase)
    rules.known_bad_base = id;
  rules.input_known_bad = find_known_bad_kernel(rules.input_release);
  return rules;
}

}  // namespace p2pcheck
