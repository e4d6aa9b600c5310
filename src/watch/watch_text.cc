// watch's text view (watch_text.h): the summary table, findings and RESULT line, and the interval
// lines, all from one WatchReport.
#include "p2pcheck/watch/watch_text.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"
#include "watch_internal.h"

namespace p2pcheck {

using namespace watch_detail;
using report_detail::colored;
using report_detail::level_color;
using report_detail::pad;

namespace {

// One table line: a pair, path and direction; or a disk and direction of host memory or of
// storage-stack refusals. Text cells are printable already.
struct Line {
  std::string provider, client, path, dir, predicted, processes;
  std::uint64_t requests = 0, bytes = 0, errors = 0;
  bool moves = true;  // bytes can move on it (not a refusal): a rate means something
};

// "train 4242, dd 77", the first two, then how many more.
std::string processes_cell(const std::vector<WatchProcess>& processes) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < processes.size() && i < 2; ++i)
    parts.push_back(printable(processes[i].comm) + " " + std::to_string(processes[i].tgid));
  if (processes.size() > 2) parts.push_back("+" + std::to_string(processes.size() - 2) + " more");
  return join(parts, ", ");
}

std::string predicted_cell(const WatchPair& p) {
  if (!p.in_machine) return "not in tree";
  if (p.predicted == MapType::kUnknown) return "UNKNOWN";
  return std::string(to_string(p.predicted)) + (p.agrees == Tri::kYes ? " ok" : " MISMATCH");
}

std::string pair_path_cell(const WatchPair& p) {
  if (p.path != WatchPath::kRefused) return path_words(p.path);
  return "refused (" + (p.refusal ? refusal_errno_text(*p.refusal) : std::string("?")) + ")";
}

// "nvme1n1 (0000:04:00.0)": the block device first, then the PCI function that moved the data.
std::string device_cell(const std::string& device, const std::string& function) {
  if (function.empty()) return device;
  return device.empty() ? printable(function) : device + " (" + printable(function) + ")";
}

void pair_lines(const WatchPair& p, std::vector<Line>& out) {
  std::string provider = p.provider.empty() ? "P2P memory of ?" : printable(p.provider);
  if (!p.provider_role.empty()) provider += " " + p.provider_role;
  std::string device = !p.disks.empty() ? printable(join(p.disks, ",")) : p.controller;
  std::string client = p.client.empty() && device.empty() ? "?" : device_cell(device, p.client);
  for (WatchDir d : {WatchDir::kToDevice, WatchDir::kToStorage, WatchDir::kOther}) {
    const WatchCounts& c = p.counts(d);
    if (!c.any()) continue;
    out.push_back({provider, client, pair_path_cell(p), to_string(d), predicted_cell(p), processes_cell(p.processes),
                   c.requests, c.bytes, c.errors, p.path != WatchPath::kRefused});
  }
}

// A request whose queue has no disk: an NVMe admin or passthrough command (Identify, an abort).
std::string disk_cell(const std::string& disk) { return disk.empty() ? "(no disk)" : printable(disk); }

void disk_lines(const WatchReport& r, std::vector<Line>& out) {
  for (const WatchDiskRow& h : r.host)
    out.push_back({"host memory", device_cell(disk_cell(h.disk), h.client), "host", to_string(h.dir), "-",
                   processes_cell(h.processes), h.counts.requests, h.counts.bytes, h.counts.errors, true});
  for (const WatchDiskRow& s : r.stack_refused)
    out.push_back({"P2P memory", disk_cell(s.disk), "refused by storage stack (" + printable(s.disk) + ")",
                   to_string(s.dir), "-", processes_cell(s.processes), s.counts.requests, 0, s.counts.errors, false});
}

std::vector<Line> table_lines(const WatchReport& r) {
  std::vector<Line> out;
  for (const WatchPair& p : r.pairs) pair_lines(p, out);
  disk_lines(r, out);
  return out;
}

std::string mib_number(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / (1024.0 * 1024.0));
  return buf;
}

// Right-aligned to `width` code points, one space before.
std::string right(const std::string& s, std::size_t width) {
  return std::string(s.size() < width ? width - s.size() : 0, ' ') + s + " ";
}

// What is there: the memory the data was in (a GPU's, a CMB's, host memory) and the block device.
constexpr const char* kTitles[] = {"memory", "block device", "path",      "direction", "reqs",
                                   "MiB",    "errors",       "predicted", "processes"};

