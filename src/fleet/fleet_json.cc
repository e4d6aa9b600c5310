// `p2pcheck fleet --json` (fleet_json.h; fields in docs/json.md).
#include "p2pcheck/fleet/fleet_json.h"

#include <sstream>

#include "p2pcheck/report/common.h"
#include "p2pcheck/report/host_fix.h"
#include "p2pcheck/source/json_writer.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

using nlohmann::ordered_json;

namespace {

ordered_json host_names(const FleetReport& r, const std::vector<std::size_t>& hosts) {
  ordered_json out = ordered_json::array();
  for (std::size_t h : hosts) out.push_back(r.hosts[h].host);
  return out;
}

ordered_json causes_json(const FleetReport& r, const std::vector<CauseGroup>& groups) {
  ordered_json out = ordered_json::array();
  for (const auto& g : groups)
    out.push_back({{"cause", g.cause},
                   {"detail", g.detail.empty() ? ordered_json(nullptr) : ordered_json(g.detail)},
                   {"level", to_string(g.level)},
                   {"kind", g.pairs_only() ? "pair" : "finding"},
                   {"title", g.title},
                   {"title_from", g.title_host.empty() ? ordered_json(nullptr) : ordered_json(g.title_host)},
                   {"fix", g.fix.empty() ? ordered_json(nullptr) : ordered_json(g.fix)},
                   {"fix_from", g.fix_host.empty() ? ordered_json(nullptr) : ordered_json(g.fix_host)},
                   {"host_count", g.hosts.size()},
                   {"pairs", g.pairs},
                   {"hosts", host_names(r, g.hosts)}});
  return out;
}

ordered_json host_json(const FleetReport& r, std::size_t h, const std::string& topology, const std::string& fix) {
  const HostSummary& host = r.hosts[h];
  ordered_json counts = {{"total", host.pairs.size()}, {"supported", 0}, {"not_supported", 0}, {"unknown", 0}};
  ordered_json by_cause = ordered_json::object();
  ordered_json pairs = ordered_json::array();
  for (const auto& p : host.pairs) {
    counts[to_string(p.verdict)] = counts[to_string(p.verdict)].get<std::size_t>() + 1;
    if (p.cause != Cause::kNone) by_cause[token(p.cause)] = by_cause.value(token(p.cause), 0) + 1;
    pairs.push_back({{"gpu", p.gpu},
                     {"nvme", p.nvme},
                     {"nvme_name", p.nvme_name.empty() ? ordered_json(nullptr) : ordered_json(p.nvme_name)},
                     {"verdict", to_string(p.verdict)},
                     {"to_gpu", to_string(p.to_gpu)},
                     {"from_gpu", to_string(p.from_gpu)},
                     {"map_type", p.map_type},
                     {"cause", p.cause == Cause::kNone ? ordered_json(nullptr) : ordered_json(token(p.cause))}});
  }
  counts["by_cause"] = std::move(by_cause);
  ordered_json findings = ordered_json::array();
  for (const auto& f : host.findings) {
    if (f.level != Level::kFail && f.level != Level::kUnknown && f.level != Level::kWarn) continue;
    ordered_json item = {{"id", f.id},           {"level", to_string(f.level)},
                         {"subject", f.subject}, {"concerns_selected_pairs", f.concerns},
                         {"message", f.message}, {"fix", f.fix.empty() ? ordered_json(nullptr) : ordered_json(f.fix)}};
    if (!f.cause.empty()) item["cause"] = f.cause;  // only where one id has several problems
    findings.push_back(std::move(item));
  }
  std::size_t passed = 0;
  for (const auto& f : host.findings) passed += f.level == Level::kPass;
  return {{"host", host.host},
          {"input", host.input},
          {"format", host.format},
          {"redacted", host.redacted ? ordered_json(*host.redacted) : ordered_json(nullptr)},
          {"result", to_string(host.result)},
          {"kernel", host.kernel.empty() ? ordered_json(nullptr) : ordered_json(host.kernel)},
          {"cpu", host.cpu.empty() ? ordered_json(nullptr) : ordered_json(host.cpu)},
          {"gpus", host.gpus},
          {"nvme", host.nvmes},
          {"topology", topology.empty() ? ordered_json(nullptr) : ordered_json(topology)},
          {"fingerprint", host.topology.empty() ? ordered_json(nullptr) : ordered_json(host.topology)},
          {"pci_functions", host.topology.empty() ? ordered_json(nullptr) : ordered_json(host.functions)},
          {"fix", fix.empty() ? ordered_json(nullptr) : ordered_json(fix)},
          {"pair_counts", std::move(counts)},
          {"checks_passed", passed},
          {"findings", std::move(findings)},
          {"pairs", std::move(pairs)}};
}

// `topologies` (T1, T2, ...), each host's label written into `labels`.
ordered_json topologies_json(const FleetReport& r, std::vector<std::string>& labels) {
  ordered_json topologies = ordered_json::array();
  for (std::size_t t = 0; t < r.topologies.size(); ++t) {
    const TopologyGroup& g = r.topologies[t];
    std::string label = "T" + std::to_string(t + 1);
    for (std::size_t h : g.hosts) labels[h] = label;
    const HostSummary& like = r.hosts[g.hosts.front()];
    topologies.push_back({{"id", label},
                          {"fingerprint", g.fingerprint},
                          {"like", like.host},
                          {"host_count", g.hosts.size()},
                          {"gpus", like.gpus},
                          {"nvme", like.nvmes},
                          {"pci_functions", like.functions},
                          {"hosts", host_names(r, g.hosts)}});
  }
  return topologies;
}

// `fixes` (F1, F2, ...), each host's label written into `labels`.
ordered_json fixes_json(const FleetReport& r, std::vector<std::string>& labels) {
  ordered_json fixes = ordered_json::array();
  for (std::size_t f = 0; f < r.fixes.size(); ++f) {
    std::string label = "F" + std::to_string(f + 1);
    for (std::size_t h : r.fixes[f].hosts) labels[h] = label;
    fixes.push_back({{"id", label},
                     {"host_count", r.fixes[f].hosts.size()},
                     {"hosts", host_names(r, r.fixes[f].hosts)},
                     {"host_fix", host_fix_json(r.fixes[f].fix)}});
  }
  return fixes;
}

ordered_json summary_json(const FleetReport& r) {
  return {{"inputs", r.inputs},
          {"hosts", r.hosts.size()},
          {"pass", r.passing},
          {"fail", r.failing},
          {"unknown", r.unknown},
          {"no_pairs", r.no_pairs},
          {"unreadable", r.unreadable.size()},
          {"skipped", r.skipped.size()}};
}

}  // namespace

