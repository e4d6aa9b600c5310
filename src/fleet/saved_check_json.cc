// A saved `check --json` read back into a host's summary (host_summary.h): schema_version 4, and
// versions 3 (rows naming the pair's ACS redirect ports), 2 (each pair an object) and 1 (every pair
// in full), which p2pcheck no longer writes but support desks still hold.
// A reader of the document as docs/json.md describes it, not of anything the writer keeps.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/fleet/host_summary.h"
#include "p2pcheck/model/locality.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/rules/acs.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_read.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

using nlohmann::ordered_json;

namespace {

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

std::vector<Bdf> bdfs(const JsonFields& f, const char* key) {
  std::vector<Bdf> out;
  for (const std::string& text : strings(f, key)) {
    auto bdf = Bdf::parse(text);
    if (!bdf) f.fail(key, "PCI addresses");
    out.push_back(*bdf);
  }
  return out;
}

// A flow's verdict: `flows.to_device` (or `to_gpu`, its name in files before it was renamed);
// unknown when absent.
Verdict flow_verdict(const JsonFields& decision, const char* flow, const char* old_name) {
  const ordered_json* flows = decision.object("flows");
  if (!flows) return Verdict::kUnknown;
  JsonFields f(*flows, decision.file(), decision.member("flows"));
  const char* name = f.object(flow) ? flow : old_name;
  const ordered_json* one = f.object(name);
  if (!one) return Verdict::kUnknown;
  return verdict_named(JsonFields(*one, decision.file(), f.member(name)), "verdict");
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

// The schema_version of a check --json document, after its schema is checked: a newer version
// than this build writes is refused before anything else is read.
std::int64_t readable_schema_version(const JsonFields& doc) {
  if (doc.text("schema") != std::string("p2pcheck.check")) doc.fail("schema", "\"p2pcheck.check\" (check --json)");
  auto version = doc.integer("schema_version", 1, INT64_MAX);
  if (!version) doc.fail("schema_version", "an integer");
  if (*version > kCheckJsonSchemaVersion)
    throw Error(doc.file(), "schema_version " + std::to_string(*version) + " is newer than this p2pcheck reads (" +
                                std::to_string(kCheckJsonSchemaVersion) + "); use a newer p2pcheck");
  return *version;
}

FailPolicy fail_policy_named(const JsonFields& doc) {
  std::vector<std::string> words = strings(doc, "fail_on");
  std::optional<FailPolicy> policy = fail_policy_of_words(words);
  if (words.empty() || !policy) doc.fail("fail_on", "refused, stack, unknown or warn");
  return *policy;
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
  h.cause = f.text("cause").value_or("");
  return h;
}

// check --json's host_fix (report/host_fix.h) as written.
HostFix host_fix_named(const JsonFields& f) {
  HostFix fix;
  fix.acs_ports = bdfs(f, "acs_ports");
  // The vendor:device entries of its ACS list, read as the kernel reads a command line; the line's
  // text and cost are made again from ports and ids, as check makes them.
  fix.acs_ids = parse_acs_overrides(f.text("kernel_cmdline").value_or("")).redirect_disabled.ids;
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

// What fleet keeps of a decision: a `decisions` row, or a version 1 pair (the same members, with the
// pair's own besides). The devices are the caller's. `listed`: the pair's ACS redirect ports from
// version 4's `port_lists` (its row names none); nullptr where the row names them (`acs_redirect`).
HostPair decision_named(const JsonFields& d, const std::vector<Bdf>* listed = nullptr) {
  HostPair h;
  PairFacts facts;
  h.verdict = facts.verdict = verdict_named(d, "verdict");
  if (const ordered_json* level = d.object("path"))
    facts.path = verdict_named(JsonFields(*level, d.file(), d.member("path")), "verdict");
  // A token no row has (a newer p2pcheck's) blocks nothing fleet knows a cause for.
  for (const std::string& token : strings(d, "blocked_by"))
    if (auto blocker = blocker_named(token)) facts.blocked_by.push_back(*blocker);
  const ordered_json* acs_redirect = d.array("acs_redirect");
  const ordered_json* acs_unknown = d.array("acs_unknown");
  facts.acs_redirect = listed ? !listed->empty() : acs_redirect && !acs_redirect->empty();
  facts.acs_unknown = acs_unknown && !acs_unknown->empty();
  facts.host_checked = d.object("host_check") != nullptr;
  h.to_gpu = flow_verdict(d, "to_device", "to_gpu");
  h.from_gpu = flow_verdict(d, "to_storage", "from_gpu");
  h.map_type = d.text("map_type").value_or("UNKNOWN");
  h.cause = pair_cause(facts);
  if (h.cause != Cause::kNone) {
    h.rule = d.text("rule").value_or("");
    // `acs_fix` is the parameter of these ports: the ports are the data, as in the model. Version
    // 4's row speaks of the pair's listed ports: named here as the model's rule_text() names them.
    if (listed) {
      h.rule = rule_naming_ports(h.rule, *listed);
      h.acs_ports = *listed;
    } else if (d.text("acs_fix")) {
      h.acs_ports = bdfs(d, "acs_redirect");
    }
  }
  return h;
}

// The pair's devices, whichever version: `gpu` and `nvme` are in both.
void name_devices(const JsonFields& p, HostPair& h) {
  h.gpu = p.text("gpu").value_or("");
  h.nvme = p.text("nvme").value_or("");
  if (h.gpu.empty() || h.nvme.empty()) p.fail(h.gpu.empty() ? "gpu" : "nvme", "a PCI address");
}

// A version 2 record's or a version 3 or 4 decisions row's `locality.class` (docs/json.md "Locality");
// "unknown" when absent.
std::string locality_named(const JsonFields& compact) {
  const ordered_json* locality = compact.object("locality");
  if (!locality) return "unknown";
  JsonFields f(*locality, compact.file(), compact.member("locality"));
  std::string cls = f.text("class").value_or("unknown");
  for (LocalityClass c : {LocalityClass::kSameSwitch, LocalityClass::kSameRootPort, LocalityClass::kSameHostBridge,
                          LocalityClass::kSameNumaNode, LocalityClass::kAcrossNumaNodes, LocalityClass::kUnknown})
    if (cls == to_string(c)) return cls;
  f.fail("class", "a locality class (same_switch, same_root_port, ...)");
}

// An index of a version 3 or 4 record: an integer below `size`.
std::size_t index_in(const JsonFields& doc, const ordered_json& record, std::size_t i, std::size_t at, std::size_t size,
                     const char* table) {
  const ordered_json& v = record[at];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::uint64_t>() >= size)
    throw Error(doc.file(), doc.member("pairs", i) + "[" + std::to_string(at) + "]: expected an index into " + table);
  return v.get<std::size_t>();
}

// A pair of a version 2, 3 or 4 document: the `decisions` row it refers to, its devices, (version
// 4) its two sides' ACS redirect port lists, and (version 2) its own locality; a row carries it in
// versions 3 and 4.
struct IndexedPair {
  std::size_t decision = 0;
  std::string gpu, nvme;
  std::string locality;                       // version 2
  std::size_t gpu_ports = 0, nvme_ports = 0;  // version 4: indexes into port_lists
};

// The pairs' shared parts, read once for the millions of records that refer to them.
struct IndexedTables {
  const ordered_json* decisions = nullptr;
  std::vector<std::string> devices;          // versions 3 and 4
  std::vector<std::vector<Bdf>> port_lists;  // version 4
  std::map<std::string, std::string> nvme_names;
};

// Version 4's `port_lists`: arrays of PCI addresses.
std::vector<std::vector<Bdf>> port_lists_in(const JsonFields& doc) {
  const ordered_json* lists = doc.array("port_lists");
  if (!lists) doc.fail("port_lists", "an array (schema_version 4)");
  std::vector<std::vector<Bdf>> out;
  out.reserve(lists->size());
  for (const ordered_json& list : *lists) {
    if (!list.is_array()) doc.fail("port_lists", "an array of arrays of PCI addresses");
    std::vector<Bdf>& ports = out.emplace_back();
    for (const ordered_json& port : list) {
      std::optional<Bdf> bdf = port.is_string() ? Bdf::parse(port.get<std::string>()) : std::nullopt;
      if (!bdf) doc.fail("port_lists", "an array of arrays of PCI addresses");
      ports.push_back(*bdf);
    }
  }
  return out;
}

IndexedPair version_2_record(const JsonFields& doc, const IndexedTables& t, std::size_t i) {
  JsonFields compact(doc.array("pairs")->at(i), doc.file(), doc.member("pairs", i));
  auto at = compact.integer("decision", 0, static_cast<std::int64_t>(t.decisions->size()) - 1);
  if (!at) compact.fail("decision", "an index into decisions");
  HostPair devices;
  name_devices(compact, devices);
  return {static_cast<std::size_t>(*at), std::move(devices.gpu), std::move(devices.nvme), locality_named(compact)};
}

// Version 3's [gpu, nvme, decision, distance], and version 4's with its [..., gpu_ports, nvme_ports].
IndexedPair version_3_record(const JsonFields& doc, const IndexedTables& t, std::size_t i, std::int64_t version) {
  const ordered_json& record = doc.array("pairs")->at(i);
  if (!record.is_array() || record.size() != (version >= 4 ? 6u : 4u))
    throw Error(doc.file(), doc.member("pairs", i) + ": expected [gpu, nvme, decision, distance" +
                                (version >= 4 ? ", gpu_ports, nvme_ports]" : "]"));
  IndexedPair p{index_in(doc, record, i, 2, t.decisions->size(), "decisions"),
                t.devices[index_in(doc, record, i, 0, t.devices.size(), "devices")],
                t.devices[index_in(doc, record, i, 1, t.devices.size(), "devices")], ""};
  if (version >= 4) {
    p.gpu_ports = index_in(doc, record, i, 4, t.port_lists.size(), "port_lists");
    p.nvme_ports = index_in(doc, record, i, 5, t.port_lists.size(), "port_lists");
  }
  return p;
}

// A `decisions` row as the pairs that refer to it (version 4: with these ACS port lists) share it.
HostPair decision_row(const JsonFields& doc, const IndexedTables& t, const IndexedPair& p, std::int64_t version) {
  const std::size_t k = p.decision;
  JsonFields decision((*t.decisions)[k], doc.file(), doc.member("decisions", k));
  // An older p2pcheck wrote {acs_redirect} placeholders into shared rows: not a fix to show.
  if (version == 2 && !(*t.decisions)[k].contains("common_bridge"))
    throw Error(doc.file(),
                "a schema_version 2 check --json from an older p2pcheck (its decisions have no "
                "common_bridge): run check --json again with this version");
  std::vector<Bdf> ports;
  if (version >= 4) {
    ports = t.port_lists[p.gpu_ports];
    ports.insert(ports.end(), t.port_lists[p.nvme_ports].begin(), t.port_lists[p.nvme_ports].end());
  }
  HostPair h = decision_named(decision, version >= 4 ? &ports : nullptr);
  if (version >= 3) h.locality = locality_named(decision);
  return h;
}

// Versions 2, 3 and 4: each pair refers to a row of `decisions`, each row read once for each set of
// ACS redirect ports that pairs cross with it (a fabric has millions of pairs and a few thousand
// rows); the NVMe's name is in the top-level `nvme` table. Version 2's pair is an object {gpu, nvme,
// decision, locality}; version 3's [gpu, nvme, decision, distance], its devices indexes into
// `devices` and its locality in the row; version 4's adds [..., gpu_ports, nvme_ports], indexes
// into `port_lists`.
void read_indexed_pairs(const JsonFields& doc, std::int64_t version, HostSummary& s) {
  IndexedTables t;
  t.decisions = doc.array("decisions");
  if (!t.decisions) doc.fail("decisions", "an array (schema_version " + std::to_string(version) + ")");
  if (version >= 3) {
    t.devices = strings(doc, "devices");
    for (const std::string& device : t.devices)
      if (device.empty()) doc.fail("devices", "an array of PCI addresses");
  }
  if (version >= 4) t.port_lists = port_lists_in(doc);
  t.nvme_names = nvme_names_in(doc);
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, HostPair> rows;  // (decision, gpu_ports, nvme_ports)
  const std::size_t count = doc.array("pairs")->size();
  for (std::size_t i = 0; i < count; ++i) {
    IndexedPair p = version >= 3 ? version_3_record(doc, t, i, version) : version_2_record(doc, t, i);
    auto row = rows.find({p.decision, p.gpu_ports, p.nvme_ports});
    if (row == rows.end())
      row = rows.emplace(std::tuple(p.decision, p.gpu_ports, p.nvme_ports), decision_row(doc, t, p, version)).first;
    HostPair h = row->second;
    h.gpu = std::move(p.gpu);
    h.nvme = std::move(p.nvme);
    if (version == 2) h.locality = std::move(p.locality);
    if (auto name = t.nvme_names.find(h.nvme); name != t.nvme_names.end()) h.nvme_name = name->second;
    s.pairs.push_back(std::move(h));
  }
}

// Version 1: every pair carries its whole decision and its NVMe's name.
void read_version_1_pairs(const JsonFields& doc, const ordered_json& pairs, HostSummary& s) {
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    JsonFields p(pairs[i], doc.file(), doc.member("pairs", i));
    HostPair h = decision_named(p);
    name_devices(p, h);
    h.nvme_name = p.text("nvme_name").value_or("");
    s.pairs.push_back(std::move(h));
  }
}

}  // namespace

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
  if (const ordered_json* pairs = doc.array("pairs")) {
    if (version >= 2)
      read_indexed_pairs(doc, version, s);
    else
      read_version_1_pairs(doc, *pairs, s);
  } else if (version >= 2 && !doc.array("decisions")) {
    doc.fail("decisions", "an array (schema_version 2 and later)");
  }
  if (const ordered_json* fix = doc.object("host_fix")) s.fix = host_fix_named(JsonFields(*fix, file, "host_fix"));
  s.host = host_name_for(nullptr, doc.object("identity"), file);
  return s;
}

}  // namespace p2pcheck
