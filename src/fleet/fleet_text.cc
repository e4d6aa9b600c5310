// `p2pcheck fleet` as text (fleet_text.h).
#include "p2pcheck/fleet/fleet_text.h"

#include <algorithm>
#include <set>

#include "p2pcheck/report/check.h"
#include "p2pcheck/report/host_fix.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

using report_detail::colored;
using report_detail::pad;

namespace {

const char* fleet_color(FleetResult r) {
  switch (r) {
    case FleetResult::kPass: return "32";
    case FleetResult::kFail: return "1;31";
    case FleetResult::kUnknown: return "35";
    case FleetResult::kNoPairs: return "33";
    case FleetResult::kUnreadable: return "1;31";
  }
  return "0";
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The topology group label of each host ("T1" for the largest group), "" when it has no tree.
std::vector<std::string> topology_labels(const FleetReport& r) {
  std::vector<std::string> labels(r.hosts.size());
  for (std::size_t t = 0; t < r.topologies.size(); ++t)
    for (std::size_t h : r.topologies[t].hosts) labels[h] = "T" + std::to_string(t + 1);
  return labels;
}

// Each host's fix group label ("F1" for the largest group), "" when it has nothing to fix.
std::vector<std::string> fix_labels(const FleetReport& r) {
  std::vector<std::string> labels(r.hosts.size());
  for (std::size_t f = 0; f < r.fixes.size(); ++f)
    for (std::size_t h : r.fixes[f].hosts) labels[h] = "F" + std::to_string(f + 1);
  return labels;
}

std::string fixes_text(const FleetReport& r) {
  if (r.fixes.empty() && r.without_fix.empty()) return "";
  std::string out = "\nFixes (each host's whole change; hosts that need the same change together)\n";
  for (std::size_t f = 0; f < r.fixes.size(); ++f) {
    const FixGroup& g = r.fixes[f];
    out += "  " + pad("F" + std::to_string(f + 1), 5) + plural(g.hosts.size(), "host", "hosts") + ": " +
           host_list_text(r, g.hosts, 12) + "\n" + host_fix_lines(g.fix, "       ");
  }
  if (!r.without_fix.empty())
    out += "  " + pad("-", 5) + plural(r.without_fix.size(), "host", "hosts") +
           " not grouped: a check --json saved by an older p2pcheck has no host fix (save it again): " +
           host_list_text(r, r.without_fix, 12) + "\n";
  return out;
}

// A host's causes, failures first: "kernel.config_p2pdma, pair.host_bridge".
std::string host_causes(const FleetReport& r, std::size_t h) {
  std::vector<std::string> out;
  for (const auto* groups : {&r.failures, &r.unknowns})
    for (const auto& g : *groups)
      if (std::binary_search(g.hosts.begin(), g.hosts.end(), h))
        out.push_back(g.level == Level::kUnknown ? g.label() + "?" : g.label());
  return out.empty() ? "-" : join(out, ", ");
}

std::string causes_text(const FleetReport& r, const std::vector<CauseGroup>& groups, const char* heading) {
  if (groups.empty()) return "";
  std::string out = std::string("\n") + heading + "\n";
  for (const auto& g : groups) {
    out += "  " + plural(g.hosts.size(), "host", "hosts") + ": " + g.label();
    if (!g.title.empty()) out += " — " + (g.title_host.empty() ? "" : "as on " + g.title_host + ": ") + g.title;
    if (g.pairs) out += " (" + plural(g.pairs, "pair", "pairs") + ")";
    out += "\n    hosts  " + host_list_text(r, g.hosts, 12) + "\n";
    if (!g.fix.empty())
      out += "    fix    " + g.fix +
             (g.fix_host.empty() ? "" : " (as on " + g.fix_host + "; the other hosts' reports name their own)") + "\n";
  }
  return out;
}

std::string topologies_text(const FleetReport& r) {
  std::string out = "\nMachines by topology (same PCI tree: shape, vendor:device, class, port types)\n";
  std::size_t without = r.hosts.size();
  for (std::size_t t = 0; t < r.topologies.size(); ++t) {
    const TopologyGroup& g = r.topologies[t];
    const HostSummary& like = r.hosts[g.hosts.front()];
    without -= g.hosts.size();
    out += "  " + pad("T" + std::to_string(t + 1), 5) + plural(g.hosts.size(), "host", "hosts") +
           (g.hosts.size() > 1 ? " like " : ": ") + like.host + " (" + std::to_string(like.gpus) + " GPU(s), " +
           std::to_string(like.nvmes) + " NVMe, " + std::to_string(like.functions) + " PCI functions; " +
           g.fingerprint + ")\n";
    if (g.hosts.size() > 1) out += "       " + host_list_text(r, g.hosts, 12) + "\n";
  }
  if (without) {
    std::vector<std::size_t> rest;
    for (std::size_t h = 0; h < r.hosts.size(); ++h)
      if (r.hosts[h].topology.empty()) rest.push_back(h);
    out += "  " + pad("-", 5) + plural(without, "host", "hosts") +
           " not grouped: a saved check --json names its pairs' paths, not the PCI tree with its IDs (send "
           "captures): " +
           host_list_text(r, rest, 12) + "\n";
  }
  return out;
}

// An input path cut to its last characters ("...rack7/node-042.tar.zst"), so a host's row fits a
// terminal however deep the folder was; JSON and HTML keep the whole path.
constexpr std::size_t kInputColumn = 48;
std::string short_input(const std::string& input) {
  if (input.size() <= kInputColumn) return input;
  std::size_t from = input.size() - (kInputColumn - 3);
  while (from < input.size() && (static_cast<unsigned char>(input[from]) & 0xC0) == 0x80) ++from;  // UTF-8
  return "..." + input.substr(from);
}

std::string hosts_text(const FleetReport& r, const TextStyle& style) {
  std::vector<std::string> labels = topology_labels(r);
  std::vector<std::string> fixes = fix_labels(r);
  std::size_t width = 4, input_width = 5;
  for (const auto& h : r.hosts) {
    width = std::max(width, h.host.size());
    input_width = std::max(input_width, short_input(h.input).size());
  }
  width = std::min<std::size_t>(width, 40) + 2;
  input_width += 2;
  std::string out = "\nHosts\n  " + pad("HOST", width) + pad("RESULT", 10) + pad("PAIRS ok/no/?", 15) + pad("GPU", 5) +
                    pad("NVMe", 6) + pad("TOPO", 6) + pad("FIX", 5) + pad("INPUT", input_width) +
                    "CAUSES (? = unknown)\n";
  for (std::size_t h = 0; h < r.hosts.size(); ++h) {
    const HostSummary& host = r.hosts[h];
    auto [ok, no, unknown] = pair_tally(host);
    std::string pairs = std::to_string(ok) + "/" + std::to_string(no) + "/" + std::to_string(unknown);
    out += "  " + pad(host.host, width) + colored(style, result_color(host.result), pad(to_string(host.result), 10)) +
           pad(pairs, 15) + pad(std::to_string(host.gpus), 5) + pad(std::to_string(host.nvmes), 6) +
           pad(labels[h].empty() ? "-" : labels[h], 6) + pad(fixes[h].empty() ? "-" : fixes[h], 5) +
           pad(short_input(host.input), input_width) + host_causes(r, h) + "\n";
  }
  return out;
}

}  // namespace

std::string host_list_text(const FleetReport& report, const std::vector<std::size_t>& hosts, std::size_t shown) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < hosts.size() && i < shown; ++i) names.push_back(report.hosts[hosts[i]].host);
  std::string out = join(names, ", ");
  if (hosts.size() > shown) out += " and " + std::to_string(hosts.size() - shown) + " more";
  return out;
}