void write_fleet_json(std::ostream& out, const FleetReport& r, int indent) {
  std::vector<std::string> labels(r.hosts.size()), fix_labels(r.hosts.size());
  JsonWriter w(out, indent);
  w.begin_object();
  w.member("schema", "p2pcheck.fleet");
  w.member("schema_version", kJsonSchemaVersion);
  w.member("tool_version", kToolVersion);
  w.member("result", to_string(r.result));
  w.member("summary", summary_json(r));
  w.member("failures", causes_json(r, r.failures));
  w.member("unknowns", causes_json(r, r.unknowns));
  w.member("topologies", topologies_json(r, labels));
  w.member("fixes", fixes_json(r, fix_labels));
  w.member("without_fix", host_names(r, r.without_fix));
  // A host at a time: 10,000 hosts' pair tables are never one value.
  w.key("hosts");
  w.begin_array();
  for (std::size_t h = 0; h < r.hosts.size(); ++h) w.value(host_json(r, h, labels[h], fix_labels[h]));
  w.end_array();
  w.key("unreadable");
  w.begin_array();
  for (const auto& u : r.unreadable) {
    w.begin_object();
    w.member("input", u.input);
    w.member("reason", u.reason);
    w.end_object();
  }
  w.end_array();
  w.member("skipped", ordered_json(r.skipped));
  w.end_object();
}

ordered_json fleet_json(const FleetReport& r) {
  std::ostringstream text;
  write_fleet_json(text, r, -1);
  return ordered_json::parse(text.str());
}

}  // namespace p2pcheck
