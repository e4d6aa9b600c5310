// `p2pcheck fleet --json` (fleet_json.h; fields in docs/json.md).
#include "p2pcheck/fleet/fleet_json.h"

#include "p2pcheck/report/common.h"
#include "p2pcheck/report/host_fix.h"
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

}  // namespace

ordered_json fleet_json(const FleetReport& r) {
  std::vector<std::string> labels(r.hosts.size());
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
  std::vector<std::string> fix_labels(r.hosts.size());
  ordered_json fixes = ordered_json::array();
  for (std::size_t f = 0; f < r.fixes.size(); ++f) {
    std::string label = "F" + std::to_string(f + 1);
    for (std::size_t h : r.fixes[f].hosts) fix_labels[h] = label;
    fixes.push_back({{"id", label},
                     {"host_count", r.fixes[f].hosts.size()},
                     {"hosts", host_names(r, r.fixes[f].hosts)},
                     {"host_fix", host_fix_json(r.fixes[f].fix)}});
  }
  ordered_json hosts = ordered_json::array();
  for (std::size_t h = 0; h < r.hosts.size(); ++h) hosts.push_back(host_json(r, h, labels[h], fix_labels[h]));
  ordered_json unreadable = ordered_json::array();
  for (const auto& u : r.unreadable) unreadable.push_back({{"input", u.input}, {"reason", u.reason}});
  return {{"schema", "p2pcheck.fleet"},
          {"schema_version", kJsonSchemaVersion},
          {"tool_version", kToolVersion},
          {"result", to_string(r.result)},
          {"summary",
           {{"inputs", r.inputs},
            {"hosts", r.hosts.size()},
            {"pass", r.passing},
            {"fail", r.failing},
            {"unknown", r.unknown},
            {"no_pairs", r.no_pairs},
            {"unreadable", r.unreadable.size()},
            {"skipped", r.skipped.size()}}},
          {"failures", causes_json(r, r.failures)},
          {"unknowns", causes_json(r, r.unknowns)},
          {"topologies", std::move(topologies)},
          {"fixes", std::move(fixes)},
          {"without_fix", host_names(r, r.without_fix)},
          {"hosts", std::move(hosts)},
          {"unreadable", std::move(unreadable)},
          {"skipped", r.skipped}};
}

}  // namespace p2pcheck
