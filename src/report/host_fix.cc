// One fix per host, merged from the pairs' structured fixes and the findings' fixes (never from
// their words): the ACS ports as addresses, the steps by kind.
#include "p2pcheck/report/host_fix.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/rules/acs.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

using json = nlohmann::ordered_json;

namespace {

void add_step(std::vector<HostFixStep>& steps, HostFixStep step) {
  auto same = [&](const HostFixStep& s) { return s.kind == step.kind && s.text == step.text; };
  if (auto it = std::find_if(steps.begin(), steps.end(), same); it != steps.end()) {
    if (!step.subject.empty() && it->subject.find(step.subject) == std::string::npos)
      it->subject += (it->subject.empty() ? "" : ", ") + step.subject;
    return;
  }
  steps.push_back(std::move(step));
}

}  // namespace

HostFix host_fix(const CheckReport& r) {
  HostFix fix;
  std::set<Bdf> ports;
  // The fix once per class and redirect (what decides a pair's fix); the ports per pair, since
  // they differ within a class.
  std::map<std::pair<std::uint32_t, bool>, PairFix> fixes;
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    if (r.pairs.shared(i).verdict == Verdict::kSupported) continue;
    auto [at, made] = fixes.try_emplace({r.pairs.class_index(i), r.pairs.acs_redirected(i)});
    if (made) at->second = pair_fix(r.pairs[i], r.rules, r.machine);
    const PairFix& pf = at->second;
    if (pf.kind == FixKind::kDisableAcsRedir) {
      for (const Function* port : r.pairs.walk(i).acs_redirect) ports.insert(port->bdf);
      continue;
    }
    // The kernel's own fixes (another kernel, one with P2PDMA) are the kernel findings' steps.
    if (made && !pf.empty() && !row(pf.kind).kernel_wide) add_step(fix.steps, {token(pf.kind), "", pf.text, ""});
  }
  if (!ports.empty()) {
    // The list replaces the one the machine boots with: what that one names stays in it.
    AcsDeviceList booted = parse_acs_overrides(r.machine.cmdline).redirect_disabled;
    ports.insert(booted.addresses.begin(), booted.addresses.end());
    fix.acs_ports.assign(ports.begin(), ports.end());
    fix.acs_ids = booted.ids;
  }
  // The findings' fixes, problems first (FAIL, then UNKNOWN, then WARN), each cause once; with no
  // pair, learning an unknown fact changes nothing: only the problems seen are fixed.
  for (Level level : {Level::kFail, Level::kUnknown, Level::kWarn})
    for (const Finding& f : r.findings)
      if (level != Level::kUnknown || r.result != Result::kNoPairs)
        // iommu.state's fix is the ACS list the command line above gives when a pair needs it.
        if (f.level == level && !f.fix.empty() && concerns_selected_pairs(f, r) && f.id != "iommu.state")
          add_step(fix.steps, {f.id, f.subject, f.fix, ""});
  return fix;
}

std::string acs_param(const HostFix& fix) {
  return fix.acs_ports.empty() ? "" : disable_acs_redir_param(fix.acs_ports, fix.acs_ids);
}

std::string acs_cost(const HostFix& fix) { return fix.acs_ports.empty() ? "" : row(FixKind::kDisableAcsRedir).cost; }

json host_fix_json(const HostFix& fix) {
  json ports = json::array();
  for (const Bdf& b : fix.acs_ports) ports.push_back(b.str());
  json steps = json::array();
  for (const HostFixStep& s : fix.steps)
    steps.push_back({{"kind", s.kind},
                     {"subject", s.subject.empty() ? json(nullptr) : json(s.subject)},
                     {"text", s.text},
                     {"cost", s.cost.empty() ? json(nullptr) : json(s.cost)}});
  const std::string cmdline = acs_param(fix), cost = acs_cost(fix);
  json params = json::array();
  if (!cmdline.empty()) params.push_back(cmdline);
  return {{"kernel_cmdline", cmdline.empty() ? json(nullptr) : json(cmdline)},
          {"cmdline_params", std::move(params)},
          {"acs_ports", std::move(ports)},
          {"cmdline_cost", cost.empty() ? json(nullptr) : json(cost)},
          {"steps", std::move(steps)}};
}

namespace {

// A step's label in text: a check's id as check lists it ("kernel.release"); a pair fix's kind in
// words (its id stays in JSON's `kind`; a finding id has a dot, so it is never a fix kind's token).
std::string step_label(const HostFixStep& s) {
  std::optional<FixKind> kind = fix_kind_named(s.kind);
  const char* words = kind ? row(*kind).label : nullptr;
  return (words ? std::string(words) : s.kind) + (s.subject.empty() ? "" : " (" + s.subject + ")");
}

}  // namespace

std::string host_fix_lines(const HostFix& fix, const std::string& indent) {
  std::string out;
  if (!fix.acs_ports.empty())
    out += indent + "- kernel command line: " + acs_param(fix) + " (costs " + acs_cost(fix) + ")\n";
  // Steps that say the same thing (the release for kernel.release and kernel.known_bad) once, with
  // every label, at the first one's place.
  std::vector<std::pair<std::string, const HostFixStep*>> lines;  // labels, step
  std::map<std::string, std::size_t> line_of_text;
  for (const HostFixStep& s : fix.steps) {
    auto [at, fresh] = line_of_text.try_emplace(s.text + "\n" + s.cost, lines.size());
    if (fresh)
      lines.emplace_back(step_label(s), &s);
    else if (std::string label = step_label(s); lines[at->second].first.find(label) == std::string::npos)
      lines[at->second].first += ", " + label;
  }
  for (const auto& [labels, s] : lines)
    out += indent + "- " + labels + ": " + s->text + (s->cost.empty() ? "" : " (costs " + s->cost + ")") + "\n";
  return out;
}

std::string host_fix_text(const HostFix& fix) {
  if (fix.empty()) return "";
  return "\nFix for this host (everything at once)\n" + host_fix_lines(fix, "  ");
}

}  // namespace p2pcheck
