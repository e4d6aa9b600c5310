#include "p2pcheck/checks/recorded.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_read.h"

namespace p2pcheck {
namespace {

using nlohmann::ordered_json;

// Every member is read by type (json_read.h): a string where a number belongs is an Error naming
// the file and the member, never nlohmann's type_error.
std::optional<ordered_json> read_document(Source& source, const char* path, const char* schema) {
  FileRead r = source.read(path);
  if (r.status == ReadStatus::kMissing) return std::nullopt;
  if (!r.ok()) throw Error(path, "unreadable (" + r.error + "); expected the " + std::string(schema) + " document");
  auto j = parse_outside_json(r.bytes, path);
  if (!j || !j->is_object() || JsonFields(*j, path).text("schema") != schema)
    throw Error(path, std::string("not a ") + schema + " JSON document");
  return j;
}

std::string text(const JsonFields& j, const char* key) { return j.text(key).value_or(""); }

Bdf bdf_field(const JsonFields& j, const char* key) {
  auto b = Bdf::parse(text(j, key));
  if (!b) j.fail(key, "a PCI address such as 0000:41:00.0");
  return *b;
}

MapType map_type_named(const std::string& name) {
  for (MapType t : {MapType::kBusAddr, MapType::kThruHostBridge, MapType::kNotSupported})
    if (name == to_string(t)) return t;
  return MapType::kUnknown;
}

const ordered_json& array_field(const JsonFields& j, const char* key) {
  static const ordered_json empty = ordered_json::array();
  const ordered_json* a = j.array(key);
  return a ? *a : empty;
}

std::string flow_line(const JsonFields& pair) {
  std::string out = text(pair, "gpu") + " -> " + text(pair, "nvme");
  std::string name = text(pair, "nvme_name");
  if (!name.empty()) out += " (" + name + ")";
  std::string status = text(pair, "status");
  if (status != "ran") {
    std::string why = text(pair, status == "refused" ? "refusal" : "problem");
    return out + ": " + status + (why.empty() ? "" : " — " + why);
  }
  out += ":";
  std::string sep = " ";
  const ordered_json& directions = array_field(pair, "directions");
  for (size_t i = 0; i < directions.size(); ++i) {
    JsonFields d(directions[i], pair.file(), pair.member("directions", i));
    out += sep + text(d, "flow") + " " + text(d, "outcome");
    std::string err = text(d, "errno");
    if (!err.empty()) out += " (" + err + ")";
    sep = ", ";
  }
  std::string engine = text(pair, "engine");
  if (!engine.empty()) out += "; engine " + engine;
  return out;
}

}  // namespace

std::optional<RecordedKernelAnswers> read_recorded_kernel_answers(Source& source) {
  auto doc = read_document(source, kRecordedKmodPath, "p2pcheck.kmod");
  if (!doc) return std::nullopt;
  JsonFields j(*doc, kRecordedKmodPath);
  RecordedKernelAnswers out;
  static const ordered_json no_module = ordered_json::object();
  const ordered_json* module = j.object("module");
  JsonFields m(module ? *module : no_module, kRecordedKmodPath, "module");
  out.info.api_version = static_cast<unsigned>(m.integer("api_version", 0, UINT32_MAX).value_or(0));
  out.info.p2pdma = m.flag("p2pdma").value_or(false);
  out.info.provider_driver = m.flag("provider_driver").value_or(false);
  out.info.module_version = text(m, "module_version");
  out.info.kernel_release = text(m, "kernel_release");
  const ordered_json& verdicts = array_field(j, "verdicts");
  for (size_t i = 0; i < verdicts.size(); ++i) {
    JsonFields v(verdicts[i], kRecordedKmodPath, j.member("verdicts", i));
    KernelVerdict k;
    auto distance = v.integer("distance", INT32_MIN, INT32_MAX);
    if (!distance) v.fail("distance", "an integer (the kernel's distance)");
    k.distance = static_cast<int>(*distance);
    k.map_type = map_type_named(text(v, "map_type"));
    k.map_note = text(v, "map_note");
    k.provider_has_p2pmem = v.flag("provider_has_p2pmem").value_or(false);
    k.provider_driver = text(v, "provider_driver");
    k.client_driver = text(v, "client_driver");
    out.verdicts[{bdf_field(v, "provider"), bdf_field(v, "client")}] = k;
  }
  const ordered_json& failures = array_field(j, "failures");
  for (size_t i = 0; i < failures.size(); ++i) {
    JsonFields f(failures[i], kRecordedKmodPath, j.member("failures", i));
    out.failures[{bdf_field(f, "provider"), bdf_field(f, "client")}] = text(f, "error");
  }
  return out;
}

std::optional<RecordedVerify> read_recorded_verify(Source& source) {
  auto doc = read_document(source, kRecordedVerifyPath, "p2pcheck.verify");
  if (!doc) return std::nullopt;
  JsonFields j(*doc, kRecordedVerifyPath);
  RecordedVerify out;
  out.finished_at = text(j, "finished_at");
  out.summary = text(j, "summary");
  const ordered_json& pairs = array_field(j, "pairs");
  for (size_t i = 0; i < pairs.size(); ++i) {
    JsonFields p(pairs[i], kRecordedVerifyPath, j.member("pairs", i));
    RecordedVerifyPair pair;
    pair.gpu = Bdf::parse(text(p, "gpu"));
    pair.nvme = Bdf::parse(text(p, "nvme"));
    pair.status = text(p, "status");
    pair.directions_broken = pairs[i].contains("directions") && !pairs[i]["directions"].is_array();
    if (pair.directions_broken) {
      out.pairs.push_back(std::move(pair));
      continue;
    }
    pair.flow = flow_line(p);
    const ordered_json& directions = array_field(p, "directions");
    for (size_t d = 0; d < directions.size(); ++d)
      pair.outcomes.push_back(
          text(JsonFields(directions[d], kRecordedVerifyPath, p.member("directions", d)), "outcome"));
    out.pairs.push_back(std::move(pair));
  }
  return out;
}

Finding check_recorded_verify(const RecordedVerify& recorded, const PairList& pairs) {
  Finding f;
  f.id = "verify.recorded";
  std::string intro = "p2pcheck verify on the captured machine" +
                      (recorded.finished_at.empty() ? std::string() : " (" + recorded.finished_at + ")");
  int ran = 0, failed = 0, other = 0;
  for (const RecordedVerifyPair& p : recorded.pairs) {
    bool checked = false;
    for (std::size_t i = 0; i < pairs.size(); ++i)
      checked |= p.gpu && p.nvme && pairs.pair(i).gpu == *p.gpu && pairs.pair(i).nvme == *p.nvme;
    if (!checked || p.status == "skipped") {
      ++other;
      continue;
    }
    if (p.directions_broken) throw Error(kRecordedVerifyPath, "\"directions\": expected an array");
    f.evidence.push_back({kRecordedVerifyPath, p.flow});
    if (p.status != "ran") continue;
    for (const std::string& outcome : p.outcomes) {
      if (outcome == "not_run") continue;
      ++ran;
      failed += outcome != "passed";
    }
  }
  if (f.evidence.empty()) {
    f.level = Level::kInfo;
    f.message = intro + " tested none of the pairs checked here (" + std::to_string(other) + " other pair(s))";
    f.evidence.push_back({kRecordedVerifyPath, recorded.summary});
  } else if (ran == 0) {
    f.level = Level::kInfo;
    f.message = intro + " moved no data for these pairs: " + recorded.summary;
  } else if (failed) {
    f.level = Level::kFail;
    f.message = intro + ": " + std::to_string(failed) + " of " + std::to_string(ran) +
                " transfer direction(s) did not pass — real P2P DMA failed on that machine";
    f.fix = "the reasons per direction are in the evidence; `p2pcheck verify --json` on that machine gives the details";
  } else {
    f.level = Level::kPass;
    f.message = intro + ": all " + std::to_string(ran) + " transfer direction(s) passed with the data checked";
  }
  return f;
}

}  // namespace p2pcheck
