// `p2pcheck watch`: the eBPF probe's side. What the running kernel's BTF offers (BtfFacts), which
// hooks the probe attaches there (select_watch_hooks, pure, tested against saved BTF), and the
// probe's counters as the loader reads them (WatchSnapshot). Loading the probe is a live-only
// action: DeviceActions::start_watch().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace p2pcheck {

// How a request's data moved (src/live/bpf/watch_shared.h, enum watch_path).
enum class WatchPath {
  kHost,            // no P2P page in the request: host memory
  kBusAddr,         // P2P, the NVMe given the PCI bus address (PCI_P2PDMA_MAP_BUS_ADDR)
  kThruHostBridge,  // P2P through the root complex (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE)
  kRefused,         // the kernel's map type was NOT_SUPPORTED: the request failed
  kStackRefused,    // md, dm or loop refused to pin the P2P pages (-EREMOTEIO from bio_iov_iter_get_pages)
};
const char* to_string(WatchPath p);  // "host", "bus_addr", "thru_host_bridge", "refused", "stack_refused"

// A read, a write, anything else. The names are the DMA API's (DMA_FROM_DEVICE: to the memory the
// device writes), kept in JSON keys ("to_device"); people read the data's way (to_string).
enum class WatchDir { kToDevice, kToStorage, kOther };
const char* to_string(WatchDir d);  // "storage -> memory", "memory -> storage", "other"

// One counter row of the probe: a (provider, client, disk, process, path, direction).
struct WatchRow {
  std::string provider;  // the P2P memory's PCI device name ("0000:03:00.0"); empty for host memory
  std::string client;    // the DMA device (the NVMe function); empty where the hook does not see it
  std::string disk;      // "nvme1n1"; empty for a refusal whose request the probe did not see end
  std::string comm;      // the submitting task's name (a kworker when kblockd dispatched it)
  std::uint32_t tgid = 0;
  WatchPath path = WatchPath::kHost;
  WatchDir dir = WatchDir::kOther;
  std::uint64_t requests = 0;  // completed requests (refusals: refused requests)
  std::uint64_t bytes = 0;     // completed without error
  std::uint64_t segments = 0;  // P2P segments mapped (0 where the hook does not see segments)
  std::uint64_t errors = 0;    // completed with an error
  std::uint64_t error_bytes = 0;
  std::uint32_t last_status = 0;  // the last error's blk_status_t (0: none seen)
  std::uint64_t requeues = 0;     // requeued before they completed (a timeout's abort, a busy device)
  // The submitter was in the process tree of the command watch ran (WatchProbe::follow); a requeued
  // request stays its first submitter's. Always false when no command was followed.
  bool in_tree = false;
};

// The probe's counters since it started, cumulative.
struct WatchSnapshot {
  double seconds = 0;  // since the probe started
  std::vector<WatchRow> rows;
  std::uint64_t unpaired = 0;       // a P2P mapping no request issue claimed
  std::uint64_t dropped_rows = 0;   // rows that did not fit the probe's table
  std::uint64_t inflight_full = 0;  // requests not followed: the in-flight table was full
  std::uint64_t tree_full = 0;      // processes of the followed tree that did not fit its table
};

// The kernel's blk_status_t as the errno an application sees (block/blk-core.c blk_errors[]):
// 5 (BLK_STS_TARGET) -> {EREMOTEIO, "EREMOTEIO"}. Statuses 1-13 mean the same in 6.1, 6.12 and
// 7.3; above 13 they were renumbered (6.1: OFFLINE 17; 6.12 and 7.3: OFFLINE 16, INVAL 19), so those
// are named only for 6.1 and for 6.12-7.3, whose tables were read at both ends. nullopt for a status
// not known there.
struct StatusErrno {
  int errno_value;
  const char* name;
};
std::optional<StatusErrno> blk_status_errno(std::uint32_t status, int kernel_major, int kernel_minor);

