// watch's JSON (watch_json.h): the summary document and the per-interval record, one shape for a
// pair, a disk row and a finding in both.
#include "p2pcheck/watch/watch_json.h"

#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/source/sysfs_text.h"
#include "watch_internal.h"

namespace p2pcheck {

using json = nlohmann::ordered_json;

namespace {

using report_detail::opt;
using report_detail::text_or_null;

// requeues is null where the run did not count them (no block_rq_requeue hook).
json counts_json(const WatchCounts& c, bool requeues_counted) {
  return json{{"requests", c.requests},
              {"bytes", c.bytes},
              {"segments", c.segments},
              {"errors", c.errors},
              {"error_bytes", c.error_bytes},
              {"last_status", c.last_status ? json(c.last_status) : json(nullptr)},
              {"requeues", requeues_counted ? json(c.requeues) : json(nullptr)}};
}

json processes_json(const std::vector<WatchProcess>& processes) {
  json out = json::array();
  for (const WatchProcess& w : processes)
    out.push_back({{"pid", w.tgid}, {"comm", w.comm}, {"requests", w.requests}, {"bytes", w.bytes}});
  return out;
}

json refusal_json(const std::optional<WatchRefusal>& r) {
  if (!r) return nullptr;
  return {{"errno", text_or_null(r->errno_name)},
          {"errno_value", r->errno_value ? json(r->errno_value) : json(nullptr)},
          {"status", r->status ? json(r->status) : json(nullptr)},
          {"source", r->observed ? "observed" : "expected for this kernel"}};
}

json pair_json(const WatchPair& p, bool requeues_counted) {
  json j = json::object();
  j["provider"] = {{"bdf", text_or_null(p.provider)}, {"role", text_or_null(p.provider_role)}};
  j["client"] = {{"bdf", text_or_null(p.client)}, {"controller", text_or_null(p.controller)}, {"disks", p.disks}};
  j["path"] = to_string(p.path);
  j["predicted"] = p.in_machine ? json{{"map_type", to_string(p.predicted)},
                                       {"verdict", to_string(p.verdict)},
                                       {"rule", text_or_null(p.rule)},
                                       {"fix", text_or_null(p.refused_fix())}}
                                : json(nullptr);
  j["agrees"] = tri_json(p.agrees);
  for (WatchDir d : {WatchDir::kToDevice, WatchDir::kToStorage, WatchDir::kOther})
    j[watch_direction_key(d)] = counts_json(p.counts(d), requeues_counted);
  j["processes"] = processes_json(p.processes);
  j["refusal"] = refusal_json(p.refusal);
  return j;
}

json disk_rows_json(const std::vector<WatchDiskRow>& rows, bool requeues_counted) {
  json out = json::array();
  for (const WatchDiskRow& d : rows) {
    json j = {{"disk", d.disk},
              {"controller", text_or_null(d.controller)},
              {"client", text_or_null(d.client)},
              {"direction", watch_direction_key(d.dir)}};
    const json counts = counts_json(d.counts, requeues_counted);
    for (const auto& [key, value] : counts.items()) j[key] = value;
    j["processes"] = processes_json(d.processes);
    out.push_back(std::move(j));
  }
  return out;
}

json finding_json(const Finding& f) {
  json evidence = json::array();
  for (const Evidence& e : f.evidence) evidence.push_back({{"file", e.file}, {"value", e.value}});
  json devices = json::array();
  for (const Bdf& b : f.devices) devices.push_back(b.str());
  return {{"id", f.id},
          {"level", to_string(f.level)},
          {"subject", f.subject},
          {"devices", std::move(devices)},
          {"concerns_selected_pairs", true},
          {"message", f.message},
          {"evidence", std::move(evidence)},
          {"fix", text_or_null(f.fix)},
          {"state", to_string(f.state)}};
}

json environment_json(const WatchFacts& f) {
  json lockdown = {{"status", read_status_name(f.lockdown.status)},
                   {"mode", text_or_null(f.lockdown.mode)},
                   {"forbids_watch", tri_json(f.lockdown.forbids_watch())}};
  json nvidia_fs = {{"loaded", tri_json(f.nvidia_fs.loaded)}, {"stats", opt(f.nvidia_fs.stats)}};
  return {{"lockdown", std::move(lockdown)}, {"nvidia_fs", std::move(nvidia_fs)}};
}

json filter_json(const WatchFilter& f) {
  return {{"gpu", f.gpu}, {"nvme", f.nvme}, {"pid", opt(f.pid)}, {"comm", opt(f.comm)}, {"all", f.all}};
}

// Whose I/O was counted, and what the scope left out.
json scope_json(const WatchReport& r) {
  json command = nullptr;
  if (r.facts.command) command = {{"pid", r.facts.command->pid}, {"name", r.facts.command->name}};
  return {{"processes", to_string(r.scope)},
          {"command", std::move(command)},
          {"not_counted",
           {{"requests", r.outside.requests},
            {"bytes", r.outside.bytes},
            {"processes", processes_json(r.outside.processes)},
            {"kernel_worker_requests", r.outside.worker_p2p_requests}}},
          {"tree_full", r.tree_full}};
}

// The rows every document has: pairs, host, stack refusals and what could not be attributed.
void rows_into(json& j, const WatchReport& r) {
  json pairs = json::array();
  for (const WatchPair& p : r.pairs) pairs.push_back(pair_json(p, r.requeues_counted));
  j["pairs"] = std::move(pairs);
  j["host"] = disk_rows_json(r.host, r.requeues_counted);
  j["stack_refused"] = disk_rows_json(r.stack_refused, r.requeues_counted);
  j["unpaired"] = r.unpaired;
  j["dropped_rows"] = r.dropped_rows;
  j["inflight_full"] = r.inflight_full;
  j["p2p_bytes"] = r.p2p_bytes();
}

}  // namespace

json watch_json(const WatchReport& r) {
  json j = json_envelope("p2pcheck.watch", r.source);
  j["result"] = to_string(r.result);
  j["seconds"] = r.seconds;
  j["kernel"] = {{"release", text_or_null(r.facts.kernel_release)}};
  j["cannot_watch"] = opt(r.cannot_watch);
  j.update(watch_hooks_json(r.facts.hooks));
  j["environment"] = environment_json(r.facts);
  j["filter"] = filter_json(r.filter);
  j["scope"] = scope_json(r);
  rows_into(j, r);
  json findings = json::array();
  for (const Finding& f : r.findings) findings.push_back(finding_json(f));
  j["findings"] = std::move(findings);
  return j;
}

json watch_interval_json(const WatchReport& r, double at_seconds) {
  json j = json_envelope("p2pcheck.watch_interval", r.source);
  j["seconds"] = at_seconds;
  j["interval_seconds"] = r.seconds;
  rows_into(j, r);
  return j;
}

json watch_hooks_json(const WatchHookPlan& plan) {
  json hooks = json::array();
  for (const WatchHook& h : plan.hooks)
    hooks.push_back({{"program", h.program},
                     {"attach", h.attach},
                     {"enabled", h.enabled},
                     {"why", text_or_null(h.why)},
                     {"attached", h.attached},
                     {"error", text_or_null(h.error)}});
  return {{"decision_hook", to_string(plan.decision)},
          {"provider_layout", to_string(plan.provider)},
          {"map_type_values",
           {{"not_supported", opt(plan.not_supported)},
            {"bus_addr", opt(plan.bus_addr)},
            {"thru_host_bridge", opt(plan.thru_host_bridge)}}},
          {"refusal_errno", plan.refusal_errno ? json(plan.refusal_errno) : json(nullptr)},
          {"block_hooks", plan.block_hooks},
          {"problems", plan.problems},
          {"hooks", std::move(hooks)}};
}

const char* watch_direction_key(WatchDir d) {
  return d == WatchDir::kToDevice ? "to_device" : d == WatchDir::kToStorage ? "to_storage" : "other";
}
}  // namespace p2pcheck
