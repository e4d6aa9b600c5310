// Which of the probe's programs the running kernel can take, read from its BTF alone (no loading),
// so the choice is a pure function tested against saved BTF of each kernel (tests/live/btf/).
#include <cerrno>
#include <cstring>

#include "p2pcheck/live/watch_probe.h"

namespace p2pcheck {

const char* to_string(WatchPath p) {
  switch (p) {
    case WatchPath::kHost: return "host";
    case WatchPath::kBusAddr: return "bus_addr";
    case WatchPath::kThruHostBridge: return "thru_host_bridge";
    case WatchPath::kRefused: return "refused";
    case WatchPath::kStackRefused: return "stack_refused";
  }
  return "host";
}

const char* to_string(WatchDir d) {
  switch (d) {
    case WatchDir::kToDevice: return "storage -> memory";
    case WatchDir::kToStorage: return "memory -> storage";
    case WatchDir::kOther: return "other";
  }
  return "other";
}

const char* to_string(DecisionHook h) {
  switch (h) {
    case DecisionHook::kNone: return "none";
    case DecisionHook::kMapSegment: return "pci_p2pdma_map_segment";
    case DecisionHook::kUpdateState: return "__pci_p2pdma_update_state";
    case DecisionHook::kIterStart: return "blk_rq_dma_map_iter_start";
  }
  return "none";
}

const char* to_string(ProviderLayout l) {
  switch (l) {
    case ProviderLayout::kUnknown: return "unknown";
    case ProviderLayout::kPagemapProvider: return "pci_p2pdma_pagemap.provider";
    case ProviderLayout::kMemOwner: return "p2pdma_provider.owner";
  }
  return "unknown";
}

namespace {

// block/blk-core.c blk_errors[] and include/linux/blk_types.h, read in 6.1.192, 6.12.118 and 7.3.4.
struct StatusRow {
  std::uint32_t status;
  int first_major, first_minor;  // the first kernel read with this numbering
  int last_major, last_minor;    // the last
  StatusErrno errno_of;
};
constexpr StatusRow kBlkStatus[] = {
    {1, 6, 1, 99, 99, {EOPNOTSUPP, "EOPNOTSUPP"}},
    {2, 6, 1, 99, 99, {ETIMEDOUT, "ETIMEDOUT"}},
    {3, 6, 1, 99, 99, {ENOSPC, "ENOSPC"}},
    {4, 6, 1, 99, 99, {ENOLINK, "ENOLINK"}},
    {5, 6, 1, 99, 99, {EREMOTEIO, "EREMOTEIO"}},
    {6, 6, 1, 99, 99, {EBADE, "EBADE"}},
    {7, 6, 1, 99, 99, {ENODATA, "ENODATA"}},
    {8, 6, 1, 99, 99, {EILSEQ, "EILSEQ"}},
    {9, 6, 1, 99, 99, {ENOMEM, "ENOMEM"}},
    {10, 6, 1, 99, 99, {EIO, "EIO"}},
    {11, 6, 1, 99, 99, {EREMCHG, "EREMCHG"}},
    {12, 6, 1, 99, 99, {EAGAIN, "EAGAIN"}},
    {13, 6, 1, 99, 99, {EBUSY, "EBUSY"}},
    // Renumbered between 6.1 (ZONE_RESOURCE 14 ... OFFLINE 17) and 6.12 (OFFLINE 16, INVAL 19); 7.3.4
    // numbers them as 6.12 does, and the kernels between are taken to as well.
    {17, 6, 1, 6, 1, {ENODEV, "ENODEV"}},
    {16, 6, 12, 7, 3, {ENODEV, "ENODEV"}},
    {19, 6, 12, 7, 3, {EINVAL, "EINVAL"}},
};

bool at_least(int major, int minor, int m, int n) { return major > m || (major == m && minor >= n); }

}  // namespace

std::optional<StatusErrno> blk_status_errno(std::uint32_t status, int kernel_major, int kernel_minor) {
  for (const StatusRow& row : kBlkStatus)
    if (row.status == status && at_least(kernel_major, kernel_minor, row.first_major, row.first_minor) &&
        at_least(row.last_major, row.last_minor, kernel_major, kernel_minor))
      return row.errno_of;
  return std::nullopt;
}

namespace {

// The object's programs, in its order (src/live/bpf/watch.bpf.c).
struct ProgramRow {
  const char* program;
  const char* attach;    // as libbpf's section name says it
  const char* function;  // the BTF FUNC or btf_trace_ typedef it needs
};
constexpr ProgramRow kPrograms[] = {
    {"watch_map_sgtable", "fentry dma_map_sgtable", "dma_map_sgtable"},
    {"watch_map_segment", "fexit pci_p2pdma_map_segment", "pci_p2pdma_map_segment"},
    {"watch_update_state", "fexit __pci_p2pdma_update_state", "__pci_p2pdma_update_state"},
    {"watch_iter_start", "fexit blk_rq_dma_map_iter_start", "blk_rq_dma_map_iter_start"},
    {"watch_bio_pin", "fexit bio_iov_iter_get_pages", "bio_iov_iter_get_pages"},
    {"watch_rq_issue", "tp_btf block_rq_issue", "btf_trace_block_rq_issue"},
    {"watch_rq_requeue", "tp_btf block_rq_requeue", "btf_trace_block_rq_requeue"},
    {"watch_rq_complete", "tp_btf block_rq_complete", "btf_trace_block_rq_complete"},
    {"watch_fork", "tp_btf sched_process_fork", "btf_trace_sched_process_fork"},
};

// p2pdma.c is built only with CONFIG_PCI_P2PDMA (pci-p2pdma.h has inline stubs otherwise), and
// pci_p2pdma_add_resource() is global in every release: its FUNC says P2PDMA is in this kernel.
constexpr const char* kP2pdmaWitness = "pci_p2pdma_add_resource";

DecisionHook decision_hook(const BtfFacts& btf) {
  if (!btf.has_function(kP2pdmaWitness)) return DecisionHook::kNone;
  if (btf.has_function("pci_p2pdma_map_segment")) return DecisionHook::kMapSegment;
  // 6.17+ keeps __pci_p2pdma_update_state() as the helper the request iterator calls (7.3.4's BTF
  // has both), so the iterator is asked for first.
  if (btf.has_function("blk_rq_dma_map_iter_start") && btf.has_member("blk_dma_iter", "p2pdma"))
    return DecisionHook::kIterStart;
  if (btf.has_function("__pci_p2pdma_update_state")) return DecisionHook::kUpdateState;
  return DecisionHook::kNone;
}

ProviderLayout provider_layout(const BtfFacts& btf) {
  if (btf.has_member("pci_p2pdma_map_state", "mem") && btf.has_member("p2pdma_provider", "owner"))
    return ProviderLayout::kMemOwner;
  if (btf.has_member("pci_p2pdma_map_state", "pgmap") && btf.has_member("pci_p2pdma_pagemap", "provider") &&
      btf.has_member("pci_p2pdma_pagemap", "pgmap"))
    return ProviderLayout::kPagemapProvider;
  return ProviderLayout::kUnknown;
}

bool present(const BtfFacts& btf, const ProgramRow& row) {
  return std::strncmp(row.function, "btf_trace_", 10) == 0 ? btf.has_typedef(row.function)
                                                           : btf.has_function(row.function);
}

// Why a program present in the BTF stays off, or "" when it loads.
std::string why_off(const ProgramRow& row, DecisionHook decision) {
  const std::string name = row.program;
  const bool pairing = decision == DecisionHook::kMapSegment || decision == DecisionHook::kUpdateState;
  if (name == "watch_map_sgtable" && !pairing)
    return decision == DecisionHook::kNone ? "no P2PDMA in this kernel" : "not needed: the request is at hand";
  if (name == "watch_map_segment" && decision != DecisionHook::kMapSegment) return "another decision hook";
  if (name == "watch_update_state" && decision != DecisionHook::kUpdateState) return "another decision hook";
  if (name == "watch_iter_start" && decision != DecisionHook::kIterStart) return "another decision hook";
  if (name == "watch_bio_pin" && decision == DecisionHook::kNone) return "no P2PDMA in this kernel";
  return "";
}

}  // namespace

WatchHookPlan select_watch_hooks(const BtfFacts& btf) {
  WatchHookPlan plan;
  plan.decision = decision_hook(btf);
  plan.provider = provider_layout(btf);
  plan.not_supported = btf.enum_value("pci_p2pdma_map_type", "PCI_P2PDMA_MAP_NOT_SUPPORTED");
  plan.bus_addr = btf.enum_value("pci_p2pdma_map_type", "PCI_P2PDMA_MAP_BUS_ADDR");
  plan.thru_host_bridge = btf.enum_value("pci_p2pdma_map_type", "PCI_P2PDMA_MAP_THRU_HOST_BRIDGE");
  if (plan.decision == DecisionHook::kIterStart) plan.refusal_errno = "EINVAL";
  for (const ProgramRow& row : kPrograms) {
    WatchHook hook{row.program, row.attach};
    if (!present(btf, row)) {
      hook.why = std::string("not in this kernel's BTF (") + row.function + ")";
    } else {
      hook.why = why_off(row, plan.decision);
      hook.enabled = hook.why.empty();
    }
    plan.hooks.push_back(hook);
  }
  plan.block_hooks = btf.has_typedef("btf_trace_block_rq_issue") && btf.has_typedef("btf_trace_block_rq_complete");
  if (!plan.block_hooks)
    plan.problems.push_back("the block tracepoints block_rq_issue/block_rq_complete are not in this kernel's BTF");
  if (plan.decision == DecisionHook::kNone && btf.has_function(kP2pdmaWitness))
    plan.problems.push_back("P2PDMA is built in, but none of the decision functions watch knows is in the BTF");
  if (plan.decision != DecisionHook::kNone && plan.provider == ProviderLayout::kUnknown)
    plan.problems.push_back("the P2P memory's provider cannot be read on this kernel (neither known layout)");
  if (plan.decision != DecisionHook::kNone && (!plan.bus_addr || !plan.not_supported || !plan.thru_host_bridge))
    plan.problems.push_back("enum pci_p2pdma_map_type is not in this kernel's BTF");
  return plan;
}

}  // namespace p2pcheck
