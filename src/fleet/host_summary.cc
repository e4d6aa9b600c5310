// A host's summary from its CheckReport, and the host names fleet goes by (host_summary.h); each
// pair's cause is its explanation's (explain/); saved check --json files are read in saved_check_json.cc.
#include "p2pcheck/fleet/host_summary.h"

#include <algorithm>
#include <array>

#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/fleet/fingerprint.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/report/host_fix.h"

namespace p2pcheck {

using nlohmann::ordered_json;

namespace {

// A redacted capture's host name is a placeholder ("host-0001") that every redacted capture shares;
// "(none)" is the kernel's when nothing set one (the QEMU lab's guests), "localhost" a default.
bool usable_name(const std::string& name, bool redacted) {
  return !redacted && !name.empty() && name != "(none)" && name != "localhost" && name != "localhost.localdomain";
}

// The same of a JSON object's (a saved identity's, a manifest's) "hostname" and "redacted".
bool usable_name(const ordered_json* object) {
  if (!object || !object->is_object()) return false;
  auto it = object->find("hostname");
  if (it == object->end() || !it->is_string()) return false;
  auto redacted = object->find("redacted");
  return usable_name(it->get_ref<const std::string&>(),
                     redacted != object->end() && redacted->is_boolean() && redacted->get<bool>());
}

}  // namespace

// "racks/host-07.tar.zst" -> "host-07"; "dumps/host-07/root" and ".../p2pcheck-capture" (an
// unpacked capture) -> "host-07", the folder they are in.
std::string file_stem(const std::string& input) {
  std::string path = input;
  std::string name;
  for (int up = 0; up < 4; ++up) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    auto slash = path.rfind('/');
    name = slash == std::string::npos ? path : path.substr(slash + 1);
    if ((name != "root" && name != "p2pcheck-capture") || slash == std::string::npos || slash == 0) break;
    path.resize(slash);
  }
  static const std::array<const char*, 11> kExtensions = {".zst",  ".gz",  ".xz",  ".bz2", ".tgz", ".tar",
                                                          ".json", ".txt", ".xml", ".db",  ".bin"};
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const char* ext : kExtensions) {
      std::string e = ext;
      if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
        name.resize(name.size() - e.size());
        stripped = true;
      }
    }
  }
  return name;
}

std::string host_name_for(const ordered_json* manifest, const ordered_json* identity, const std::string& input) {
  if (usable_name(identity)) return identity->at("hostname").get<std::string>();
  if (usable_name(manifest)) return manifest->at("hostname").get<std::string>();
  return file_stem(input);
}

namespace {

HostPair host_pair(const CheckReport& r, const PairDecision& d) {
  HostPair h;
  h.gpu = d.walk.pair().gpu.str();
  h.nvme = d.walk.pair().nvme.str();
  const NvmeController* nvme = r.inv.nvme_at(d.walk.pair().nvme);
  h.nvme_name = nvme ? nvme->name : "";
  h.verdict = d.verdict;
  h.to_gpu = d.to_gpu.verdict;
  h.from_gpu = d.from_gpu.verdict;
  h.map_type = to_string(d.map_type);
  h.cause = pair_cause(pair_facts(d));
  if (h.cause != Cause::kNone) {
    h.rule = rule_text(d);
    h.acs_ports = acs_redirect_ports(d);
  }
  return h;
}

}  // namespace

PairTally pair_tally(const HostSummary& host) {
  PairTally t;
  for (const HostPair& p : host.pairs) {
    t.supported += p.verdict == Verdict::kSupported;
    t.not_supported += p.verdict == Verdict::kNotSupported;
    t.unknown += p.verdict == Verdict::kUnknown;
  }
  return t;
}

HostSummary summarize_report(const CheckReport& report, const ordered_json* manifest, const std::string& input) {
  HostSummary s;
  s.input = input;
  s.result = report.result;
  s.fail_on = report.fail_on;
  s.kernel = report.rules.release;
  s.cpu = report.machine.cpu.model_name;
  s.gpus = report.inv.gpus.size();
  s.nvmes = report.inv.nvmes.size();
  for (const Finding& f : report.findings)
    s.findings.push_back({f.id, f.level, f.subject, f.message, f.fix, concerns_selected_pairs(f, report), f.cause});
  s.pairs.reserve(report.pairs.size());
  for (std::size_t i = 0; i < report.pairs.size(); ++i) {
    s.pairs.push_back(host_pair(report, report.pairs[i]));
    s.pairs.back().locality = to_string(pair_locality(report, i).cls);
  }
  s.fix = host_fix(report);
  if (manifest && manifest->is_object()) {
    auto format = manifest->find("format");
    s.format = format != manifest->end() && format->is_string() ? format->get<std::string>() : "capture";
    auto redacted = manifest->find("redacted");
    if (redacted != manifest->end() && redacted->is_boolean()) s.redacted = redacted->get<bool>();
  } else {
    s.format = report.source.rfind("tree ", 0) == 0 ? "tree" : "archive";
  }
  // The machine's own name first, as host_name_for() takes a saved identity's: a redacted
  // capture's hostname is the placeholder every redacted capture shares.
  const std::optional<std::string>& own = report.machine.identity.hostname;
  s.host = own && usable_name(*own, s.redacted.value_or(false)) ? *own : host_name_for(manifest, nullptr, input);
  s.topology = topology_fingerprint(report.topo);
  s.functions = report.topo.functions.size();
  return s;
}

}  // namespace p2pcheck
