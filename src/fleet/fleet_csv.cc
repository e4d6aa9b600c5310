// `p2pcheck fleet --csv` (fleet_csv.h).
#include "p2pcheck/fleet/fleet_csv.h"

#include <algorithm>

namespace p2pcheck {

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. A leading = + - @
// would run as a formula in a spreadsheet (a model name from a dump): it gets a quote mark first.
std::string field(const std::string& text) {
  std::string s = text;
  if (!s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@')) s = "'" + s;
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string row(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + field(fields[i]);
  return out + "\r\n";
}

}  // namespace

std::string fleet_csv(const FleetReport& r) {
  std::vector<std::string> topology(r.hosts.size());
  for (std::size_t t = 0; t < r.topologies.size(); ++t)
    for (std::size_t h : r.topologies[t].hosts) topology[h] = "T" + std::to_string(t + 1);
  std::string out = row({"host", "input", "format", "result", "gpus", "nvme", "pairs", "supported", "not_supported",
                         "unknown", "failing_causes", "unknown_causes", "topology", "fingerprint", "error"});
  for (std::size_t h = 0; h < r.hosts.size(); ++h) {
    const HostSummary& host = r.hosts[h];
    auto [ok, no, unknown] = pair_tally(host);
    std::string failing, unknowns;
    for (const auto* groups : {&r.failures, &r.unknowns})
      for (const auto& g : *groups)
        if (std::binary_search(g.hosts.begin(), g.hosts.end(), h)) {
          std::string& list = g.level == Level::kFail ? failing : unknowns;
          list += (list.empty() ? "" : " ") + g.label();
        }
    out += row({host.host, host.input, host.format, to_string(host.result), std::to_string(host.gpus),
                std::to_string(host.nvmes), std::to_string(host.pairs.size()), std::to_string(ok), std::to_string(no),
                std::to_string(unknown), failing, unknowns, topology[h], host.topology, ""});
  }
  for (const auto& u : r.unreadable)
    out += row({"", u.input, "", "UNREADABLE", "", "", "", "", "", "", "", "", "", "", u.reason});
  return out;
}

}  // namespace p2pcheck