// What a BTF blob offers, as the hook selection asks it.
class BtfFacts {
 public:
  virtual ~BtfFacts() = default;
  virtual bool has_function(const std::string& name) const = 0;  // a BTF FUNC
  virtual bool has_typedef(const std::string& name) const = 0;   // btf_trace_<tracepoint>
  virtual bool has_member(const std::string& struct_name, const std::string& member) const = 0;
  virtual std::optional<long long> enum_value(const std::string& enum_name, const std::string& value) const = 0;
};
// Parses a BTF blob (/sys/kernel/btf/vmlinux, or one saved with `watch --save-btf`) with libbpf;
// throws Error naming `where` when it is not BTF.
std::unique_ptr<BtfFacts> parse_btf(const std::string& bytes, const std::string& where);
// The part of a BTF the hook selection reads (the hook functions, tracepoint typedefs, the P2P
// structs' members and the enums), as a BTF blob of a few hundred bytes: what a support engineer
// sends and what the tests keep for each kernel.
std::string watch_btf_subset(const std::string& bytes, const std::string& where);

// Which function decides P2P in this kernel (watch-design.md §1).
enum class DecisionHook {
  kNone,         // no P2PDMA in this kernel: nothing here can go peer-to-peer
  kMapSegment,   // pci_p2pdma_map_segment(), 6.1-6.15
  kUpdateState,  // __pci_p2pdma_update_state(), 6.16
  kIterStart,    // blk_rq_dma_map_iter_start(), 6.17+
};
const char* to_string(DecisionHook h);  // the function's name, "none"

// Where the probe finds the P2P memory's provider.
enum class ProviderLayout {
  kUnknown,          // neither layout: the provider column stays empty
  kPagemapProvider,  // container_of(state->pgmap, struct pci_p2pdma_pagemap, pgmap)->provider, 6.1-6.18
  kMemOwner,         // state->mem->owner, 7.x
};
const char* to_string(ProviderLayout l);

struct WatchHook {
  std::string program;    // the BPF program ("watch_map_segment")
  std::string attach;     // "fexit pci_p2pdma_map_segment"
  bool enabled = false;   // the selection loads it
  std::string why;        // why not, when it is not enabled
  bool attached = false;  // filled by the loader
  std::string error;      // the loader's error for this program
};

struct WatchHookPlan {
  DecisionHook decision = DecisionHook::kNone;
  ProviderLayout provider = ProviderLayout::kUnknown;
  std::vector<WatchHook> hooks;  // every program of the object, in the object's order
  // The kernel's numbers for the map types (they moved in 6.16), for the record.
  std::optional<long long> not_supported, bus_addr, thru_host_bridge;
  bool block_hooks = false;           // both block tracepoints: requests can be counted at all
  std::vector<std::string> problems;  // what this BTF lacks that watch needs
  // A refused P2P request's errno: EREMOTEIO up to 6.16 (nvme turns -EREMOTEIO into
  // BLK_STS_TARGET), EINVAL from 6.17 (blk_dma_map_iter_start sets BLK_STS_INVAL).
  const char* refusal_errno = "EREMOTEIO";
};
WatchHookPlan select_watch_hooks(const BtfFacts& btf);

// A loaded, attached probe. poll() reads its counters; destroying it detaches everything.
class WatchProbe {
 public:
  virtual ~WatchProbe() = default;
  virtual const WatchHookPlan& hooks() const = 0;  // with `attached` and `error` filled
  virtual WatchSnapshot poll() = 0;
  // Counts `pid` and every process it starts from now on as the watched command's tree (the probe's
  // sched_process_fork hook); "" or why not.
  virtual std::string follow(std::uint32_t pid) = 0;
};

// What starting the probe gave: a probe, or why not (with the errno: EPERM = not allowed here).
struct WatchStart {
  std::unique_ptr<WatchProbe> probe;
  std::string error;
  int error_number = 0;
  WatchHookPlan hooks;  // as far as the loader got
};

// Whether this build carries the probe (CMake option P2PCHECK_WATCH).
bool watch_probe_built();
// Loads and attaches the probe with the plan's enabled programs (live/watch_loader.cc). Callers go
// through DeviceActions::start_watch(); a build without the probe says so here.
WatchStart start_watch_probe(const WatchHookPlan& plan);

}  // namespace p2pcheck
