// A host's summary from its check --json document (host_summary.h).
#include "p2pcheck/fleet/host_summary.h"

#include <algorithm>
#include <array>
#include <map>

#include "p2pcheck/fleet/fingerprint.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_read.h"

namespace p2pcheck {

using nlohmann::ordered_json;

namespace {

// A redacted capture's host name is a placeholder ("host-0001") that every redacted capture shares;
// "(none)" is the kernel's when nothing set one (the QEMU lab's guests), "localhost" a default.
bool usable_name(const ordered_json* object, const char* key) {
  if (!object || !object->is_object()) return false;
  auto it = object->find(key);
  if (it == object->end() || !it->is_string()) return false;
  const std::string& name = it->get_ref<const std::string&>();
  if (name.empty() || name == "(none)" || name == "localhost" || name == "localhost.localdomain") return false;
  auto redacted = object->find("redacted");
  return redacted == object->end() || !redacted->is_boolean() || !redacted->get<bool>();
}

Level level_named(const JsonFields& f, const char* key) {
  std::string text = f.text(key).value_or("");
  for (Level l : {Level::kPass, Level::kInfo, Level::kWarn, Level::kFail, Level::kUnknown})
    if (text == to_string(l)) return l;
  f.fail(key, "PASS, INFO, WARN, FAIL or UNKNOWN");
}

Verdict verdict_named(const JsonFields& f, const char* key) {
  std::string text = f.text(key).value_or("");
  for (Verdict v : {Verdict::kSupported, Verdict::kNotSupported, Verdict::kUnknown})
    if (text == to_string(v)) return v;
  f.fail(key, "supported, not_supported or unknown");
}

Result result_named(const JsonFields& f, const char* key) {
  std::string text = f.text(key).value_or("");
  for (Result r : {Result::kPass, Result::kFail, Result::kUnknown, Result::kNoPairs})
    if (text == to_string(r)) return r;
  f.fail(key, "PASS, FAIL, UNKNOWN or NO PAIRS");
}

std::vector<std::string> strings(const JsonFields& f, const char* key) {
  std::vector<std::string> out;
  if (const ordered_json* a = f.array(key))
    for (const auto& v : *a) {
      if (!v.is_string()) f.fail(key, "an array of strings");
      out.push_back(v.get<std::string>());
    }
  return out;
}

bool has(const std::vector<std::string>& list, const char* token) {
  return std::find(list.begin(), list.end(), token) != list.end();
}

// The flow's verdict ("flows": {"to_gpu": {"verdict": ...}}); unknown when absent.
Verdict flow_verdict(const JsonFields& pair, const char* flow) {
  const ordered_json* flows = pair.object("flows");
  if (!flows) return Verdict::kUnknown;
  JsonFields f(*flows, pair.file(), pair.member("flows"));
  const ordered_json* one = f.object(flow);
  if (!one) return Verdict::kUnknown;
  return verdict_named(JsonFields(*one, pair.file(), f.member(flow)), "verdict");
}

// Version 2 names an NVMe once, in the top-level "nvme": [{"bdf", "name"}]; BDF -> name.
std::map<std::string, std::string> nvme_names_in(const JsonFields& doc) {
  std::map<std::string, std::string> names;
  if (const ordered_json* nvme = doc.array("nvme"))
    for (std::size_t i = 0; i < nvme->size(); ++i) {
      JsonFields c((*nvme)[i], doc.file(), doc.member("nvme", i));
      auto bdf = c.text("bdf");
      auto name = c.text("name");
      if (bdf && name) names.emplace(*bdf, *name);
    }
  return names;
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
  if (usable_name(identity, "hostname")) return identity->at("hostname").get<std::string>();
  if (usable_name(manifest, "hostname")) return manifest->at("hostname").get<std::string>();
  return file_stem(input);
}

namespace {

// check --json's host_fix (report/host_fix.h) as written.
HostFix host_fix_named(const JsonFields& f) {
  HostFix fix;
  fix.kernel_cmdline = f.text("kernel_cmdline").value_or("");
  fix.cmdline_params = strings(f, "cmdline_params");
  for (const std::string& port : strings(f, "acs_ports")) {
    auto bdf = Bdf::parse(port);
    if (!bdf) f.fail("acs_ports", "PCI addresses");
    fix.acs_ports.push_back(*bdf);
  }
  fix.cmdline_cost = f.text("cmdline_cost").value_or("");
  if (const ordered_json* steps = f.array("steps"))
    for (std::size_t i = 0; i < steps->size(); ++i) {
      JsonFields step((*steps)[i], f.file(), f.member("steps", i));
      HostFixStep one{step.text("kind").value_or(""), step.text("subject").value_or(""), step.text("text").value_or(""),
                      step.text("cost").value_or("")};
      if (one.kind.empty() || one.text.empty()) step.fail(one.kind.empty() ? "kind" : "text", "a string");
      fix.steps.push_back(std::move(one));
    }
  return fix;
}

}  // namespace

std::string pair_cause(const ordered_json& pair, const std::string& file, std::size_t index) {
  JsonFields p(pair, file, "pairs[" + std::to_string(index) + "]");
  Verdict verdict = verdict_named(p, "verdict");
  if (verdict == Verdict::kSupported) return "";
  Verdict path = Verdict::kUnknown;
  if (const ordered_json* level = p.object("path"))
    path = verdict_named(JsonFields(*level, file, p.member("path")), "verdict");
  std::vector<std::string> blocked = strings(p, "blocked_by");
  const ordered_json* acs_redirect = p.array("acs_redirect");
  const ordered_json* acs_unknown = p.array("acs_unknown");
  if (verdict == Verdict::kNotSupported) {
    // The path is fine, the kernel itself is not: the cause is the kernel's finding.
    if (path != Verdict::kNotSupported) {
      if (has(blocked, "kernel_without_p2pdma")) return "kernel.config_p2pdma";
      if (has(blocked, "known_bad_kernel")) return "kernel.known_bad";
    }
    if (acs_redirect && !acs_redirect->empty()) return "pair.acs_redirect";
    if (p.object("host_check")) return "pair.host_bridge";
    return "pair.not_supported";
  }
  if (path == Verdict::kSupported && has(blocked, "p2pdma_config_unknown")) return "kernel.config_p2pdma";
  if (acs_unknown && !acs_unknown->empty()) return "pair.acs_unknown";
  return "pair.path_unknown";
}

namespace {

// The schema_version of a check --json document, after its schema is checked: a newer version
// than this build writes is refused before anything else is read.
std::int64_t readable_schema_version(const JsonFields& doc) {
  if (doc.text("schema") != std::string("p2pcheck.check")) doc.fail("schema", "\"p2pcheck.check\" (check --json)");
  auto version = doc.integer("schema_version", 1, INT64_MAX);
  if (!version) doc.fail("schema_version", "an integer");
  if (*version > kCompactJsonSchemaVersion)
    throw Error(doc.file(), "schema_version " + std::to_string(*version) + " is newer than this p2pcheck reads (" +
                                std::to_string(kCompactJsonSchemaVersion) + "); use a newer p2pcheck");
  return *version;
}

FailPolicy fail_policy_named(const JsonFields& doc) {
  std::vector<std::string> words = strings(doc, "fail_on");
  if (words.empty()) doc.fail("fail_on", "refused, stack, unknown or warn");
  try {
    return parse_fail_policy(join(words, ","));
  } catch (const UsageError&) {
    doc.fail("fail_on", "refused, stack, unknown or warn");
  }
}

HostFinding host_finding_named(const JsonFields& f) {
  HostFinding h;
  h.id = f.text("id").value_or("");
  if (h.id.empty()) f.fail("id", "a finding id");
  h.level = level_named(f, "level");
  h.subject = f.text("subject").value_or("");
  h.message = f.text("message").value_or("");
  h.fix = f.text("fix").value_or("");
  h.concerns = f.flag("concerns_selected_pairs").value_or(true);
  return h;
}

// Version 2's pair `i` (gpu, nvme and the index of its row of `decisions`) as version 1 wrote it.
ordered_json version_1_pair(const JsonFields& doc, const ordered_json& compact_pair, std::size_t i,
                            const ordered_json& decisions) {
  const std::string& file = doc.file();
  JsonFields compact(compact_pair, file, doc.member("pairs", i));
  auto at = compact.integer("decision", 0, static_cast<std::int64_t>(decisions.size()) - 1);
  if (!at) compact.fail("decision", "an index into decisions");
  const ordered_json& decision = decisions[static_cast<std::size_t>(*at)];
  (void)JsonFields(decision, file, doc.member("decisions", static_cast<std::size_t>(*at)));  // an object, or Error
  auto gpu = compact.text("gpu"), nvme = compact.text("nvme");
  if (!gpu || !nvme) compact.fail(gpu ? "nvme" : "gpu", "a PCI address");
  // An older p2pcheck wrote {acs_redirect} placeholders into shared rows: not a fix to show.
  if (!decision.contains("common_bridge"))
    throw Error(file,
                "a schema_version 2 check --json from an older p2pcheck (its decisions have no "
                "common_bridge): run check --json again with this version, or use --json-schema 1");
  ordered_json merged = pair_as_version_1(decision, *gpu, *nvme);
  merged["gpu"] = *gpu;
  merged["nvme"] = *nvme;
  return merged;
}

// Pair `i` in version 1's shape; `nvme_names` (version 2's, else empty) names its NVMe.
HostPair host_pair_named(const JsonFields& doc, const ordered_json& pair, std::size_t i,
                         const std::map<std::string, std::string>& nvme_names) {
  JsonFields p(pair, doc.file(), doc.member("pairs", i));
  HostPair h;
  h.gpu = p.text("gpu").value_or("");
  h.nvme = p.text("nvme").value_or("");
  if (h.gpu.empty() || h.nvme.empty()) p.fail(h.gpu.empty() ? "gpu" : "nvme", "a PCI address");
  h.nvme_name = p.text("nvme_name").value_or("");
  if (auto name = nvme_names.find(h.nvme); name != nvme_names.end()) h.nvme_name = name->second;
  h.verdict = verdict_named(p, "verdict");
  h.to_gpu = flow_verdict(p, "to_gpu");
  h.from_gpu = flow_verdict(p, "from_gpu");
  h.map_type = p.text("map_type").value_or("UNKNOWN");
  h.cause = pair_cause(pair, doc.file(), i);
  if (!h.cause.empty()) {
    h.rule = p.text("rule").value_or("");
    h.acs_fix = p.text("acs_fix").value_or("");
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

HostSummary summarize_check_json(const ordered_json& check, const std::string& file) {
  JsonFields doc(check, file);
  std::int64_t version = readable_schema_version(doc);
  HostSummary s;
  s.input = file;
  s.format = "check --json";
  s.result = result_named(doc, "result");
  // Reports before `fail_on` existed were judged under the default policy.
  if (doc.array("fail_on")) s.fail_on = fail_policy_named(doc);
  if (const ordered_json* kernel = doc.object("kernel"))
    s.kernel = JsonFields(*kernel, file, "kernel").text("release").value_or("");
  if (const ordered_json* cpu = doc.object("cpu"))
    s.cpu = JsonFields(*cpu, file, "cpu").text("model_name").value_or("");
  s.gpus = strings(doc, "gpus").size();
  if (const ordered_json* nvme = doc.array("nvme")) s.nvmes = nvme->size();
  if (const ordered_json* capture = doc.object("capture")) {
    JsonFields c(*capture, file, "capture");
    s.redacted = c.flag("redacted");
  }
  if (const ordered_json* findings = doc.array("findings"))
    for (std::size_t i = 0; i < findings->size(); ++i)
      s.findings.push_back(host_finding_named(JsonFields((*findings)[i], file, doc.member("findings", i))));
  // Version 2 pairs refer to a row of `decisions`: merged, they read as version 1's pairs.
  const ordered_json* decisions = version >= 2 ? doc.array("decisions") : nullptr;
  if (version >= 2 && !decisions) doc.fail("decisions", "an array (schema_version 2)");
  std::map<std::string, std::string> nvme_names = decisions ? nvme_names_in(doc) : std::map<std::string, std::string>{};
  if (const ordered_json* pairs = doc.array("pairs"))
    for (std::size_t i = 0; i < pairs->size(); ++i) {
      ordered_json merged = decisions ? version_1_pair(doc, (*pairs)[i], i, *decisions) : ordered_json();
      s.pairs.push_back(host_pair_named(doc, decisions ? merged : (*pairs)[i], i, nvme_names));
    }
  if (const ordered_json* fix = doc.object("host_fix")) s.fix = host_fix_named(JsonFields(*fix, file, "host_fix"));
  s.host = host_name_for(nullptr, doc.object("identity"), file);
  return s;
}

HostSummary summarize_report(const CheckReport& report, const ordered_json* manifest, const std::string& input) {
  ordered_json check = check_json(report);
  HostSummary s = summarize_check_json(check, input);
  s.input = input;
  if (manifest && manifest->is_object()) {
    auto format = manifest->find("format");
    s.format = format != manifest->end() && format->is_string() ? format->get<std::string>() : "capture";
    auto redacted = manifest->find("redacted");
    if (redacted != manifest->end() && redacted->is_boolean()) s.redacted = redacted->get<bool>();
  } else {
    s.format = report.source.rfind("tree ", 0) == 0 ? "tree" : "archive";
  }
  // The machine's own name as check --json of this replay would show it: check_command marks a
  // redacted capture's identity so, and so does this (its hostname is the shared placeholder).
  ordered_json& identity = check["identity"];
  if (identity.is_object()) identity["redacted"] = s.redacted.value_or(false);
  s.host = host_name_for(manifest, &identity, input);
  s.topology = topology_fingerprint(report.topo);
  s.functions = report.topo.functions.size();
  return s;
}

}  // namespace p2pcheck
