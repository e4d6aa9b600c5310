// watch's rows: the probe's counter rows filtered, grouped by pair and path (P2P), by disk and
// direction (host memory, storage-stack refusals), each P2P pair joined with p2pcheck's prediction
// made exactly as verify plans a pair (decide_pair).
#include <algorithm>
#include <cerrno>
#include <map>
#include <tuple>
#include <utility>

#include "p2pcheck/explain/pair_fix.h"
#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"
#include "watch_internal.h"

namespace p2pcheck {

using namespace watch_detail;

const char* to_string(WatchResult result) {
  switch (result) {
    case WatchResult::kP2pSeen: return "P2P SEEN";
    case WatchResult::kFail: return "FAIL";
    case WatchResult::kUnknown: return "UNKNOWN";
    case WatchResult::kNoP2p: return "NO P2P";
  }
  return "UNKNOWN";
}

const char* to_string(WatchScope scope) {
  switch (scope) {
    case WatchScope::kMachine: return "machine";
    case WatchScope::kTree: return "command_tree";
    case WatchScope::kSelected: return "selected";
  }
  return "machine";
}

bool is_kernel_worker(const std::string& comm) { return comm.rfind("kworker/", 0) == 0; }

const WatchCounts& WatchPair::counts(WatchDir dir) const {
  return dir == WatchDir::kToDevice ? to_device : dir == WatchDir::kToStorage ? to_storage : other;
}

namespace {

void add(WatchCounts& c, const WatchCounts& more) {
  c.requests += more.requests;
  c.bytes += more.bytes;
  c.segments += more.segments;
  c.errors += more.errors;
  c.error_bytes += more.error_bytes;
  if (more.last_status) c.last_status = more.last_status;
  c.requeues += more.requeues;
}

WatchCounts counts_of(const WatchRow& r) {
  return {r.requests, r.bytes, r.segments, r.errors, r.error_bytes, r.last_status, r.requeues};
}

}  // namespace

WatchCounts WatchPair::total() const {
  WatchCounts t;
  for (const WatchCounts* c : {&to_device, &to_storage, &other}) add(t, *c);
  return t;
}

std::uint64_t WatchReport::p2p_bytes() const {
  std::uint64_t n = 0;
  for (const WatchPair& p : pairs)
    if (is_p2p(p.path)) n += p.total().bytes;
  return n;
}

namespace {

// --gpu and --nvme resolved once against the machine.
struct Selection {
  std::vector<Bdf> gpus, nvme_bdfs;
  std::vector<std::string> nvme_names;  // controller or namespace names, as given
  bool any_gpu = false, any_nvme = false;
};

// Each selector must name a function of the machine, as check's selection does: a typo or another
// machine's address would otherwise count nothing and read as "no P2P".
Selection resolve(const WatchFilter& filter, const MachineState& state) {
  Selection s;
  s.any_gpu = !filter.gpu.empty();
  s.any_nvme = !filter.nvme.empty();
  const std::string in = " in " + printable(state.topo.source_description);
  for (const std::string& text : filter.gpu) {
    auto bdf = Bdf::parse(text);
    if (!bdf)
      throw UsageError("--gpu " + printable(text) +
                       ": not a PCI address (watch names P2P memory by its provider's, such as 0000:03:00.0)");
    if (!state.topo.find(*bdf)) throw UsageError("--gpu " + printable(text) + ": no PCI function at that address" + in);
    s.gpus.push_back(*bdf);
  }
  for (const std::string& text : filter.nvme) {
    if (auto bdf = Bdf::parse(text)) {
      if (!state.topo.find(*bdf))
        throw UsageError("--nvme " + printable(text) + ": no PCI function at that address" + in);
      s.nvme_bdfs.push_back(*bdf);
      continue;
    }
    std::string name = text.rfind("/dev/", 0) == 0 ? text.substr(5) : text;
    auto kind = parse_nvme_name(name);
    if (!kind) throw UsageError("--nvme " + printable(text) + ": not a PCI address or an NVMe name (nvme1, nvme1n1)");
    if (kind->kind == NvmeName::Kind::kPartition) name = kind->ns;
    s.nvme_names.push_back(name);
    const std::size_t before = s.nvme_bdfs.size();
    for (const NvmeController& c : state.inv.nvmes) {
      bool named = !c.name.empty() && c.name == name;
      for (const NvmeNamespace& ns : c.namespaces) named = named || ns.name == name;
      if (named) s.nvme_bdfs.push_back(c.bdf);
    }
    if (s.nvme_bdfs.size() == before)
      throw UsageError("--nvme " + printable(text) + ": no NVMe controller or namespace of that name" + in);
  }
  return s;
}

// The NVMe controller a request disk ("nvme1n1", or a multipath path node "nvme1c1n1") belongs to.
const NvmeController* controller_of_disk(const Inventory& inv, const std::string& disk) {
  if (disk.empty()) return nullptr;
  for (const NvmeController& c : inv.nvmes) {
    for (const NvmeNamespace& ns : c.namespaces)
      if (ns.name == disk) return &c;
    for (const std::string& node : c.path_nodes)
      if (node == disk) return &c;
  }
  return nullptr;
}

bool nvme_selected(const Selection& s, const WatchRow& row, const Inventory& inv) {
  if (!s.any_nvme || row.path == WatchPath::kStackRefused) return true;
  std::optional<Bdf> bdf = Bdf::parse(row.client);
  const NvmeController* c = bdf ? inv.nvme_at(*bdf) : controller_of_disk(inv, row.disk);
  if (!bdf && c) bdf = c->bdf;
  if (bdf && std::find(s.nvme_bdfs.begin(), s.nvme_bdfs.end(), *bdf) != s.nvme_bdfs.end()) return true;
  for (const std::string& name : s.nvme_names) {
    if (!row.disk.empty() && (name == row.disk || (!c && row.disk.rfind(name + "n", 0) == 0))) return true;
    if (c && !c->name.empty() && name == c->name) return true;
  }
  return false;
}

// --gpu and --nvme: which devices' rows.
bool selected(const Selection& s, const WatchRow& row, const Inventory& inv) {
  if (s.any_gpu && !row.provider.empty()) {
    auto bdf = Bdf::parse(row.provider);
    if (!bdf || std::find(s.gpus.begin(), s.gpus.end(), *bdf) == s.gpus.end()) return false;
  }
  return nvme_selected(s, row, inv);
}

// --pid, --comm, the command's tree: whose rows.
bool in_scope(WatchScope scope, const WatchFilter& f, const WatchRow& row) {
  switch (scope) {
    case WatchScope::kMachine: return true;
    case WatchScope::kTree: return row.in_tree;
    case WatchScope::kSelected: return (!f.pid || row.tgid == *f.pid) && (!f.comm || row.comm == *f.comm);
  }
  return true;
}

void add_process(std::vector<WatchProcess>& processes, const WatchRow& row) {
  auto it = std::find_if(processes.begin(), processes.end(),
                         [&](const WatchProcess& p) { return p.tgid == row.tgid && p.comm == row.comm; });
  if (it == processes.end()) it = processes.insert(processes.end(), WatchProcess{row.tgid, row.comm, 0, 0});
  it->requests += row.requests;
  it->bytes += row.bytes;
}

void sort_processes(std::vector<WatchProcess>& processes) {
  std::sort(processes.begin(), processes.end(), [](const WatchProcess& a, const WatchProcess& b) {
    return std::tie(b.bytes, b.requests, a.tgid, a.comm) < std::tie(a.bytes, a.requests, b.tgid, b.comm);
  });
}

// "GPU", "CMB of nvme0", or what the function is: verify's names for a provider.
std::string provider_role(const Function& fn, const Inventory& inv) {
  std::string role = role_of(fn, inv);
  if (const NvmeController* c = inv.nvme_at(fn.bdf); c && role == "NVMe")
    role = "CMB of " + (c->name.empty() ? std::string("NVMe") : c->name);
  return role;
}

Tri agreement(WatchPath path, MapType predicted) {
  if (predicted == MapType::kUnknown) return Tri::kUnknown;
  return tri(observed_map_type(path) == predicted);
}

void predict(WatchPair& p, const MachineState& s, const KernelRules& rules) {
  auto provider = Bdf::parse(p.provider), client = Bdf::parse(p.client);
  const Function* pf = provider ? s.topo.find(*provider) : nullptr;
  const Function* cf = client ? s.topo.find(*client) : nullptr;
  if (pf) p.provider_role = provider_role(*pf, s.inv);
  if (const NvmeController* c = cf ? s.inv.nvme_at(*client) : nullptr) p.controller = c->name;
  if (!pf || !cf) return;
  p.in_machine = true;
  PairDecision d = decide_pair(s.topo, s.machine, rules, DevicePair{*provider, *client});
  p.predicted = d.map_type;
  p.verdict = d.verdict;
  p.rule = rule_text(d);
  p.fix = pair_fix(d, rules, s.machine).text;
  p.agrees = agreement(p.path, d.map_type);
}

int errno_value_of(const std::string& name) {
  if (name == "EREMOTEIO") return EREMOTEIO;
  if (name == "EINVAL") return EINVAL;
  return 0;
}

// The errno from the status the probe saw end the request, else the one this kernel sets.
WatchRefusal refusal_of(const WatchPair& p, const WatchFacts& facts) {
  WatchRefusal r;
  r.status = p.total().last_status;
  if (r.status) {
    r.observed = true;
    if (auto v = parse_kernel_version(facts.kernel_release))
      if (auto e = blk_status_errno(r.status, v->major, v->minor)) {
        r.errno_name = e->name;
        r.errno_value = e->errno_value;
      }
    return r;
  }
  r.errno_name = facts.hooks.refusal_errno ? facts.hooks.refusal_errno : "EREMOTEIO";
  r.errno_value = errno_value_of(r.errno_name);
  return r;
}

// Why nothing can be counted: the facts' reason, a kernel with P2PDMA whose decision function watch
// does not know, or a program counting needs that did not attach.
std::optional<std::string> cannot_watch_of(const WatchFacts& facts, WatchScope scope) {
  if (facts.cannot_watch) return facts.cannot_watch;
  const WatchHookPlan& plan = facts.hooks;
  if (const WatchHook* fork = find_hook(plan, "watch_fork"); scope == WatchScope::kTree && !(fork && fork->attached))
    return std::string("the hook tp_btf sched_process_fork did not attach") +
           (fork && !fork->error.empty() ? " (" + fork->error + ")" : "") +
           ": the command's process tree cannot be followed (--all counts every process on the machine)";
  if (plan.decision == DecisionHook::kNone && !plan.problems.empty())
    return "this kernel's BTF lacks what watch needs: " + join(plan.problems, "; ");
  for (const std::string& program : needed_programs(plan.decision)) {
    const WatchHook* hook = find_hook(plan, program);
    if (!hook) return "the probe has no program " + program;
    if (hook->attached) continue;
    const std::string& why = hook->error.empty() ? hook->why : hook->error;
    return "the hook " + hook->attach + " did not attach" + (why.empty() ? "" : " (" + why + ")") +
           ": requests cannot be counted without it";
  }
  return std::nullopt;
}

using PairKey = std::tuple<std::string, std::string, WatchPath>;
using DiskKey = std::pair<std::string, WatchDir>;

WatchDiskRow& disk_row(std::map<DiskKey, WatchDiskRow>& rows, const WatchRow& r, const Inventory& inv) {
  WatchDiskRow& row = rows[{r.disk, r.dir}];
  if (row.disk.empty() && !r.disk.empty()) {
    row.disk = r.disk;
    if (const NvmeController* c = controller_of_disk(inv, r.disk)) {
      row.controller = c->name;
      row.client = c->bdf.str();
    }
  }
  row.dir = r.dir;
  return row;
}

void left_out(WatchOutside& out, const WatchRow& row) {
  out.requests += row.requests;
  out.bytes += row.bytes;
  add_process(out.processes, row);
  if (is_kernel_worker(row.comm) && (row.path != WatchPath::kHost || row.errors))
    out.worker_p2p_requests += row.requests;
}

WatchCounts& counts_for(WatchPair& p, WatchDir dir) {
  return dir == WatchDir::kToDevice ? p.to_device : dir == WatchDir::kToStorage ? p.to_storage : p.other;
}

// One pass over the rows, each kind to its table.
void fill_rows(WatchReport& r, const WatchSnapshot& snapshot, const MachineState& state) {
  const Selection sel = resolve(r.filter, state);
  auto attached = [&](const char* program) {
    const WatchHook* hook = find_hook(r.facts.hooks, program);
    return hook && hook->attached;
  };
  const bool block = attached("watch_rq_issue") && attached("watch_rq_complete");
  r.requeues_counted = block && attached("watch_rq_requeue");
  std::map<PairKey, WatchPair> pairs;
  std::map<DiskKey, WatchDiskRow> host, stack;
  for (const WatchRow& row : snapshot.rows) {
    if (!selected(sel, row, state.inv)) continue;
    if (!in_scope(r.scope, r.filter, row)) {
      if (row.path != WatchPath::kHost || block) left_out(r.outside, row);
      continue;
    }
    if (row.path == WatchPath::kHost) {
      if (!block) continue;  // never "host" for I/O the probe could not see
      WatchDiskRow& d = disk_row(host, row, state.inv);
      add(d.counts, counts_of(row));
      add_process(d.processes, row);
    } else if (row.path == WatchPath::kStackRefused) {
      WatchDiskRow& d = disk_row(stack, row, state.inv);
      add(d.counts, counts_of(row));
      add_process(d.processes, row);
    } else {
      WatchPair& p = pairs[{row.provider, row.client, row.path}];
      p.provider = row.provider;
      p.client = row.client;
      p.path = row.path;
      add(counts_for(p, row.dir), counts_of(row));
      if (!row.disk.empty() && std::find(p.disks.begin(), p.disks.end(), row.disk) == p.disks.end())
        p.disks.push_back(row.disk);
      add_process(p.processes, row);
    }
  }
  sort_processes(r.outside.processes);
  for (auto [rows, out] : {std::pair{&host, &r.host}, std::pair{&stack, &r.stack_refused}})
    for (auto& [key, d] : *rows) {
      sort_processes(d.processes);
      out->push_back(std::move(d));
    }
  for (auto& [key, p] : pairs) {
    std::sort(p.disks.begin(), p.disks.end());
    sort_processes(p.processes);
    r.pairs.push_back(std::move(p));
  }
}

}  // namespace

WatchReport build_watch_report(const WatchSnapshot& snapshot, const WatchFacts& facts, const MachineState& state,
                               const KernelRules& rules, const WatchFilter& filter) {
  WatchReport r;
  r.source = state.source;
  r.seconds = snapshot.seconds;
  r.facts = facts;
  r.filter = filter;
  resolve(filter, state);  // a bad selector is a usage error even when nothing could be watched
  r.scope = filter.pid || filter.comm      ? WatchScope::kSelected
            : facts.command && !filter.all ? WatchScope::kTree
                                           : WatchScope::kMachine;
  r.cannot_watch = cannot_watch_of(facts, r.scope);
  if (!r.cannot_watch) {
    fill_rows(r, snapshot, state);
    for (WatchPair& p : r.pairs) {
      predict(p, state, rules);
      if (p.path == WatchPath::kRefused) p.refusal = refusal_of(p, facts);
    }
    r.unpaired = snapshot.unpaired;
    r.dropped_rows = snapshot.dropped_rows;
    r.inflight_full = snapshot.inflight_full;
    r.tree_full = snapshot.tree_full;
  }
  r.findings = watch_findings(r);
  r.result = judge_watch(r);
  return r;
}

namespace {

auto row_key(const WatchRow& r) {
  return std::tie(r.provider, r.client, r.disk, r.comm, r.tgid, r.path, r.dir, r.in_tree);
}
using RowKey = decltype(row_key(std::declval<const WatchRow&>()));

std::uint64_t minus(std::uint64_t now, std::uint64_t before) { return now >= before ? now - before : now; }

}  // namespace

WatchSnapshot watch_delta(const WatchSnapshot& previous, const WatchSnapshot& current) {
  WatchSnapshot out;
  out.seconds = current.seconds >= previous.seconds ? current.seconds - previous.seconds : current.seconds;
  std::map<RowKey, const WatchRow*> before;  // keys refer into previous.rows
  for (const WatchRow& r : previous.rows) before[row_key(r)] = &r;
  for (const WatchRow& now : current.rows) {
    WatchRow d = now;
    auto it = before.find(row_key(now));
    // A counter that went back belongs to a new probe: all of it is new.
    if (it != before.end() && now.requests >= it->second->requests && now.errors >= it->second->errors) {
      const WatchRow& b = *it->second;
      d.requests = now.requests - b.requests;
      d.bytes = minus(now.bytes, b.bytes);
      d.segments = minus(now.segments, b.segments);
      d.errors = now.errors - b.errors;
      d.error_bytes = minus(now.error_bytes, b.error_bytes);
      d.requeues = minus(now.requeues, b.requeues);
    }
    if (d.requests || d.errors || d.bytes) out.rows.push_back(std::move(d));
  }
  out.unpaired = minus(current.unpaired, previous.unpaired);
  out.dropped_rows = minus(current.dropped_rows, previous.dropped_rows);
  out.inflight_full = minus(current.inflight_full, previous.inflight_full);
  out.tree_full = minus(current.tree_full, previous.tree_full);
  return out;
}

}  // namespace p2pcheck