std::vector<std::vector<std::string>> table_cells(const std::vector<Line>& lines) {
  std::vector<std::vector<std::string>> rows = {{std::begin(kTitles), std::end(kTitles)}};
  for (const Line& l : lines)
    rows.push_back({l.provider, l.client, l.path, l.dir, std::to_string(l.requests),
                    l.moves ? mib_number(static_cast<double>(l.bytes)) : "-", std::to_string(l.errors), l.predicted,
                    l.processes});
  return rows;
}

std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

// Columns two spaces apart; the counts right-aligned.
std::string table_text(const std::vector<Line>& lines) {
  auto rows = table_cells(lines);
  std::vector<std::size_t> width(std::size(kTitles), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], columns(row[i]));
  std::string out;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (std::size_t i = 0; i + 1 < row.size(); ++i) {
      std::string gap(width[i] - std::min(width[i], columns(row[i])), ' ');
      line += (i >= 4 && i <= 6 ? gap + row[i] : row[i] + gap) + "  ";
    }
    line += row.back();
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string findings_text(const WatchReport& r, const TextStyle& style) {
  std::vector<Finding> findings = r.findings;
  make_printable(findings);
  std::string out;
  for (Level level : {Level::kFail, Level::kUnknown, Level::kWarn, Level::kInfo, Level::kPass})
    for (const Finding& f : findings) {
      if (f.level != level) continue;
      out += "  " + colored(style, level_color(f.level), pad(to_string(f.level), 8)) +
             (f.subject.empty() ? "" : f.subject + ": ") + f.message + "\n";
      for (std::size_t i = 0; i < f.evidence.size(); ++i)
        out += std::string(i ? "; " : "          evidence: ") + f.evidence[i].file + " = " + f.evidence[i].value +
               (i + 1 == f.evidence.size() ? "\n" : "");
      if (!f.fix.empty()) out += "          fix: " + f.fix + "\n";
    }
  return out.empty() ? "" : "\nFindings\n" + out;
}

}  // namespace

namespace {

const char* result_color(WatchResult r) {
  switch (r) {
    case WatchResult::kP2pSeen: return "32";
    case WatchResult::kFail: return "1;31";
    case WatchResult::kUnknown: return "35";
    case WatchResult::kNoP2p: return "33";
  }
  return "0";
}

// "watch.refused (0000:03:00.0 -> nvme2 (0000:41:00.0)), watch.unpaired": by id, subjects once.
std::string causes(const WatchReport& r, Level level) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_id;
  for (const Finding& f : r.findings) {
    if (f.level != level) continue;
    auto it = std::find_if(by_id.begin(), by_id.end(), [&](const auto& c) { return c.first == f.id; });
    if (it == by_id.end()) it = by_id.insert(by_id.end(), {f.id, {}});
    std::string subject = printable(f.subject);
    if (!subject.empty() && std::find(it->second.begin(), it->second.end(), subject) == it->second.end())
      it->second.push_back(subject);
  }
  return report_detail::causes_line(by_id);
}

// "0000:03:00.0 -> nvme1 (0000:04:00.0): 8.0 MiB by bus address, as predicted", the first three pairs.
std::string p2p_summary(const WatchReport& r) {
  std::vector<std::string> parts;
  std::size_t more = 0;
  for (const WatchPair& p : r.pairs) {
    const std::uint64_t bytes = p.total().bytes;
    if (!is_p2p(p.path) || !bytes) continue;
    if (parts.size() == 3) {
      ++more;
      continue;
    }
    std::string how = p2p_how(p.path);
    std::string agreement = !p.in_machine           ? "not in this machine's tree"
                            : p.agrees == Tri::kYes ? "as predicted"
                            : p.agrees == Tri::kNo  ? std::string("predicted ") + to_string(p.predicted)
                                                    : "prediction unknown";
    parts.push_back(printable(pair_label(p)) + ": " + mib(bytes) + " " + how + ", " + agreement);
  }
  if (parts.empty()) return "no P2P bytes";
  if (more) parts.push_back("and " + std::to_string(more) + " more pair(s)");
  return join(parts, "; ");
}

std::string host_summary(const WatchReport& r) {
  std::uint64_t bytes = 0;
  std::vector<std::string> disks;
  for (const WatchDiskRow& h : r.host) {
    bytes += h.counts.bytes;
    std::string disk = disk_cell(h.disk);
    if (std::find(disks.begin(), disks.end(), disk) == disks.end()) disks.push_back(disk);
  }
  if (disks.empty()) return "no host-memory block I/O either";
  return "host memory: " + mib(bytes) + " on " + join(disks, ", ");
}

// "0.03 s" for a short command (a tenth would read as nothing), "12.5 s" for anything longer.
std::string seconds_text(double s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, s < 1 ? "%.2f s" : "%.1f s", s);
  return buf;
}

}  // namespace

