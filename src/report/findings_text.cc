#include "p2pcheck/report/findings_text.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace p2pcheck {

using namespace report_detail;

namespace {

// One finding: level, subject and message, its evidence, the fix of a problem. `alike`: how many
// more devices have the same finding word for word (printed once, counted).
std::string finding_text(const Finding& f, const TextStyle& style, size_t alike = 0) {
  // A finding about many devices names the first and counts the rest (JSON lists them all).
  const bool many = !f.not_carried.empty() && f.devices.size() > 3;
  std::string subject = many    ? f.devices.front().str() + " and " + std::to_string(f.devices.size() - 1) + " more"
                        : alike ? f.subject + " and " + std::to_string(alike) + " more"
                                : f.subject;
  std::string line = "  " + colored(style, level_color(f.level), pad(to_string(f.level), 8)) +
                     (subject.empty() ? "" : subject + ": ") + f.message;
  const size_t shown = many ? 1 : f.evidence.size();
  if (!f.evidence.empty())
    line += "\n          evidence: " + f.evidence.front().file + " = " + f.evidence.front().value;
  for (size_t i = 1; i < std::min(shown, f.evidence.size()); ++i)
    line += "; " + f.evidence[i].file + " = " + f.evidence[i].value;
  if (shown < f.evidence.size()) line += "; and " + std::to_string(f.evidence.size() - shown) + " more";
  if (alike) line += "; and the same for the " + std::to_string(alike) + " more";
  if (!f.fix.empty() && (f.level == Level::kFail || f.level == Level::kWarn || f.level == Level::kUnknown))
    line += "\n          fix: " + f.fix;
  return line + "\n";
}

// Findings that say the same word for word about different devices (a subject each), by their
// first index: the later ones are counted, not printed. One pass over a map, not every pair:
// a container host's mount table makes 100,000 findings.
// Counted and not-counted findings (`concerns`) are kept apart: each prints under its own heading.
std::vector<std::size_t> alike_counts(const std::vector<Finding>& findings, const std::vector<bool>& concerns,
                                      std::vector<bool>& printed) {
  std::vector<std::size_t> alike(findings.size());
  std::map<std::tuple<bool, const std::string&, Level, const std::string&, const std::string&>, std::size_t> first;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    if (f.subject.empty()) continue;
    auto [at, added] = first.try_emplace({concerns[i], f.id, f.level, f.message, f.fix}, i);
    if (!added) {
      ++alike[at->second];
      printed[i] = true;
    }
  }
  return alike;
}

}  // namespace

std::string findings_text(const CheckReport& r, const TextStyle& style, bool verbose) {
  std::string out = "\nKernel and stack\n";
  size_t problems = 0, passed = 0, notes = 0;
  // One line per cause: per-device findings that say the same word for word print once, counted.
  // Those the RESULT counts first; problems of devices outside the selection after, under their own
  // heading, so that no FAIL line reads as part of a PASS.
  std::vector<bool> printed(r.findings.size());
  std::vector<bool> concerns(r.findings.size());
  for (size_t i = 0; i < r.findings.size(); ++i) concerns[i] = concerns_selected_pairs(r.findings[i], r);
  const std::vector<std::size_t> alike = alike_counts(r.findings, concerns, printed);
  std::string outside;
  // NO PAIRS: what is unknown (the kernel's config, the CPU) cannot change that; -v lists it.
  const bool moot_unknowns = r.result == Result::kNoPairs && !verbose;
  size_t moot = 0;
  for (bool counted : {true, false})
    for (Level level : {Level::kFail, Level::kUnknown, Level::kWarn})
      for (size_t i = 0; i < r.findings.size(); ++i) {
        if (r.findings[i].level != level || printed[i] || concerns[i] != counted) continue;
        if (moot_unknowns && level == Level::kUnknown) {
          ++moot;
          continue;
        }
        (counted ? out : outside) += finding_text(r.findings[i], style, alike[i]);
        ++problems;
      }
  std::set<std::string> listed_ids;
  for (const auto& f : r.findings) {
    if (f.level != Level::kPass && f.level != Level::kInfo) continue;
    (f.level == Level::kPass ? passed : notes)++;
    if (!verbose) continue;
    if (f.level == Level::kPass && !f.subject.empty()) {
      if (!listed_ids.insert(f.id).second) continue;
      std::vector<std::string> subjects;
      for (const auto& g : r.findings)
        if (g.id == f.id && g.level == Level::kPass && !g.subject.empty()) subjects.push_back(g.subject);
      if (subjects.size() > 1) {
        out += "  " + colored(style, level_color(f.level), pad("PASS", 8)) + f.message + " — and " +
               std::to_string(subjects.size() - 1) + " more (" + f.id + ": " + subjects.front() + " ... " +
               subjects.back() + ")" + "\n";
        continue;
      }
    }
    out += finding_text(f, style);
  }
  if (!verbose && passed + notes + moot > 0)
    out += "  " + std::string(problems ? "and " : "") + std::to_string(passed) + " passed, " + std::to_string(notes) +
           " for information" + (moot ? ", " + std::to_string(moot) + " unknown that cannot change NO PAIRS" : "") +
           " (-v lists them)\n";
  if (!outside.empty())
    out += "\nNot counted: about devices and file systems outside the selection (the RESULT does not include them)\n" +
           outside;
  return out;
}

}  // namespace p2pcheck
