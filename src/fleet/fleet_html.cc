// `p2pcheck fleet --html FILE` (fleet_html.h): one self-contained page.
#include "p2pcheck/fleet/fleet_html.h"

#include <algorithm>
#include <map>

#include "p2pcheck/fleet/fleet_text.h"
#include "p2pcheck/fleet/markup.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

namespace {

const char* kStyle =
    "body{font-family:sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0}"
    "th,td{border:1px solid #bbb;padding:0.2em 0.5em;text-align:left;vertical-align:top}"
    "th{background:#eee}.pass,.supported{background:#d8f5d8}.fail,.not_supported{background:#f8d0d0}"
    ".unknown{background:#eadcf5}.nopairs{background:#fbeec8}.fix{font-style:italic}"
    "p.result{font-size:1.3em;font-weight:bold;padding:0.3em}div.host{margin-top:1.5em}"
    "td.cell{font-family:monospace;white-space:nowrap}";

std::string esc(const std::string& s) { return xml_escape(s); }

const char* result_class(Result r) {
  switch (r) {
    case Result::kPass: return "pass";
    case Result::kFail: return "fail";
    case Result::kUnknown: return "unknown";
    case Result::kNoPairs: return "nopairs";
  }
  return "unknown";
}

const char* fleet_class(FleetResult r) {
  switch (r) {
    case FleetResult::kPass: return "pass";
    case FleetResult::kFail: return "fail";
    case FleetResult::kUnknown: return "unknown";
    case FleetResult::kNoPairs: return "nopairs";
    case FleetResult::kUnreadable: return "fail";
  }
  return "unknown";
}

std::string host_link(const FleetReport& r, std::size_t h) {
  return "<a href=\"#host-" + std::to_string(h) + "\">" + esc(r.hosts[h].host) + "</a>";
}

std::string causes_html(const FleetReport& r, const std::vector<CauseGroup>& groups, const char* heading,
                        const char* kind) {
  if (groups.empty()) return "";
  std::string out = std::string("<h2>") + heading + "</h2>\n";
  for (const auto& g : groups) {
    out += std::string("<div class=\"cause ") + kind + "\" id=\"" + kind + "-" + esc(g.label()) + "\">\n<h3>" +
           std::to_string(g.hosts.size()) + (g.hosts.size() == 1 ? " host: " : " hosts: ") + "<code>" + esc(g.label()) +
           "</code>" + (g.title.empty() ? "" : " — " + esc(g.title)) +
           (g.pairs ? " (" + std::to_string(g.pairs) + " pairs)" : "") + "</h3>\n<p class=\"hosts\">";
    for (std::size_t i = 0; i < g.hosts.size(); ++i) out += (i ? ", " : "") + host_link(r, g.hosts[i]);
    out += "</p>\n";
    if (!g.fix.empty())
      out += "<p class=\"fix\">fix: " + esc(g.fix) +
             (g.fix_host.empty() ? "" : " (as on " + esc(g.fix_host) + "; the other hosts name their own)") + "</p>\n";
    out += "</div>\n";
  }
  return out;
}

std::string fixes_html(const FleetReport& r) {
  if (r.fixes.empty()) return "";
  std::string out = "<h2>Fixes (each host's whole change; hosts that need the same change together)</h2>\n";
  for (std::size_t f = 0; f < r.fixes.size(); ++f) {
    const FixGroup& g = r.fixes[f];
    out += "<div class=\"fixgroup\" id=\"fix-F" + std::to_string(f + 1) + "\">\n<h3>F" + std::to_string(f + 1) + ": " +
           std::to_string(g.hosts.size()) + (g.hosts.size() == 1 ? " host" : " hosts") + "</h3>\n<p class=\"hosts\">";
    for (std::size_t i = 0; i < g.hosts.size(); ++i) out += (i ? ", " : "") + host_link(r, g.hosts[i]);
    out += "</p>\n<ul>\n";
    if (!g.fix.acs_ports.empty())
      out += "<li>kernel command line: <code>" + esc(acs_param(g.fix)) + "</code> (costs " + esc(acs_cost(g.fix)) +
             ")</li>\n";
    for (const HostFixStep& s : g.fix.steps)
      out += "<li><code>" + esc(s.kind) + "</code>" + (s.subject.empty() ? "" : " (" + esc(s.subject) + ")") + ": " +
             esc(s.text) + (s.cost.empty() ? "" : " (costs " + esc(s.cost) + ")") + "</li>\n";
    out += "</ul>\n</div>\n";
  }
  return out;
}

std::string cell_text(Verdict v) { return v == Verdict::kSupported ? "ok" : v == Verdict::kNotSupported ? "NO" : "?"; }

// GPUs down, NVMe across, as in `check`; each cell "storage->GPU / GPU->storage" and the map type.
std::string matrix_html(const HostSummary& host) {
  if (host.pairs.empty()) return "<p>no GPU–NVMe pair</p>\n";
  std::vector<std::string> gpus;
  std::vector<std::pair<std::string, std::string>> nvmes;  // bdf, label
  std::map<std::pair<std::string, std::string>, const HostPair*> cells;
  for (const auto& p : host.pairs) {
    if (std::find(gpus.begin(), gpus.end(), p.gpu) == gpus.end()) gpus.push_back(p.gpu);
    if (std::none_of(nvmes.begin(), nvmes.end(), [&](const auto& n) { return n.first == p.nvme; }))
      nvmes.push_back({p.nvme, (p.nvme_name.empty() ? "" : p.nvme_name + " ") + p.nvme});
    cells.emplace(std::make_pair(p.gpu, p.nvme), &p);
  }
  std::string out = "<table class=\"matrix\">\n<tr><th>storage→GPU / GPU→storage</th>";
  for (const auto& n : nvmes) out += "<th>" + esc(n.second) + "</th>";
  out += "</tr>\n";
  for (const auto& g : gpus) {
    out += "<tr><th>GPU " + esc(g) + "</th>";
    for (const auto& n : nvmes) {
      auto it = cells.find({g, n.first});
      if (it == cells.end()) {
        out += "<td></td>";
        continue;
      }
      const HostPair& p = *it->second;
      std::string title = p.cause == Cause::kNone ? p.map_type : token(p.cause) + (p.rule.empty() ? "" : ": " + p.rule);
      out += std::string("<td class=\"cell ") + to_string(p.verdict) + "\" title=\"" + esc(title) + "\">" +
             cell_text(p.to_gpu) + " / " + cell_text(p.from_gpu) + "<br/>" + esc(p.map_type) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string host_section(const FleetReport& r, std::size_t h, const std::string& topology) {
  const HostSummary& host = r.hosts[h];
  std::string out =
      "<div class=\"host\" id=\"host-" + std::to_string(h) + "\">\n<h3>" + esc(host.host) + " — <span class=\"" +
      result_class(host.result) + "\">" + to_string(host.result) + "</span></h3>\n<p>input <code>" + esc(host.input) +
      "</code> (" + esc(host.format) + "); kernel " + esc(host.kernel.empty() ? "unknown" : host.kernel) + "; " +
      esc(host.cpu.empty() ? "CPU unknown" : host.cpu) + "; " + std::to_string(host.gpus) + " GPU(s), " +
      std::to_string(host.nvmes) + " NVMe" + (topology.empty() ? "" : "; topology " + topology) + "</p>\n";
  out += matrix_html(host);
  std::string problems;
  for (Level level : {Level::kFail, Level::kUnknown, Level::kWarn})
    for (const auto& f : host.findings)
      if (f.level == level)
        problems +=
            std::string("<li class=\"") +
            (level == Level::kFail      ? "fail"
             : level == Level::kUnknown ? "unknown"
                                        : "warn") +
            "\"><b>" + to_string(f.level) + "</b> <code>" + esc(f.id) + "</code> " +
            (f.subject.empty() ? "" : esc(f.subject) + ": ") + esc(f.message) +
            (f.fix.empty() || level == Level::kWarn ? "" : "<br/><span class=\"fix\">fix: " + esc(f.fix) + "</span>") +
            "</li>\n";
  if (!problems.empty()) out += "<ul class=\"findings\">\n" + problems + "</ul>\n";
  return out + "</div>\n";
}

// One row per topology group, with a host that has it.
std::string topologies_html(const FleetReport& r) {
  std::string out =
      "<h2>Machines by topology</h2>\n<table id=\"topologies\">\n<tr><th>group</th><th>hosts</th><th>like</th>"
      "<th>GPU</th><th>NVMe</th><th>PCI functions</th><th>fingerprint</th></tr>\n";
  for (std::size_t t = 0; t < r.topologies.size(); ++t) {
    const TopologyGroup& g = r.topologies[t];
    const HostSummary& like = r.hosts[g.hosts.front()];
    out += "<tr><td>T" + std::to_string(t + 1) + "</td><td>" + std::to_string(g.hosts.size()) + "</td><td>" +
           host_link(r, g.hosts.front()) + "</td><td>" + std::to_string(like.gpus) + "</td><td>" +
           std::to_string(like.nvmes) + "</td><td>" + std::to_string(like.functions) + "</td><td><code>" +
           g.fingerprint + "</code></td></tr>\n";
  }
  return out + "</table>\n";
}

// One row per host: its result, its pairs counted by verdict, its topology group (`labels`).
std::string hosts_html(const FleetReport& r, const std::vector<std::string>& labels) {
  std::string out =
      "<h2>Hosts</h2>\n<table id=\"hosts\">\n<tr><th>host</th><th>result</th><th>pairs ok</th>"
      "<th>refused</th><th>unknown</th><th>topology</th><th>input</th></tr>\n";
  for (std::size_t h = 0; h < r.hosts.size(); ++h) {
    const HostSummary& host = r.hosts[h];
    auto [ok, no, unknown] = pair_tally(host);
    out += "<tr class=\"" + std::string(result_class(host.result)) + "\"><td>" + host_link(r, h) + "</td><td>" +
           to_string(host.result) + "</td><td>" + std::to_string(ok) + "</td><td>" + std::to_string(no) + "</td><td>" +
           std::to_string(unknown) + "</td><td>" + (labels[h].empty() ? "-" : labels[h]) + "</td><td><code>" +
           esc(host.input) + "</code></td></tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string fleet_html(const FleetReport& r) {
  std::vector<std::string> labels(r.hosts.size());
  for (std::size_t t = 0; t < r.topologies.size(); ++t)
    for (std::size_t h : r.topologies[t].hosts) labels[h] = "T" + std::to_string(t + 1);
  TextStyle plain;
  plain.color = false;
  std::string result = fleet_result_line(r, plain);
  if (!result.empty() && result.back() == '\n') result.pop_back();
  std::string out =
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
      "<meta charset=\"utf-8\"/>\n<title>p2pcheck fleet: " +
      std::string(to_string(r.result)) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>p2pcheck fleet</h1>\n<p class=\"result " + std::string(fleet_class(r.result)) + "\" id=\"result\">" +
         esc(result) + "</p>\n";
  out +=
      "<table id=\"summary\">\n<tr><th>inputs</th><th>hosts</th><th>pass</th><th>fail</th><th>unknown</th>"
      "<th>no pairs</th><th>unreadable</th></tr>\n<tr><td>" +
      std::to_string(r.inputs) + "</td><td>" + std::to_string(r.hosts.size()) + "</td><td>" +
      std::to_string(r.passing) + "</td><td>" + std::to_string(r.failing) + "</td><td>" + std::to_string(r.unknown) +
      "</td><td>" + std::to_string(r.no_pairs) + "</td><td>" + std::to_string(r.unreadable.size()) +
      "</td></tr>\n</table>\n";
  out += causes_html(r, r.failures, "Failures by cause", "failure");
  out += causes_html(r, r.unknowns, "Unknown by cause", "unknown");
  out += fixes_html(r);
  if (!r.topologies.empty()) out += topologies_html(r);
  if (!r.hosts.empty()) out += hosts_html(r, labels);
  if (!r.unreadable.empty()) {
    out += "<h2>Unreadable inputs</h2>\n<ul id=\"unreadable\">\n";
    for (const auto& u : r.unreadable) out += "<li><code>" + esc(u.input) + "</code>: " + esc(u.reason) + "</li>\n";
    out += "</ul>\n";
  }
  if (!r.hosts.empty()) {
    out += "<h2>Each host</h2>\n";
    for (std::size_t h = 0; h < r.hosts.size(); ++h) out += host_section(r, h, labels[h]);
  }
  return out + "<p><small>p2pcheck " + std::string(kToolVersion) + "</small></p>\n</body>\n</html>\n";
}

}  // namespace p2pcheck