std::string watch_header(const WatchReport& r) {
  std::vector<std::string> attached;
  for (const WatchHook& h : r.facts.hooks.hooks)
    if (h.attached) attached.push_back(printable(h.attach));
  std::string kernel = r.facts.kernel_release.empty() ? "unknown" : printable(r.facts.kernel_release);
  return "p2pcheck watch — kernel " + kernel +
         "; hooks: " + (attached.empty() ? "none attached" : join(attached, ", ")) + "\n";
}

std::string watch_result_line(const WatchReport& r, const TextStyle& style) {
  std::string line = colored(style, result_color(r.result), std::string("RESULT: ") + to_string(r.result)) + " — ";
  switch (r.result) {
    case WatchResult::kUnknown: line += "cannot watch: " + printable(r.cannot_watch.value_or("")); break;
    case WatchResult::kFail: line += "failing: " + causes(r, Level::kFail) + "; " + p2p_summary(r); break;
    case WatchResult::kP2pSeen: line += p2p_summary(r); break;
    case WatchResult::kNoP2p:
      line += r.facts.hooks.decision == DecisionHook::kNone
                  ? "this kernel has no P2PDMA: nothing on this kernel can go peer-to-peer"
                  : "no peer-to-peer I/O in " + seconds_text(r.seconds);
      line += "; " + host_summary(r);
      break;
  }
  if (r.result != WatchResult::kUnknown)
    if (std::string warnings = causes(r, Level::kWarn); !warnings.empty()) line += "; warnings: " + warnings;
  return line + "\n";
}

namespace {

// "counted: the process tree of train (pid 4242); not counted: 12 request(s), 4.0 MiB by 3 other
// process(es) (--all counts them)".
std::string scope_text(const WatchReport& r) {
  std::string out = "counted: ";
  const std::optional<WatchCommand>& cmd = r.facts.command;
  const std::string command = cmd ? printable(cmd->name) + " (pid " + std::to_string(cmd->pid) + ")" : "";
  switch (r.scope) {
    case WatchScope::kMachine:
      out += "every process on the machine";
      if (cmd) out += " (--all; the command was " + command + ")";
      break;
    case WatchScope::kTree: out += "the process tree of " + command; break;
    case WatchScope::kSelected:
      out += r.filter.pid ? "process " + std::to_string(*r.filter.pid) + " (--pid)" : "";
      out += r.filter.pid && r.filter.comm ? " named " : r.filter.comm ? "processes named " : "";
      out += r.filter.comm ? printable(*r.filter.comm) + " (--comm)" : "";
      break;
  }
  const WatchOutside& o = r.outside;
  if (o.requests)
    out += "; not counted: " + std::to_string(o.requests) + " request(s), " + mib(o.bytes) + " by " +
           std::to_string(o.processes.size()) + " other process(es) (" +
           (r.scope == WatchScope::kTree ? "--all counts them" : "outside the selection") + ")";
  return out + "\n";
}

}  // namespace

std::string watch_text(const WatchReport& r, const TextStyle& style) {
  std::string out = watch_header(r);
  out += "source: " + printable(r.source) + "; watched " + seconds_text(r.seconds) + "\n";
  if (!r.cannot_watch) out += scope_text(r);
  if (!r.cannot_watch) {
    std::vector<Line> lines = table_lines(r);
    out += "\n" + (lines.empty() ? std::string("  no block I/O seen\n") : table_text(lines));
  }
  out += findings_text(r, style);
  return out + "\n" + watch_result_line(r, style);
}

namespace {

constexpr std::size_t kIntervalWidths[] = {10, 24, 28, 22, 19, 8, 10, 8};

std::string interval_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i + 1 < cells.size(); ++i)
    line += i >= 5 ? right(cells[i], kIntervalWidths[i] - 1) : pad(cells[i], kIntervalWidths[i]);
  return line + cells.back() + "\n";
}

}  // namespace

std::string watch_interval_header() {
  return interval_line({"time", "memory", "block device", "path", "direction", "reqs", "MiB/s", "errors", "predicted"});
}

std::string watch_interval_text(const WatchReport& r, const std::string& time) {
  std::string out;
  for (const Line& l : table_lines(r)) {
    std::string rate = l.moves && r.seconds > 0 ? mib_number(static_cast<double>(l.bytes) / r.seconds) : "-";
    std::string path = l.path == "host" && !l.processes.empty() ? "host (" + l.processes + ")" : l.path;
    out += interval_line({printable(time), l.provider, l.client, path, l.dir, std::to_string(l.requests), rate,
                          std::to_string(l.errors), l.predicted});
  }
  return out;
}

}  // namespace p2pcheck
