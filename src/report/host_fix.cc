// One fix per host, merged from the pairs' structured fixes and the findings' fixes (never from
// their words): the ACS ports as addresses, the steps by kind.
#include "p2pcheck/report/host_fix.h"

#include <algorithm>
#include <set>

#include "p2pcheck/report/common.h"
#include "p2pcheck/report/pair_fix.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

using json = nlohmann::ordered_json;

namespace {

constexpr const char* kAcsCost =
    "IOMMU isolation for the devices below those ports (they may share an IOMMU group; VFIO passthrough loses "
    "isolation)";

// The ports the machine already boots with in pci=disable_acs_redir= (kept: the new list replaces it).
std::set<Bdf> acs_ports_on_cmdline(const std::string& cmdline) {
  std::set<Bdf> ports;
  for (const auto& [key, value] : parse_cmdline(cmdline)) {
    if (key != "pci") continue;
    for (const std::string& option : split(value, ',')) {
      const std::string prefix = "disable_acs_redir=";
      if (option.rfind(prefix, 0) != 0) continue;
      for (const std::string& port : split(std::string_view(option).substr(prefix.size()), ';'))
        if (auto bdf = Bdf::parse(port)) ports.insert(*bdf);
    }
  }
  return ports;
}

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
  // Each class's fix once; the ports of each redirected pair, which differ within a class.
  std::set<std::uint32_t> classes_seen;
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const PairDecision& shared = r.pairs.shared(i);
    if (shared.verdict == Verdict::kSupported) continue;
    if (r.pairs.acs_redirected(i) && shared.map_type == MapType::kNotSupported && !shared.known_bad &&
        shared.decided_by != DecidedBy::kNoP2pdmaConfig) {
      for (const Function* port : r.pairs.walk(i).acs_redirect) ports.insert(port->bdf);
      continue;
    }
    if (!classes_seen.insert(r.pairs.class_index(i)).second) continue;
    PairFix pf = pair_fix(r.pairs[i], r.rules, r.machine);
    // The kernel's own fixes (another kernel, one with P2PDMA) are the kernel findings' steps.
    if (pf.empty() || pf.kind == "other_kernel" || pf.kind == "kernel_with_p2pdma" || pf.kind == "disable_acs_redir")
      continue;
    add_step(fix.steps, {pf.kind, "", pf.text, ""});
  }
  if (!ports.empty()) {
    std::set<Bdf> all = acs_ports_on_cmdline(r.machine.cmdline);
    all.insert(ports.begin(), ports.end());
    fix.acs_ports.assign(all.begin(), all.end());
    std::string list;
    for (const Bdf& b : fix.acs_ports) list += (list.empty() ? "" : ";") + b.str();
    fix.cmdline_params.push_back("pci=disable_acs_redir=" + list);
    fix.cmdline_cost = kAcsCost;
  }
  fix.kernel_cmdline = join(fix.cmdline_params, " ");
  // The findings' fixes, problems first (FAIL, then UNKNOWN, then WARN), each cause once.
  for (Level level : {Level::kFail, Level::kUnknown, Level::kWarn})
    for (const Finding& f : r.findings)
      // iommu.state's fix is the ACS list the command line above gives when a pair needs it.
      if (f.level == level && !f.fix.empty() && concerns_selected_pairs(f, r) && f.id != "iommu.state")
        add_step(fix.steps, {f.id, f.subject, f.fix, ""});
  return fix;
}

json host_fix_json(const HostFix& fix) {
  json ports = json::array();
  for (const Bdf& b : fix.acs_ports) ports.push_back(b.str());
  json steps = json::array();
  for (const HostFixStep& s : fix.steps)
    steps.push_back({{"kind", s.kind},
                     {"subject", s.subject.empty() ? json(nullptr) : json(s.subject)},
                     {"text", s.text},
                     {"cost", s.cost.empty() ? json(nullptr) : json(s.cost)}});
  json params = json::array();
  for (const std::string& p : fix.cmdline_params) params.push_back(p);
  return {{"kernel_cmdline", fix.kernel_cmdline.empty() ? json(nullptr) : json(fix.kernel_cmdline)},
          {"cmdline_params", std::move(params)},
          {"acs_ports", std::move(ports)},
          {"cmdline_cost", fix.cmdline_cost.empty() ? json(nullptr) : json(fix.cmdline_cost)},
          {"steps", std::move(steps)}};
}

std::string host_fix_text(const HostFix& fix) {
  if (fix.empty()) return "";
  std::string out = "\nFix for this host (everything at once)\n";
  if (!fix.kernel_cmdline.empty())
    out += "  - kernel command line: " + fix.kernel_cmdline + " (costs " + fix.cmdline_cost + ")\n";
  for (const HostFixStep& s : fix.steps)
    out += "  - " + s.kind + (s.subject.empty() ? "" : " (" + s.subject + ")") + ": " + s.text +
           (s.cost.empty() ? "" : " (costs " + s.cost + ")") + "\n";
  return out;
}

}  // namespace p2pcheck
