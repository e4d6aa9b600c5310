// The RESULT line: the one answer of `check`, in words that match what decided it. Made from the
// report's counts and findings (checks/check.h), never from another sentence.
#include <algorithm>
#include <utility>

#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/report/check.h"

namespace p2pcheck {

using namespace report_detail;

const char* result_color(Result r) {
  switch (r) {
    case Result::kPass: return "32";
    case Result::kFail: return "1;31";
    case Result::kUnknown: return "35";
    case Result::kNoPairs: return "33";
  }
  return "0";
}

namespace {

// "all 72 GPU–NVMe pairs allowed", or "64 allowed, 8 refused of 72 GPU–NVMe pair(s)".
std::string pairs_text(const ResultCounts& c) {
  if (c.allowed == c.pairs)
    return c.pairs == 1 ? "the GPU–NVMe pair is allowed" : "all " + std::to_string(c.pairs) + " GPU–NVMe pairs allowed";
  std::vector<std::string> parts;
  if (c.allowed) parts.push_back(std::to_string(c.allowed) + " allowed");
  if (c.refused) parts.push_back(std::to_string(c.refused) + " refused");
  if (c.undecided) parts.push_back(std::to_string(c.undecided) + " undecided");
  return join(parts, ", ") + " of " + std::to_string(c.pairs) + " GPU–NVMe pair(s)";
}

// What would decide the undecided pairs, as things a user can give: "--cpu", "--kernel-config ...".
std::string to_decide_text(const CheckReport& r) {
  std::vector<std::string> hints;
  auto add = [&hints](const std::string& hint) {
    if (std::find(hints.begin(), hints.end(), hint) == hints.end()) hints.push_back(hint);
  };
  const bool dump = r.machine.from_dump;
  for (std::uint32_t k = 0; k < r.pairs.classes(); ++k) {
    const PairDecision& d = r.pairs.class_decision(k);
    if (d.verdict != Verdict::kUnknown) continue;
    for (const Unknown& u : d.unknowns) switch (u.fact) {
        case UnknownFact::kCpu: add("--cpu"); break;
        case UnknownFact::kP2pdmaConfig:
          if (r.rules.release.empty()) add("--kernel-release REL");
          add("--kernel-config FILE|p2pdma=y");
          break;
        case UnknownFact::kAcsControl:
        case UnknownFact::kHostBridgeDevice:
          add(dump ? "config space read as root (`lspci -xxxx` or `p2pcheck capture` as root)" : "run as root");
          break;
        case UnknownFact::kKernelTable:
          if (!r.rules.what_if())
            add(dump ? "a capture taken as root (`sudo p2pcheck capture`)" : "run as root (`sudo p2pcheck check`)");
          add("the kernel package (--what-if-kernel FILE)");
          break;
      }
  }
  return hints.empty() ? "" : "to decide: give " + join(hints, ", ");
}

// The unknown findings that concern the pairs, by id; "(not in this udev database)" when all share that.
std::string unknown_text(const CheckReport& r) {
  std::string unknown = causes_text(r, Level::kUnknown);
  if (unknown.empty()) return "";
  std::string phrase;
  bool all_not_carried = true;
  for (const auto& f : r.findings)
    if (f.level == Level::kUnknown && concerns_selected_pairs(f, r)) {
      all_not_carried = all_not_carried && !f.not_carried.empty();
      if (phrase.empty()) phrase = f.not_carried;
    }
  return "unknown: " + unknown + (all_not_carried && !phrase.empty() ? " (" + phrase + ")" : "");
}

}  // namespace

std::string causes_text(const CheckReport& r, Level level) {
  std::vector<std::pair<std::string, std::vector<std::string>>> causes;  // id -> subjects, first seen first
  for (const auto& f : r.findings) {
    if (f.level != level || !concerns_selected_pairs(f, r)) continue;
    auto it = std::find_if(causes.begin(), causes.end(), [&](const auto& c) { return c.first == f.id; });
    if (it == causes.end()) it = causes.insert(causes.end(), {f.id, {}});
    // A finding about several devices (merged, not carried) names each of them.
    std::vector<std::string> subjects;
    if (!f.not_carried.empty() && f.devices.size() > 1)
      for (const Bdf& b : f.devices) subjects.push_back(b.str());
    else if (!f.subject.empty())
      subjects.push_back(f.subject);
    for (const std::string& s : subjects)
      if (std::find(it->second.begin(), it->second.end(), s) == it->second.end()) it->second.push_back(s);
  }
  return causes_line(causes);
}

std::string what_if_prefix(const KernelRules& rules) {
  return rules.what_if() ? "if booted with kernel " + rules.release + ": " : "";
}

std::string result_line(const CheckReport& r, const TextStyle& style) {
  std::string head = colored(style, result_color(r.result), std::string("RESULT: ") + to_string(r.result)) + " — ";
  if (r.result == Result::kNoPairs)
    return head + "no GPU–NVMe pair in " + r.source + " (" + std::to_string(r.inv.gpus.size()) + " GPU(s), " +
           std::to_string(r.inv.nvmes.size()) + " NVMe); name any two functions with --gpu and --nvme\n";
  const ResultCounts& c = r.counts;
  const FailPolicy& policy = r.fail_on;
  std::string failing = causes_text(r, Level::kFail);
  std::vector<std::string> counted, not_counted;
  // What decides a FAIL comes first: refused pairs (then the tally is that), then failing checks.
  // No pair allowed fails whatever the policy leaves out (result_for).
  const bool refusals_count = c.refused && (policy.refused || c.allowed == 0);
  if (refusals_count) counted.push_back(pairs_text(c));
  if (!failing.empty()) (policy.stack ? counted : not_counted).push_back("failing: " + failing);
  if (!refusals_count) counted.push_back(pairs_text(c));
  if (c.refused && !refusals_count) not_counted.push_back(std::to_string(c.refused) + " refused");
  if (r.result != Result::kFail || policy.unknown) {
    if (std::string unknown = unknown_text(r); !unknown.empty()) counted.push_back(unknown);
    if (std::string hint = to_decide_text(r); !hint.empty()) counted.push_back(hint);
  }
  // A PASS or UNKNOWN names the selection's own warnings too: no caveat hides below the answer.
  if (c.warnings && (policy.warn || r.result != Result::kFail))
    counted.push_back("warnings: " + causes_text(r, Level::kWarn));
  std::string line = head + what_if_prefix(r.rules) + join(counted, "; ");
  if (!not_counted.empty())
    line += "; not counted (--fail-on " + fail_policy_option(policy) + "): " + join(not_counted, ", ");
  std::vector<std::string> supplied;
  for (const SuppliedUse& use : r.supplied)
    if (use.used) supplied.push_back(use.option + " " + use.value);
  if (!supplied.empty()) line += "; with supplied " + join(supplied, ", ");
  if (r.rules.what_if() && r.rules.input_known_bad)
    line += "; the machine runs " + r.rules.input_release + " (" + r.rules.input_known_bad->name +
            ": known to corrupt memory with P2PDMA)";
  return line + "\n";
}

}  // namespace p2pcheck
