// The tables of vocabulary.h: one row per value, in the enum's order (checked at compile time).
// Tokens: docs/json.md (rule_id, blocked_by, fix.kind; fleet's pair causes); schema docs/schema/.
#include "p2pcheck/explain/vocabulary.h"

#include <cstddef>
#include <iterator>

namespace p2pcheck {

namespace {

constexpr RuleRow kRules[] = {
    {Rule::kCommonBridge, "common_bridge"},
    {Rule::kCpuAllows, "host_bridge_cpu_allows"},
    {Rule::kAllowlistAllows, "host_bridge_allowlisted"},
    {Rule::kHostBridgeRefused, "host_bridge_refused"},
    {Rule::kEitherWay, "acs_unknown_allowed_either_way"},
    {Rule::kNoP2pdmaConfig, "no_p2pdma_config"},
    {Rule::kUnknownAcs, "unknown_acs"},
    {Rule::kUnknownCpu, "unknown_cpu"},
    {Rule::kUnknownHostBridgeDevice, "unknown_host_bridge_device"},
    {Rule::kUnknownP2pdmaConfig, "unknown_p2pdma_config"},
    {Rule::kUnknownKernelTable, "unknown_kernel_table"},
    {Rule::kUnknown, "unknown"},
};

// In the order pair_cause() asks them: a kernel without P2PDMA before a known-bad one.
constexpr BlockerRow kBlockers[] = {
    {Blocker::kKernelWithoutP2pdma, "kernel_without_p2pdma", Verdict::kNotSupported, Cause::kKernelConfigP2pdma},
    {Blocker::kKnownBadKernel, "known_bad_kernel", Verdict::kNotSupported, Cause::kKernelKnownBad},
    {Blocker::kP2pdmaConfigUnknown, "p2pdma_config_unknown", Verdict::kUnknown, Cause::kKernelConfigP2pdma},
};

constexpr const char* kCaptureAsRoot =
    "capture as root (sudo p2pcheck capture): ACS and port types are in config space beyond 64 bytes";

constexpr CauseRow kCauses[] = {
    {Cause::kNone, "", false, "", FixKind::kNone, nullptr},
    {Cause::kKernelConfigP2pdma, "kernel.config_p2pdma", true,
     "GPU–NVMe pairs blocked by the kernel's CONFIG_PCI_P2PDMA", FixKind::kNone, nullptr},
    {Cause::kKernelKnownBad, "kernel.known_bad", true,
     "GPU–NVMe pairs blocked: a kernel known to corrupt memory with P2PDMA", FixKind::kNone, nullptr},
    {Cause::kAcsRedirect, "pair.acs_redirect", false,
     "GPU–NVMe pairs refused: ACS redirect on the switch ports sends their traffic up to the root complex, which the "
     "kernel does not allow here",
     FixKind::kDisableAcsRedir, nullptr},
    {Cause::kHostBridge, "pair.host_bridge", false,
     "GPU–NVMe pairs refused through the root complex: the CPU is not one the kernel trusts for P2P and the host "
     "bridge is not on its allowlist",
     FixKind::kSameSwitch, nullptr},
    {Cause::kNotSupported, "pair.not_supported", false, "GPU–NVMe pairs refused by the kernel's P2PDMA rules",
     FixKind::kNone, nullptr},
    {Cause::kAcsUnknown, "pair.acs_unknown", false,
     "GPU–NVMe pairs undecided: the ACS control of a bridge on their path could not be read (needs root)",
     FixKind::kNone, kCaptureAsRoot},
    {Cause::kPathUnknown, "pair.path_unknown", false,
     "GPU–NVMe pairs undecided: a fact the kernel's rule needs could not be read", FixKind::kNone, kCaptureAsRoot},
};

constexpr const char* kAcsCost =
    "IOMMU isolation for the devices below those ports (they may share an IOMMU group; VFIO passthrough loses "
    "isolation)";

//  kind, token, label, words, cost, moves_the_pair, kernel_wide
constexpr FixRow kFixes[] = {
    {FixKind::kNone, "", nullptr, nullptr, nullptr, false, false},
    {FixKind::kDisableAcsRedir, "disable_acs_redir", nullptr, nullptr, kAcsCost, false, false},
    {FixKind::kSameHostBridge, "same_host_bridge", "placement", nullptr, nullptr, true, false},
    {FixKind::kSameSwitch, "same_switch", "placement",
     "put the GPU and the NVMe under one PCIe switch (P2P then stays below it on any CPU), or use a platform whose "
     "CPU or host bridge the kernel allows",
     nullptr, true, false},
    {FixKind::kKernelWithP2pdma, "kernel_with_p2pdma", "a kernel with P2PDMA",
     "boot a kernel built with CONFIG_PCI_P2PDMA=y", nullptr, false, true},
    {FixKind::kOtherKernel, "other_kernel", "another kernel", "boot another kernel before using the fastpath", nullptr,
     false, true},
    {FixKind::kSupplyFacts, "supply_facts", "facts the input lacks", nullptr, nullptr, false, false},
    {FixKind::kFullConfigSpace, "full_config_space", "a fuller dump", nullptr, nullptr, false, false},
    {FixKind::kKernelConfig, "kernel_config", "kernel config", nullptr, nullptr, false, false},
    {FixKind::kKernelTable, "kernel_table", "the kernel's table", nullptr, nullptr, false, false},
};

// Row i holds the value i: row() is an index.
template <typename Row, std::size_t N, typename Key>
constexpr bool in_enum_order(const Row (&rows)[N], Key Row::*key) {
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<std::size_t>(rows[i].*key) != i) return false;
  return true;
}
static_assert(in_enum_order(kRules, &RuleRow::rule) && std::size(kRules) == std::size_t(Rule::kUnknown) + 1);
static_assert(in_enum_order(kBlockers, &BlockerRow::blocker) &&
              std::size(kBlockers) == std::size_t(Blocker::kP2pdmaConfigUnknown) + 1);
static_assert(in_enum_order(kCauses, &CauseRow::cause) && std::size(kCauses) == std::size_t(Cause::kPathUnknown) + 1);
static_assert(in_enum_order(kFixes, &FixRow::kind) && std::size(kFixes) == std::size_t(FixKind::kKernelTable) + 1);

template <typename Row, std::size_t N, typename Value>
std::optional<Value> named(const Row (&rows)[N], Value Row::*key, std::string_view token) {
  for (const Row& r : rows)
    if (token == r.token) return r.*key;
  return std::nullopt;
}

}  // namespace

const RuleRow& row(Rule rule) { return kRules[static_cast<std::size_t>(rule)]; }
const BlockerRow& row(Blocker blocker) { return kBlockers[static_cast<std::size_t>(blocker)]; }
const CauseRow& row(Cause cause) { return kCauses[static_cast<std::size_t>(cause)]; }
const FixRow& row(FixKind kind) { return kFixes[static_cast<std::size_t>(kind)]; }

std::span<const RuleRow> rule_rows() { return kRules; }
std::span<const BlockerRow> blocker_rows() { return kBlockers; }
std::span<const CauseRow> cause_rows() { return kCauses; }
std::span<const FixRow> fix_rows() { return kFixes; }

std::optional<Blocker> blocker_named(std::string_view token) { return named(kBlockers, &BlockerRow::blocker, token); }
std::optional<FixKind> fix_kind_named(std::string_view token) {
  if (token.empty()) return std::nullopt;  // kNone's token is no kind
  return named(kFixes, &FixRow::kind, token);
}

}  // namespace p2pcheck
