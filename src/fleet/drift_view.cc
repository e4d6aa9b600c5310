// `p2pcheck diff` as text and JSON (drift_view.h).
#include "p2pcheck/fleet/drift_view.h"

#include "p2pcheck/source/version.h"

namespace p2pcheck {

using nlohmann::ordered_json;

namespace {

std::string verdict_or_absent(std::optional<Verdict> v) { return v ? to_string(*v) : "absent"; }
std::string level_or_absent(std::optional<Level> l) { return l ? to_string(*l) : "absent"; }

std::string pair_name(const PairChange& c) {
  return c.gpu + " <-> " + (c.nvme_name.empty() ? c.nvme : c.nvme_name + " " + c.nvme);
}

std::string pairs_text(const DriftReport& d, std::size_t max_lines) {
  if (d.pairs.empty()) return "";
  std::string out = "\nPairs whose verdict or cause changed: " + std::to_string(d.pairs.size()) + "\n";
  std::size_t shown = 0;
  for (const PairChange& c : d.pairs) {
    if (shown++ == max_lines) {
      out += "  and " + std::to_string(d.pairs.size() - max_lines) + " more (--json lists every one)\n";
      break;
    }
    out += "  " + std::string(to_string(c.change)) + "  " + pair_name(c) + ": " + verdict_or_absent(c.before);
    if (c.cause_before != Cause::kNone) out += " (" + std::string(token(c.cause_before)) + ")";
    out += " -> " + verdict_or_absent(c.after);
    if (c.cause_after != Cause::kNone) out += " (" + std::string(token(c.cause_after)) + ")";
    out += "\n";
    if (!c.rule_after.empty()) out += "          why now: " + c.rule_after + "\n";
  }
  return out;
}

std::string ports_and_findings_text(const DriftReport& d) {
  std::string out;
  if (!d.ports.empty()) {
    out += "\nPorts whose ACS redirect refuses pairs (check's host_fix acs_ports)\n";
    for (const PortChange& p : d.ports)
      out += "  " + std::string(to_string(p.change)) + "  " + p.port + ": " +
             (p.redirect_before ? "refused pairs" : "refused none") + " -> " +
             (p.redirect_after ? "refuses pairs" : "refuses none") + "\n";
  }
  if (!d.findings.empty()) {
    out += "\nChecks whose level changed (kernel facts, links, storage stack, ...)\n";
    for (const FindingChange& f : d.findings) {
      out += "  " + std::string(to_string(f.change)) + "  " + f.id;
      if (!f.subject.empty()) out += " (" + f.subject + ")";
      out += ": " + level_or_absent(f.before) + " -> " + level_or_absent(f.after) + "\n";
      if (!f.message.empty()) out += "          " + f.message + "\n";
    }
  }
  return out;
}

}  // namespace

std::string drift_result_line(const DriftReport& d) {
  std::string line = "DIFF: ";
  if (d.overall == Change::kWorse)
    line += "WORSE — " + worse_summary(d, 400);
  else if (d.overall == Change::kBetter)
    line += "BETTER — nothing got worse";
  else
    line += d.changed() ? "SAME — changes, none better or worse" : "SAME — no change";
  return line + "; result " + to_string(d.before) + " -> " + to_string(d.after) + "\n";
}

std::string drift_text(const DriftReport& d, std::size_t max_lines) {
  std::string out = "p2pcheck diff — baseline " + d.baseline_input + " (host " + d.baseline_host + "), current " +
                    d.current_input + " (host " + d.current_host + ")\n";
  out += "  result   " + std::string(to_string(d.before)) + " -> " + to_string(d.after) + "\n";
  out += "  kernel   " + (d.kernel_before.empty() ? "unknown" : d.kernel_before);
  if (d.kernel_after != d.kernel_before) out += " -> " + (d.kernel_after.empty() ? "unknown" : d.kernel_after);
  out += "\n  pairs    " + std::to_string(d.pairs_before);
  if (d.pairs_after != d.pairs_before) out += " -> " + std::to_string(d.pairs_after);
  out += "\n";
  if (d.baseline_host != d.current_host)
    out += "  note     the two name different hosts: compare a machine with its own baseline\n";
  out += pairs_text(d, max_lines) + ports_and_findings_text(d);
  return out + "\n" + drift_result_line(d);
}

ordered_json drift_json(const DriftReport& d) {
  ordered_json pairs = ordered_json::array(), ports = ordered_json::array(), findings = ordered_json::array();
  auto opt = [](const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); };
  for (const PairChange& c : d.pairs)
    pairs.push_back({{"gpu", c.gpu},
                     {"nvme", c.nvme},
                     {"nvme_name", opt(c.nvme_name)},
                     {"before", c.before ? ordered_json(to_string(*c.before)) : ordered_json(nullptr)},
                     {"after", c.after ? ordered_json(to_string(*c.after)) : ordered_json(nullptr)},
                     {"cause_before", opt(token(c.cause_before))},
                     {"cause_after", opt(token(c.cause_after))},
                     {"rule_after", opt(c.rule_after)},
                     {"change", to_string(c.change)}});
  for (const PortChange& p : d.ports)
    ports.push_back({{"port", p.port},
                     {"acs_redirect_before", p.redirect_before},
                     {"acs_redirect_after", p.redirect_after},
                     {"change", to_string(p.change)}});
  for (const FindingChange& f : d.findings)
    findings.push_back({{"id", f.id},
                        {"subject", f.subject},
                        {"before", f.before ? ordered_json(to_string(*f.before)) : ordered_json(nullptr)},
                        {"after", f.after ? ordered_json(to_string(*f.after)) : ordered_json(nullptr)},
                        {"message", f.message},
                        {"change", to_string(f.change)}});
  return {{"schema", "p2pcheck.diff"},
          {"schema_version", 1},
          {"tool_version", kToolVersion},
          {"baseline",
           {{"input", d.baseline_input},
            {"host", d.baseline_host},
            {"result", to_string(d.before)},
            {"kernel", d.kernel_before},
            {"pairs", d.pairs_before}}},
          {"current",
           {{"input", d.current_input},
            {"host", d.current_host},
            {"result", to_string(d.after)},
            {"kernel", d.kernel_after},
            {"pairs", d.pairs_after}}},
          {"change", to_string(d.overall)},
          {"changed", d.changed()},
          {"worse", opt(worse_summary(d))},
          {"pairs", pairs},
          {"acs_ports", ports},
          {"findings", findings}};
}

}  // namespace p2pcheck
