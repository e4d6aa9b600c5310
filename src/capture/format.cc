// The capture format as replays read it (format.h).
#include "p2pcheck/capture/format.h"

#include <ctime>

#include "p2pcheck/source/error.h"

namespace p2pcheck {

using nlohmann::ordered_json;

const char* read_status_name(ReadStatus s) {
  switch (s) {
    case ReadStatus::kOk: return "ok";
    case ReadStatus::kMissing: return "missing";
    case ReadStatus::kDenied: return "denied";
    case ReadStatus::kFailed: return "failed";
  }
  return "failed";
}

std::string iso_time(std::time_t t) {
  char buf[32];
  struct tm tm;
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<std::time_t> parse_iso_time(const std::string& text) {
  struct tm tm = {};
  if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return std::nullopt;
  return timegm(&tm);
}

std::optional<CaptureInfo> read_capture_info(Source& source) {
  FileRead r = source.read(kManifestPath);
  if (!r.ok()) return std::nullopt;
  auto j = ordered_json::parse(r.bytes, nullptr, false);
  if (j.is_discarded()) {
    // Only complain about a manifest that claims to be ours; a root may hold its own manifest.json.
    if (r.bytes.find(kCaptureSchema) != std::string::npos)
      throw Error(kManifestPath, "not valid JSON; expected the p2pcheck.capture manifest");
    return std::nullopt;
  }
  if (!j.is_object() || j.value("schema", "") != kCaptureSchema) return std::nullopt;
  if (!j["schema_version"].is_number_integer() || j["schema_version"].get<int>() > kCaptureSchemaVersion)
    throw Error(kManifestPath, "schema_version " + j["schema_version"].dump() + " is newer than this p2pcheck reads (" +
                                   std::to_string(kCaptureSchemaVersion) + "); use a newer p2pcheck");
  CaptureInfo info;
  info.format = j.value("format", "capture");
  if (j.contains("notes") && j["notes"].is_array())
    for (const auto& n : j["notes"])
      if (n.is_string()) info.notes.push_back(n.get<std::string>());
  info.manifest = std::move(j);
  return info;
}

std::map<std::string, FileRead> capture_failures(const nlohmann::json& m) {
  std::map<std::string, FileRead> failures;
  if (m.contains("unreadable") && m["unreadable"].is_object())
    for (const auto& [path, why] : m["unreadable"].items()) {
      if (!why.is_object()) throw Error(kManifestPath, "unreadable." + path + ": expected {status, error}");
      std::string status = why.value("status", "failed");
      failures[path] = FileRead{status == "denied" ? ReadStatus::kDenied : ReadStatus::kFailed, "",
                                why.value("error", "unreadable")};
    }
  if (m.contains("uncaptured") && m["uncaptured"].is_array())
    for (const auto& path : m["uncaptured"])
      if (path.is_string()) failures[path.get<std::string>()] = FileRead{ReadStatus::kFailed, "", kNotCaptured};
  return failures;
}

std::unique_ptr<Source> with_capture_manifest(std::unique_ptr<Source> source) {
  if (auto info = read_capture_info(*source)) source->set_recorded_failures(capture_failures(info->manifest));
  return source;
}

ordered_json capture_summary_json(const CaptureInfo& info) {
  const auto& m = info.manifest;
  ordered_json j;
  j["format"] = info.format;
  for (const char* key : {"tool_version", "captured_at", "source", "as_root", "redacted"})
    if (m.contains(key)) j[key] = m[key];
  j["notes"] = info.notes;
  return j;
}

}  // namespace p2pcheck
