// `p2pcheck mounts --json` (schema p2pcheck.mounts) and the `targets` a --nvme path adds to check,
// explain and paths JSON (docs/json.md). Names as read, unescaped; JSON escapes them itself.
#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/mounts.h"

namespace p2pcheck {
namespace {

using report_detail::json;

json layer_json(const StorageLayer& l) {
  json j = json::object();
  j["device"] = l.device;
  j["kind"] = to_string(l.kind);
  j["detail"] = report_detail::text_or_null(l.detail);
  return j;
}

json stack_json(const StorageStack& s) {
  json layers = json::array();
  for (const StorageLayer& l : s.layers) layers.push_back(layer_json(l));
  json j = json::object();
  j["nvme"] = s.nvme;
  j["namespace"] = s.nvme_namespace;
  j["controller"] = report_detail::text_or_null(s.controller);
  j["controller_bdf"] = s.controller_bdf ? json(s.controller_bdf->str()) : json(nullptr);
  j["layers"] = std::move(layers);
  return j;
}

json stack_finding_json(const std::optional<Finding>& f) {
  if (!f) return nullptr;
  json j = json::object();
  j["id"] = f->id;
  j["level"] = to_string(f->level);
  j["subject"] = f->subject;
  j["message"] = f->message;
  j["fix"] = report_detail::text_or_null(f->fix);
  return j;
}

json gpu_json(const CheckReport& report, const MountGpu& g) {
  json pairs = json::array();
  for (std::size_t i : g.pairs) {
    const PairDecision& d = report.pairs.shared(i);
    json p = json::object();
    p["nvme"] = report.pairs.pair(i).nvme.str();
    p["verdict"] = to_string(d.verdict);
    p["code"] = pair_code(report, i);
    p["rule_id"] = token(rule_of(d));
    pairs.push_back(std::move(p));
  }
  json j = json::object();
  j["gpu"] = g.gpu.str();
  j["answer"] = to_string(g.answer);
  j["pairs"] = std::move(pairs);
  return j;
}

json mount_json(const Mount& m) {
  json mount = json::object();
  mount["mount_point"] = unescape_mount_path(m.mountpoint);
  mount["device"] = unescape_mount_path(m.device);
  mount["fstype"] = m.fstype;
  mount["options"] = m.options;
  return mount;
}

}  // namespace

json target_json(const PathTarget& t) {
  json stacks = json::array(), controllers = json::array(), stacked = json::array();
  for (const StorageStack& s : t.stacks) stacks.push_back(stack_json(s));
  for (const TargetController& c : t.controllers) controllers.push_back({{"name", c.name}, {"bdf", c.bdf.str()}});
  for (const StorageLayer& l : t.stacked) stacked.push_back(layer_json(l));
  json mount = mount_json(t.mount);
  json j = json::object();
  j["path"] = t.path;
  j["typed"] = t.typed;
  j["mount"] = std::move(mount);
  j["stacks"] = std::move(stacks);
  j["controllers"] = std::move(controllers);
  j["fastpath_blocked_by"] = std::move(stacked);
  j["stack_finding"] = stack_finding_json(t.stack_finding);
  return j;
}

json targets_json(const std::vector<PathTarget>& targets) {
  json out = json::array();
  for (const PathTarget& t : targets) out.push_back(target_json(t));
  return out;
}

json mounts_json(const CheckReport& report, const MountsView& view) {
  json j = json_envelope("p2pcheck.mounts", report.source);
  j["schema_version"] = 2;  // 2: one entry per file system, its bind mounts in `mounts` (docs/json.md)
  j["identity"] = identity_json(report.machine.identity);
  j["result"] = to_string(report.result);
  j["unknown"] = report_detail::text_or_null(view.unknown);
  json counts = json::object();
  counts["mounts"] = view.mounts;
  counts["on_nvme"] = view.on_nvme;
  counts["file_systems"] = view.rows.size();
  counts["other"] = view.others.size();
  j["counts"] = std::move(counts);
  json rows = json::array(), others = json::array();
  for (const MountRow& row : view.rows) {
    json r = target_json(*row.target);
    json gpus = json::array();
    for (const MountGpu& g : row.gpus) gpus.push_back(gpu_json(report, g));
    r["gpus"] = std::move(gpus);
    json mounts = json::array({r["mount"]});
    for (const Mount& m : row.target->more_mounts) mounts.push_back(mount_json(m));
    r["mounts"] = std::move(mounts);
    rows.push_back(std::move(r));
  }
  for (const OtherMount& m : view.others)
    others.push_back({{"mount_point", m.mountpoint}, {"fstype", m.fstype}, {"device", m.device}, {"data", m.data}});
  j["file_systems"] = std::move(rows);
  j["other_mounts"] = std::move(others);
  return j;
}

}  // namespace p2pcheck
