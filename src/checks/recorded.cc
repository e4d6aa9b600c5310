#include "p2pcheck/checks/recorded.h"

#include <nlohmann/json.hpp>

#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

using nlohmann::json;

std::optional<json> read_document(Source& source, const char* path, const char* schema) {
  FileRead r = source.read(path);
  if (r.status == ReadStatus::kMissing) return std::nullopt;
  if (!r.ok()) throw Error(path, "unreadable (" + r.error + "); expected the " + std::string(schema) + " document");
  json j = json::parse(r.bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != schema)
    throw Error(path, std::string("not a ") + schema + " JSON document");
  return j;
}

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Bdf bdf_field(const json& j, const char* key, const char* path) {
  auto b = Bdf::parse(text(j, key));
  if (!b)
    throw Error(path, std::string("\"") + key + "\": expected a PCI address such as 0000:41:00.0, found " +
                          (j.contains(key) ? j[key].dump() : "nothing"));
  return *b;
}

MapType map_type_named(const std::string& name) {
  for (MapType t : {MapType::kBusAddr, MapType::kThruHostBridge, MapType::kNotSupported})
    if (name == to_string(t)) return t;
  return MapType::kUnknown;
}

const json& array_field(const json& j, const char* key, const char* path) {
  static const json empty = json::array();
  if (!j.contains(key)) return empty;
  if (!j[key].is_array()) throw Error(path, std::string("\"") + key + "\": expected an array");
  return j[key];
}

std::string flow_line(const json& pair) {
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
  for (const auto& d : array_field(pair, "directions", kRecordedVerifyPath)) {
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
  auto j = read_document(source, kRecordedKmodPath, "p2pcheck.kmod");
  if (!j) return std::nullopt;
  RecordedKernelAnswers out;
  const json& m = j->contains("module") && (*j)["module"].is_object() ? (*j)["module"] : json::object();
  out.info.api_version = m.value("api_version", 0u);
  out.info.p2pdma = m.value("p2pdma", false);
  out.info.provider_driver = m.value("provider_driver", false);
  out.info.module_version = text(m, "module_version");
  out.info.kernel_release = text(m, "kernel_release");
  for (const auto& v : array_field(*j, "verdicts", kRecordedKmodPath)) {
    if (!v.is_object() || !v.contains("distance") || !v["distance"].is_number_integer())
      throw Error(kRecordedKmodPath, "verdicts[]: expected {provider, client, distance, map_type, ...}");
    KernelVerdict k;
    k.distance = v["distance"].get<int>();
    k.map_type = map_type_named(text(v, "map_type"));
    k.map_note = text(v, "map_note");
    k.provider_has_p2pmem = v.value("provider_has_p2pmem", false);
    k.provider_driver = text(v, "provider_driver");
    k.client_driver = text(v, "client_driver");
    out.verdicts[{bdf_field(v, "provider", kRecordedKmodPath), bdf_field(v, "client", kRecordedKmodPath)}] = k;
  }
  for (const auto& f : array_field(*j, "failures", kRecordedKmodPath))
    out.failures[{bdf_field(f, "provider", kRecordedKmodPath), bdf_field(f, "client", kRecordedKmodPath)}] =
        text(f, "error");
  return out;
}

std::optional<RecordedVerify> read_recorded_verify(Source& source) {
  auto j = read_document(source, kRecordedVerifyPath, "p2pcheck.verify");
  if (!j) return std::nullopt;
  RecordedVerify out;
  out.finished_at = text(*j, "finished_at");
  out.summary = text(*j, "summary");
  for (const auto& p : array_field(*j, "pairs", kRecordedVerifyPath)) {
    if (!p.is_object()) throw Error(kRecordedVerifyPath, "pairs[]: expected objects");
    RecordedVerifyPair pair;
    pair.gpu = Bdf::parse(text(p, "gpu"));
    pair.nvme = Bdf::parse(text(p, "nvme"));
    pair.status = text(p, "status");
    pair.directions_broken = p.contains("directions") && !p["directions"].is_array();
    if (pair.directions_broken) {
      out.pairs.push_back(std::move(pair));
      continue;
    }
    pair.flow = flow_line(p);
    for (const auto& d : array_field(p, "directions", kRecordedVerifyPath)) pair.outcomes.push_back(text(d, "outcome"));
    out.pairs.push_back(std::move(pair));
  }
  return out;
}

Finding check_recorded_verify(const RecordedVerify& recorded, const std::vector<PairDecision>& pairs) {
  Finding f;
  f.id = "verify.recorded";
  std::string intro = "p2pcheck verify on the captured machine" +
                      (recorded.finished_at.empty() ? std::string() : " (" + recorded.finished_at + ")");
  int ran = 0, failed = 0, other = 0;
  for (const RecordedVerifyPair& p : recorded.pairs) {
    bool checked = false;
    for (const auto& d : pairs) checked |= p.gpu && p.nvme && d.path.pair.gpu == *p.gpu && d.path.pair.nvme == *p.nvme;
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
