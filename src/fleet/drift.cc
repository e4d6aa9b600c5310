// Two results of one machine compared (drift.h).
#include "p2pcheck/fleet/drift.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "p2pcheck/source/printable.h"

namespace p2pcheck {

namespace {

// Away from PASS: a pair allowed, then undecided, then refused; a missing pair is worst.
int badness(std::optional<Verdict> v) {
  if (!v) return 3;
  switch (*v) {
    case Verdict::kSupported: return 0;
    case Verdict::kUnknown: return 1;
    case Verdict::kNotSupported: return 2;
  }
  return 3;
}

// PASS, then UNKNOWN, then FAIL and NO PAIRS (nothing usable either way).
int badness(Result r) {
  switch (r) {
    case Result::kPass: return 0;
    case Result::kUnknown: return 1;
    case Result::kFail: return 2;
    case Result::kNoPairs: return 2;
  }
  return 2;
}

// A finding by what it does to the result under the report's --fail-on (result_for): UNKNOWN
// always makes it UNKNOWN at least; FAIL counts when failing checks do (not under -stack), WARN
// only under `warn`. Absent, PASS, INFO and what the policy leaves out change nothing.
int badness(std::optional<Level> l, const FailPolicy& policy) {
  if (!l) return 0;
  switch (*l) {
    case Level::kUnknown: return 1;
    case Level::kFail: return policy.stack ? 2 : 0;
    case Level::kWarn: return policy.warn ? 2 : 0;
    default: return 0;
  }
}

Change moved(int before, int after) {
  return after > before ? Change::kWorse : after < before ? Change::kBetter : Change::kSame;
}

void fold(Change& overall, Change c) {
  if (c == Change::kWorse || (c == Change::kBetter && overall == Change::kSame)) overall = c;
}

std::string pair_key(const std::string& gpu, const std::string& nvme) { return gpu + '\x1f' + nvme; }

void compare_pairs(const HostSummary& baseline, const HostSummary& current, DriftReport& d) {
  std::unordered_map<std::string, const HostPair*> before;
  before.reserve(baseline.pairs.size());
  for (const HostPair& p : baseline.pairs) before.emplace(pair_key(p.gpu, p.nvme), &p);
  std::set<std::string> seen;
  for (const HostPair& p : current.pairs) {
    auto key = pair_key(p.gpu, p.nvme);
    seen.insert(key);
    auto it = before.find(key);
    const HostPair* b = it == before.end() ? nullptr : it->second;
    if (b && b->verdict == p.verdict && b->cause == p.cause) continue;
    PairChange c{p.gpu,        p.nvme,
                 p.nvme_name,  b ? std::optional(b->verdict) : std::nullopt,
                 p.verdict,    b ? b->cause : Cause::kNone,
                 p.cause,      p.rule,
                 Change::kSame};
    // A pair that was not there before is judged against a pair that works.
    c.change = moved(b ? badness(c.before) : 0, badness(c.after));
    d.pairs.push_back(std::move(c));
  }
  for (const HostPair& p : baseline.pairs)
    if (!seen.count(pair_key(p.gpu, p.nvme))) {
      PairChange c{p.gpu, p.nvme, p.nvme_name, p.verdict, std::nullopt, p.cause, Cause::kNone, "", Change::kWorse};
      d.pairs.push_back(std::move(c));
    }
}

std::set<std::string> acs_ports(const HostSummary& host) {
  std::set<std::string> ports;
  if (host.fix)
    for (const Bdf& b : host.fix->acs_ports) ports.insert(b.str());
  return ports;
}

// A port that refuses pairs on one side only. It is what made pairs worse (or better) when some
// did; else only the cause moved (a kernel without P2PDMA at the baseline refused those pairs
// before ACS redirect could): listed, neither better nor worse.
void compare_ports(const HostSummary& baseline, const HostSummary& current, DriftReport& d) {
  std::set<std::string> before = acs_ports(baseline), after = acs_ports(current);
  std::set<std::string> all = before;
  all.insert(after.begin(), after.end());
  bool worse = false, better = false;
  for (const auto& c : d.pairs) {
    worse = worse || c.change == Change::kWorse;
    better = better || c.change == Change::kBetter;
  }
  for (const std::string& port : all) {
    bool b = before.count(port), a = after.count(port);
    if (a == b) continue;
    Change c = a ? (worse ? Change::kWorse : Change::kSame) : (better ? Change::kBetter : Change::kSame);
    d.ports.push_back({port, b, a, c});
  }
}

using FindingKey = std::tuple<std::string, std::string, std::string>;  // id, subject, cause

// The counted findings above INFO, the worst level of each (id, subject, cause).
std::map<FindingKey, const HostFinding*> counted_findings(const HostSummary& host) {
  std::map<FindingKey, const HostFinding*> out;
  for (const HostFinding& f : host.findings) {
    if (!f.concerns || severity(f.level) <= severity(Level::kInfo)) continue;
    const HostFinding*& at = out[{f.id, f.subject, f.cause}];
    if (!at || severity(f.level) > severity(at->level)) at = &f;
  }
  return out;
}

void compare_findings(const HostSummary& baseline, const HostSummary& current, DriftReport& d) {
  auto before = counted_findings(baseline), after = counted_findings(current);
  std::set<FindingKey> keys;
  for (const auto& [k, f] : before) keys.insert(k);
  for (const auto& [k, f] : after) keys.insert(k);
  for (const FindingKey& k : keys) {
    auto b = before.find(k), a = after.find(k);
    std::optional<Level> lb, la;
    if (b != before.end()) lb = b->second->level;
    if (a != after.end()) la = a->second->level;
    if (lb == la) continue;
    const HostFinding* shown = a != after.end() ? a->second : b->second;
    d.findings.push_back({std::get<0>(k), std::get<1>(k), lb, la, shown->message,
                          moved(badness(lb, baseline.fail_on), badness(la, current.fail_on))});
  }
}

}  // namespace

const char* to_string(Change change) {
  switch (change) {
    case Change::kSame: return "same";
    case Change::kBetter: return "better";
    case Change::kWorse: return "worse";
  }
  return "same";
}

bool DriftReport::changed() const {
  return before != after || kernel_before != kernel_after || pairs_before != pairs_after || !pairs.empty() ||
         !ports.empty() || !findings.empty();
}

DriftReport compare_hosts(const HostSummary& baseline, const HostSummary& current) {
  DriftReport d;
  d.baseline_input = baseline.input;
  d.current_input = current.input;
  d.baseline_host = baseline.host;
  d.current_host = current.host;
  d.before = baseline.result;
  d.after = current.result;
  d.kernel_before = baseline.kernel;
  d.kernel_after = current.kernel;
  d.pairs_before = baseline.pairs.size();
  d.pairs_after = current.pairs.size();
  compare_pairs(baseline, current, d);
  compare_ports(baseline, current, d);
  compare_findings(baseline, current, d);
  fold(d.overall, moved(badness(d.before), badness(d.after)));
  for (const auto& c : d.pairs) fold(d.overall, c.change);
  for (const auto& c : d.ports) fold(d.overall, c.change);
  for (const auto& c : d.findings) fold(d.overall, c.change);
  return d;
}

namespace {

const char* verdict_words(std::optional<Verdict> v) {
  if (!v) return "gone";
  switch (*v) {
    case Verdict::kSupported: return "allowed";
    case Verdict::kNotSupported: return "refused";
    case Verdict::kUnknown: return "undecided";
  }
  return "undecided";
}

// "0000:03:00.0 <-> nvme0 now refused (pair.acs_redirect)" for the first pair that got worse, and
// how many more did.
std::string pairs_worse(const DriftReport& d) {
  std::size_t worse = 0;
  const PairChange* first = nullptr;
  for (const auto& c : d.pairs)
    if (c.change == Change::kWorse && ++worse == 1) first = &c;
  if (!first) return "";
  std::string nvme = first->nvme_name.empty() ? first->nvme : first->nvme_name;
  std::string text = first->gpu + " <-> " + nvme + " now " + verdict_words(first->after);
  if (first->cause_after != Cause::kNone) text += " (" + std::string(token(first->cause_after)) + ")";
  if (worse > 1) text += " and " + std::to_string(worse - 1) + " more pair(s) worse";
  return text;
}

// `text` cut to `limit` bytes on a UTF-8 character boundary, "..." marking the cut.
std::string cut(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  return std::string(utf8_prefix(text, limit > 3 ? limit - 3 : 0)) + "...";
}

}  // namespace

std::string worse_summary(const DriftReport& d, std::size_t limit) {
  if (d.overall != Change::kWorse) return "";
  std::vector<std::string> parts;
  for (const auto& c : d.ports)
    if (c.change == Change::kWorse)
      parts.push_back("ACS redirect on " + c.port + " refuses pairs (not at the baseline)");
  if (std::string p = pairs_worse(d); !p.empty()) parts.push_back(p);
  for (const auto& c : d.findings)
    if (c.change == Change::kWorse)
      parts.push_back(c.id + " " + (c.after ? to_string(*c.after) : "gone") + ": " +
                      (c.subject.empty() ? c.message : c.subject));
  if (badness(d.after) > badness(d.before) || parts.empty())
    parts.push_back(std::string("result ") + to_string(d.before) + " -> " + to_string(d.after));
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : "; ") + p;
  return cut(text, limit);
}

}  // namespace p2pcheck
