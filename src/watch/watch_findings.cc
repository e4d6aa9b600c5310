// watch's findings and result (watch_internal.h): each a sentence about what the counters show,
// made from the report's rows once, so text and JSON say the same thing.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "p2pcheck/source/sysfs_text.h"
#include "watch_internal.h"

namespace p2pcheck::watch_detail {

bool is_p2p(WatchPath path) { return path == WatchPath::kBusAddr || path == WatchPath::kThruHostBridge; }

MapType observed_map_type(WatchPath path) {
  switch (path) {
    case WatchPath::kBusAddr: return MapType::kBusAddr;
    case WatchPath::kThruHostBridge: return MapType::kThruHostBridge;
    case WatchPath::kRefused: return MapType::kNotSupported;
    case WatchPath::kHost:
    case WatchPath::kStackRefused: break;
  }
  return MapType::kUnknown;
}

const char* path_words(WatchPath path) {
  switch (path) {
    case WatchPath::kHost: return "host";
    case WatchPath::kBusAddr: return "p2p bus address";
    case WatchPath::kThruHostBridge: return "p2p via host bridge";
    case WatchPath::kRefused: return "refused";
    case WatchPath::kStackRefused: return "refused by storage stack";
  }
  return "host";
}

const char* p2p_how(WatchPath path) {
  return path == WatchPath::kBusAddr ? "by bus address" : "through the host bridge";
}

std::string mib(std::uint64_t bytes) {
  if (bytes && bytes < 100 * 1024) return std::to_string(bytes) + " bytes";  // "0.0 MiB" would read as none
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string pair_label(const WatchPair& p) {
  std::string provider = p.provider.empty() ? "unknown provider" : p.provider;
  std::string client = p.client.empty() ? "unknown NVMe" : p.client;
  return provider + " -> " + (p.controller.empty() ? client : p.controller + " (" + client + ")");
}

std::string refusal_errno_text(const WatchRefusal& r) {
  return r.errno_name.empty() ? "blk_status " + std::to_string(r.status) : r.errno_name;
}

std::vector<std::string> needed_programs(DecisionHook decision) {
  std::vector<std::string> out = {"watch_rq_issue", "watch_rq_complete"};
  switch (decision) {
    case DecisionHook::kNone: break;
    case DecisionHook::kMapSegment: out.insert(out.end(), {"watch_map_sgtable", "watch_map_segment"}); break;
    case DecisionHook::kUpdateState: out.insert(out.end(), {"watch_map_sgtable", "watch_update_state"}); break;
    case DecisionHook::kIterStart: out.push_back("watch_iter_start"); break;
  }
  return out;
}

const WatchHook* find_hook(const WatchHookPlan& plan, const std::string& program) {
  for (const WatchHook& h : plan.hooks)
    if (h.program == program) return &h;
  return nullptr;
}

namespace {

// `watch`: what the probe counted, the evidence of every finding made from its counters.
Finding make(const char* id, Level level, std::string subject, std::string message, std::string fix = "",
             std::string counted = "") {
  Finding f;
  if (!counted.empty()) f.evidence.push_back({"watch", std::move(counted)});
  f.id = id;
  f.level = level;
  f.subject = std::move(subject);
  f.message = std::move(message);
  f.fix = std::move(fix);
  return f;
}

std::vector<Bdf> pair_devices(const WatchPair& p) {
  std::vector<Bdf> out;
  for (const std::string* name : {&p.provider, &p.client})
    if (auto b = Bdf::parse(*name)) out.push_back(*b);
  return out;
}

// "storage -> memory 9, memory -> storage 3"; "storage -> memory" when all went one way.
std::string by_direction(const WatchPair& p, std::uint64_t WatchCounts::*field) {
  std::vector<std::string> parts;
  for (WatchDir d : {WatchDir::kToDevice, WatchDir::kToStorage, WatchDir::kOther})
    if (std::uint64_t n = p.counts(d).*field) parts.push_back(std::string(to_string(d)) + " " + std::to_string(n));
  if (parts.size() == 1) parts[0] = parts[0].substr(0, parts[0].rfind(' '));
  return join(parts, ", ");
}

std::string processes_text(const std::vector<WatchProcess>& processes) {
  std::vector<std::string> parts;
  for (const WatchProcess& w : processes) parts.push_back(w.comm + " (pid " + std::to_string(w.tgid) + ")");
  return join(parts, ", ");
}

constexpr const char* kCaptureFix =
    "send `sudo p2pcheck capture -o host.tar.zst` and this run's `p2pcheck watch --json` (or its --record file) to "
    "the p2pcheck maintainers: the capture holds what p2pcheck decided from, the watch what the kernel did";

Finding mismatch(const WatchPair& p) {
  Finding f = make("watch.mismatch", Level::kFail, pair_label(p),
                   std::string("the kernel mapped this pair ") + to_string(observed_map_type(p.path)) + " (" +
                       path_words(p.path) + ", " + std::to_string(p.total().requests) +
                       " request(s)), but p2pcheck predicted " + to_string(p.predicted) + " (" + p.rule +
                       "): the kernel's decision is what happened, so p2pcheck's model of this machine is wrong "
                       "for this pair",
                   kCaptureFix);
  f.evidence = {{"watch", std::string(to_string(observed_map_type(p.path))) + " on " +
                              std::to_string(p.total().requests) + " request(s)"},
                {"prediction", std::string(to_string(p.predicted)) + ": " + p.rule}};
  f.devices = pair_devices(p);
  return f;
}

Finding refused(const WatchPair& p) {
  const WatchRefusal& r = *p.refusal;
  std::string how = !r.observed            ? "expected for this kernel: the probe did not see the requests end"
                    : r.errno_name.empty() ? "observed; p2pcheck's status table for this kernel does not name it"
                                           : "observed: blk_status " + std::to_string(r.status);
  std::string message = std::to_string(p.total().requests) + " request(s) refused by the kernel (NOT_SUPPORTED; " +
                        by_direction(p, &WatchCounts::requests) + "): the I/O failed with " + refusal_errno_text(r) +
                        " (" + how + ")";
  if (p.agrees == Tri::kYes) message += "; as p2pcheck predicted: " + p.rule;
  if (!p.processes.empty()) message += "; by " + processes_text(p.processes);
  Finding f = make("watch.refused", Level::kFail, pair_label(p), message, p.refused_fix(),
                   "refused on " + std::to_string(p.total().requests) + " request(s)" +
                       (r.observed ? ", last blk_status " + std::to_string(r.status) : ""));
  f.devices = pair_devices(p);
  return f;
}

Finding errors(const WatchPair& p, const WatchFacts& facts) {
  const WatchCounts t = p.total();
  std::string message = std::to_string(t.errors) + " P2P request(s) " + p2p_how(p.path) + " (" +
                        by_direction(p, &WatchCounts::errors) + ") completed with an error (" + mib(t.error_bytes) +
                        ")";
  if (t.last_status) {
    message += ", last blk_status " + std::to_string(t.last_status);
    if (auto v = parse_kernel_version(facts.kernel_release))
      if (auto e = blk_status_errno(t.last_status, v->major, v->minor)) message += std::string(" (") + e->name + ")";
  }
  message += ": the kernel took the P2P path and the transfer failed";
  Finding f = make("watch.errors", Level::kFail, pair_label(p), message,
                   "read the kernel log around the errors (nvme timeouts, AER, IOMMU faults); `p2pcheck verify` on "
                   "this pair moves known data and checks it",
                   std::string(to_string(p.path)) + ": " + std::to_string(t.errors) + " error(s), " +
                       std::to_string(t.error_bytes) + " bytes");
  f.devices = pair_devices(p);
  return f;
}

// P2P requests put back on the queue before they completed: nvme aborts a request that timed out and
// retries it, which is how a P2P transfer the root complex drops shows (pre-Zen AMD drops P2P reads).
Finding requeued(const WatchPair& p) {
  const WatchCounts t = p.total();
  std::string message = std::to_string(t.requeues) + " requeue(s) of P2P requests " + p2p_how(p.path) +
                        " before they completed (" + by_direction(p, &WatchCounts::requeues) +
                        "): the kernel issued them again after a timeout's abort or a busy device";
  message += t.errors ? "" : "; all completed in the end";
  Finding f = make("watch.requeued", Level::kWarn, pair_label(p), message,
                   "read the kernel log for nvme timeouts and aborts on this NVMe: a P2P request that times out was "
                   "lost between the devices (a root complex or switch that drops peer-to-peer reads, an IOMMU "
                   "fault); `p2pcheck verify` on this pair moves known data and checks it",
                   std::string(to_string(p.path)) + ": " + std::to_string(t.requeues) + " requeue(s)");
  f.devices = pair_devices(p);
  return f;
}

// A process refused P2P on an NVMe that then moved data through host memory on one of its disks:
// hipFile's or GDS's compatibility mode. Counters are cumulative, so "then" is "also".
void fallbacks(const WatchReport& r, std::vector<Finding>& out) {
  for (const WatchPair& p : r.pairs) {
    if (p.path != WatchPath::kRefused) continue;
    for (const WatchProcess& refused : p.processes) {
      if (is_kernel_worker(refused.comm)) continue;  // a kworker's tgid names no application
      for (const WatchDiskRow& h : r.host) {
        bool same_nvme = (!p.client.empty() && h.client == p.client) ||
                         std::find(p.disks.begin(), p.disks.end(), h.disk) != p.disks.end();
        auto it = std::find_if(h.processes.begin(), h.processes.end(),
                               [&](const WatchProcess& w) { return w.tgid == refused.tgid && w.comm == refused.comm; });
        if (!same_nvme || it == h.processes.end() || !it->bytes) continue;
        Finding f = make("watch.fallback", Level::kFail, refused.comm + " (pid " + std::to_string(refused.tgid) + ")",
                         std::to_string(refused.requests) + " request(s) refused on " + pair_label(p) + ", and " +
                             mib(it->bytes) + " moved " + to_string(h.dir) + " through host memory on " + h.disk +
                             " by the same process: a fallback (hipFile or GDS compatibility mode); the data moved, "
                             "but not peer-to-peer",
                         p.refused_fix(),
                         "refused: " + std::to_string(refused.requests) + " request(s); host on " + h.disk + ": " +
                             std::to_string(it->bytes) + " bytes, pid " + std::to_string(refused.tgid));
        f.devices = pair_devices(p);
        out.push_back(std::move(f));
      }
    }
  }
}

void stack_refusals(const WatchReport& r, std::vector<Finding>& out) {
  std::map<std::string, std::pair<std::uint64_t, std::vector<WatchProcess>>> by_disk;
  for (const WatchDiskRow& d : r.stack_refused) {
    auto& [requests, processes] = by_disk[d.disk];
    requests += d.counts.requests;
    for (const WatchProcess& w : d.processes) processes.push_back(w);
  }
  for (const auto& [disk, entry] : by_disk) {
    std::string name = disk.empty() ? "an unnamed disk" : disk;
    out.push_back(make("watch.stack_refused", Level::kFail, name,
                       std::to_string(entry.first) + " request(s) with P2P memory refused by the storage stack on " +
                           name + " (EREMOTEIO: md, dm and loop do not take P2P pages)" +
                           (entry.second.empty() ? "" : "; by " + processes_text(entry.second)),
                       "put the data on a file system directly on the NVMe (no md, dm or loop in between)",
                       "stack_refused on " + name + ": " + std::to_string(entry.first) + " request(s)"));
  }
}

// The probe counts these for the whole machine: it cannot tell which pair or process they were.
void unattributed(const WatchReport& r, std::vector<Finding>& out) {
  struct Counted {
    const char* id;
    std::uint64_t count;
    const char* what;
    const char* fix;
    const char* name;
  };
  const Counted rows[] = {
      {"watch.unpaired", r.unpaired, " P2P mapping(s) were claimed by no request issue: counted, but in no pair's row",
       "if it grows with the workload, send this run's --record file to the p2pcheck maintainers: something maps "
       "P2P memory outside the block requests the probe follows",
       "unpaired"},
      {"watch.dropped_rows", r.dropped_rows,
       " request(s) did not fit the probe's table of counter rows: counted, but in no row",
       "watch a shorter run (--duration): the probe's table holds 8,192 rows, one per pair, path, direction and "
       "process, each kept for the whole run",
       "dropped_rows"},
      {"watch.inflight_full", r.inflight_full,
       " request(s) were not followed: the probe's table of requests in flight was full",
       "lower the I/O queue depth while watching: the probe follows 65,536 requests in flight", "inflight_full"},
  };
  const std::string whole = r.filter.empty() && r.scope == WatchScope::kMachine
                                ? ""
                                : " (all I/O on the machine: the selection cannot apply to these)";
  for (const Counted& c : rows)
    if (c.count)
      out.push_back(make(c.id, Level::kWarn, "", std::to_string(c.count) + c.what + whole, c.fix,
                         std::string(c.name) + " = " + std::to_string(c.count)));
}

// What the process scope (the command's tree, --pid, --comm) may have missed.
void scope_notes(const WatchReport& r, std::vector<Finding>& out) {
  if (r.outside.worker_p2p_requests)
    out.push_back(
        make("watch.worker_not_counted", Level::kWarn, "",
             std::to_string(r.outside.worker_p2p_requests) +
                 " P2P, refused or failed request(s) were issued by kernel workers, so no process is "
                 "known for them: not counted, though they may be the watched process's",
             "run again with --all to count them, or `p2pcheck verify` on the pair to prove it",
             "outside the scope, by kworker: " + std::to_string(r.outside.worker_p2p_requests) + " request(s)"));
  if (r.tree_full)
    out.push_back(make("watch.tree_full", Level::kWarn, "",
                       std::to_string(r.tree_full) +
                           " process(es) of the command's tree did not fit the probe's table: their I/O is not "
                           "counted",
                       "run again with --all (the probe follows 65,536 processes of a tree)",
                       "tree_full = " + std::to_string(r.tree_full)));
}

void hook_notes(const WatchReport& r, std::vector<Finding>& out) {
  const WatchHookPlan& plan = r.facts.hooks;
  if (const WatchHook* pin = find_hook(plan, "watch_bio_pin"); pin && pin->enabled && !pin->attached)
    out.push_back(make("watch.hooks", Level::kWarn, pin->attach,
                       "storage-stack refusals are not counted: " + pin->attach + " did not attach" +
                           (pin->error.empty() ? "" : " (" + pin->error + ")"),
                       "the application still sees them as EREMOTEIO; the kernel log has the BPF verifier's reason",
                       pin->program + ": not attached"));
  if (plan.decision != DecisionHook::kNone)
    for (const std::string& problem : plan.problems)
      out.push_back(make("watch.hooks", Level::kWarn, "", problem,
                         "send this kernel's BTF (`p2pcheck watch --save-btf FILE`) to the p2pcheck maintainers",
                         std::string(to_string(plan.decision)) + ": " + problem));
}

void pair_notes(const WatchReport& r, std::vector<Finding>& out) {
  for (const WatchPair& p : r.pairs)
    if (!p.in_machine)
      out.push_back(make("watch.not_in_machine", Level::kInfo, pair_label(p),
                         "not in " + r.source +
                             "'s PCI tree: no prediction for this pair (replay a recording with --root or --dump "
                             "of the machine it was made on)",
                         "", "provider " + p.provider + ", client " + p.client));
  std::set<std::string> workers;
  auto note = [&](const std::vector<WatchProcess>& ps) {
    for (const WatchProcess& w : ps)
      if (is_kernel_worker(w.comm)) workers.insert(w.comm);
  };
  for (const WatchPair& p : r.pairs) note(p.processes);
  for (const WatchDiskRow& d : r.host) note(d.processes);
  if (!workers.empty())
    out.push_back(make("watch.kworker", Level::kInfo, join({workers.begin(), workers.end()}, ", "),
                       "requests issued by kernel workers: kblockd dispatched them, so the process that asked for "
                       "the I/O is not known for those",
                       "", "comm = " + join({workers.begin(), workers.end()}, ", ")));
}

void environment_notes(const WatchReport& r, std::vector<Finding>& out) {
  const NvidiaFsState& nv = r.facts.nvidia_fs;
  if (nv.loaded == Tri::kYes) {
    Finding f = make("watch.nvidia_fs", Level::kInfo, "nvidia_fs",
                     "nvidia_fs is loaded: GPUDirect Storage through nvidia-fs does not use kernel P2PDMA, so "
                     "its I/O is not in these counts (its own counters are in " +
                         std::string(kNvidiaFsStatsPath) + ")");
    f.evidence.push_back({kNvidiaFsModulePath, "present"});
    if (nv.stats) {
      std::string_view rest = *nv.stats;
      f.evidence.push_back({kNvidiaFsStatsPath, std::string(trim(next_line(rest)))});
    }
    out.push_back(std::move(f));
  } else if (nv.loaded == Tri::kUnknown) {
    out.push_back(make("watch.nvidia_fs", Level::kUnknown, "nvidia_fs",
                       "whether nvidia_fs is loaded is unknown: GPUDirect Storage through nvidia-fs would not be "
                       "in these counts",
                       "look for nvidia_fs in /proc/modules on the machine itself"));
    out.back().evidence.push_back({kNvidiaFsModulePath, "unknown (not in this source)"});
  }
  if (!r.cannot_watch && r.facts.hooks.decision == DecisionHook::kNone) {
    Finding f = make("watch.no_p2pdma", Level::kInfo, "",
                     "this kernel has no P2PDMA (no pci_p2pdma_add_resource in its BTF): nothing on this kernel "
                     "can go peer-to-peer; only host-memory I/O is counted",
                     "boot a kernel built with CONFIG_PCI_P2PDMA=y to move data peer-to-peer");
    f.evidence.push_back({kVmlinuxBtfPath, "no pci_p2pdma_add_resource (decision hook: none)"});
    out.push_back(std::move(f));
  }
  const LockdownState& lock = r.facts.lockdown;
  if (!r.cannot_watch && lock.forbids_watch() == Tri::kUnknown) {
    Finding f = make("watch.lockdown", Level::kInfo, "",
                     "the kernel's lockdown mode is unknown: under lockdown=confidentiality the probe cannot read "
                     "device and disk names, and its rows would be unnamed");
    f.evidence.push_back({kLockdownPath, lock.status == ReadStatus::kOk ? lock.mode : lock.error});
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> watch_findings(const WatchReport& r) {
  std::vector<Finding> out;
  if (r.cannot_watch)
    out.push_back(make("watch.cannot_watch", Level::kUnknown, "", "cannot watch: " + *r.cannot_watch,
                       "run `sudo p2pcheck watch` on a kernel with BTF (CONFIG_DEBUG_INFO_BTF=y) and without "
                       "lockdown=confidentiality; `p2pcheck verify` proves a pair without eBPF",
                       "probe not loaded"));
  for (const WatchPair& p : r.pairs) {
    if (p.agrees == Tri::kNo) out.push_back(mismatch(p));
    if (p.path == WatchPath::kRefused && p.refusal) out.push_back(refused(p));
    if (is_p2p(p.path) && p.total().errors) out.push_back(errors(p, r.facts));
    if (is_p2p(p.path) && p.total().requeues) out.push_back(requeued(p));
  }
  fallbacks(r, out);
  stack_refusals(r, out);
  unattributed(r, out);
  scope_notes(r, out);
  hook_notes(r, out);
  pair_notes(r, out);
  environment_notes(r, out);
  for (Finding& f : out) finish_provenance(f);  // cannot_watch: nothing was observed, so "unreadable"
  return out;
}

WatchResult judge_watch(const WatchReport& r) {
  if (r.cannot_watch) return WatchResult::kUnknown;
  for (const Finding& f : r.findings)
    if (f.level == Level::kFail) return WatchResult::kFail;
  return r.p2p_bytes() ? WatchResult::kP2pSeen : WatchResult::kNoP2p;
}

}  // namespace p2pcheck::watch_detail