std::string fleet_result_line(const FleetReport& r, const TextStyle& style) {
  std::string line = colored(style, fleet_color(r.result), std::string("RESULT: ") + to_string(r.result)) + " — ";
  std::size_t n = r.hosts.size();
  switch (r.result) {
    case FleetResult::kPass: line += "all " + plural(n, "host passes", "hosts pass"); break;
    case FleetResult::kFail: line += std::to_string(r.failing) + " of " + plural(n, "host fails", "hosts fail"); break;
    case FleetResult::kUnknown:
      line += std::to_string(r.unknown) + " of " + plural(n, "host", "hosts") + " could not be decided, none fails";
      break;
    case FleetResult::kNoPairs:
      line += std::to_string(r.no_pairs) + " of " + plural(n, "host has", "hosts have") + " no GPU–NVMe pair";
      break;
    case FleetResult::kUnreadable:
      line += n ? "no host fails, but an unread input might" : "no input could be read";
      break;
  }
  if (!r.unreadable.empty()) line += "; " + plural(r.unreadable.size(), "input", "inputs") + " unreadable";
  return line + "\n";
}

std::string fleet_text(const FleetReport& r, const TextStyle& style, bool verbose) {
  std::string out = "p2pcheck " + std::string(kToolVersion) + " fleet — " + plural(r.inputs, "input", "inputs") + ": " +
                    plural(r.hosts.size(), "host", "hosts") + " read, " + std::to_string(r.unreadable.size()) +
                    " unreadable\n";
  out += "hosts: " + std::to_string(r.passing) + " pass, " + std::to_string(r.failing) + " fail, " +
         std::to_string(r.unknown) + " unknown, " + std::to_string(r.no_pairs) + " without GPU–NVMe pairs\n";
  // The usual surprise: a machine whose GPU is no AMD or NVIDIA display/accelerator function.
  if (r.no_pairs)
    out +=
        "  (without pairs: no AMD or NVIDIA GPU, or no NVMe, in that machine; other functions are judged when "
        "its capture is taken with --gpu/--nvme, which the capture records)\n";
  out += causes_text(r, r.failures, "Failures by cause");
  out += causes_text(r, r.unknowns, "Unknown by cause (could not be decided)");
  out += fixes_text(r);
  if (!r.hosts.empty()) out += topologies_text(r) + hosts_text(r, style);
  if (!r.unreadable.empty()) {
    out += "\nUnreadable inputs\n";
    for (const auto& u : r.unreadable) out += "  " + u.input + ": " + u.reason + "\n";
  }
  if (!r.skipped.empty()) {
    out += "\nskipped " + plural(r.skipped.size(), "file", "files") +
           " of notes beside the inputs (README, SOURCE, NOTES, LICENSE, markdown)" +
           (verbose ? ":\n" : " (-v lists them)\n");
    if (verbose)
      for (const auto& path : r.skipped) out += "  " + path + "\n";
  }
  return out + "\n" + fleet_result_line(r, style);
}

}  // namespace p2pcheck
