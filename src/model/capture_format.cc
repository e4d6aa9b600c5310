// The capture format as replays read it (capture_format.h).
#include "p2pcheck/model/capture_format.h"

#include <algorithm>
#include <cstdint>
#include <ctime>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_read.h"

namespace p2pcheck {

using nlohmann::ordered_json;

const char* read_status_name(ReadStatus s) {
  switch (s) {
    case ReadStatus::kOk: return "ok";
    case ReadStatus::kMissing: return "missing";
    case ReadStatus::kDenied: return "denied";
    case ReadStatus::kFailed: return "failed";
    case ReadStatus::kNotCarried: return "not_carried";
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

namespace {

// An entry name of an "uncaptured" directory: what a listing could show.
bool entry_name(const nlohmann::ordered_json& name) {
  if (!name.is_string()) return false;
  const auto& text = name.get_ref<const std::string&>();
  return !text.empty() && text != "." && text != ".." && text.find('/') == std::string::npos &&
         text.size() < kMaxPathBytes;
}

// The manifest's unreadable and uncaptured files as the failures their reads must replay. Throws
// Error naming the file and the member when they are not what p2pcheck writes: "uncaptured" is an
// array of paths up to schema 2, an array of {"dir", "names"} from 3.
FailureMap capture_failures(const JsonFields& m, std::int64_t schema_version) {
  FailureMap failures;
  if (const auto* unreadable = m.object("unreadable"))
    for (const auto& [path, why] : unreadable->items()) {
      JsonFields entry(why, m.file(), m.member("unreadable") + "." + path);
      std::string status = entry.text("status").value_or("failed");
      failures[path] = FileRead{status == "denied" ? ReadStatus::kDenied : ReadStatus::kFailed, "",
                                entry.text("error").value_or("unreadable")};
    }
  const FileRead not_captured{ReadStatus::kFailed, "", kNotCaptured};
  if (schema_version < 3) {
    if (const auto* uncaptured = m.array("uncaptured"))
      for (const auto& path : *uncaptured) {
        if (!path.is_string()) m.fail("uncaptured", "an array of paths");
        failures[path.get<std::string>()] = not_captured;
      }
    return failures;
  }
  if (const auto* uncaptured = m.array("uncaptured"))
    for (std::size_t i = 0; i < uncaptured->size(); ++i) {
      JsonFields group((*uncaptured)[i], m.file(), m.member("uncaptured", i));
      std::optional<std::string> dir = group.text("dir");
      if (!dir || dir->empty() || dir->front() != '/' || dir->size() > kMaxPathBytes)
        group.fail("dir", "an absolute directory");
      const auto* names = group.array("names");
      if (!names || !std::all_of(names->begin(), names->end(), entry_name))
        group.fail("names", "an array of entry names (no '/', '.' or '..')");
      std::string base = *dir == "/" ? "" : *dir;
      for (const auto& name : *names) failures[base + "/" + name.get_ref<const std::string&>()] = not_captured;
    }
  return failures;
}

// "not_carried": {"format": "lspci", "phrase": "not in this lspci output", "paths": [...]}, as
// SysfsBuilder and capture write it. Patterns come from a dump: each one checked and counted.
NotCarried read_not_carried(const JsonFields& m) {
  NotCarried out;
  const auto* member = m.object("not_carried");
  if (!member) return out;
  JsonFields nc(*member, m.file(), m.member("not_carried"));
  out.format = nc.text("format").value_or("");
  out.phrase = nc.text("phrase").value_or("");
  if (out.format.empty() || out.phrase.empty()) nc.fail("format", "the format and phrase of a not_carried declaration");
  const auto* paths = nc.array("paths");
  if (!paths) nc.fail("paths", "an array of path patterns");
  if (paths->size() > kMaxNotCarriedPatterns)
    nc.fail("paths", "at most " + std::to_string(kMaxNotCarriedPatterns) + " patterns");
  for (const auto& p : *paths) {
    if (!p.is_string() || !valid_not_carried_pattern(p.get<std::string>()))
      nc.fail("paths", "absolute path patterns with at most one \"**\"");
    out.paths.push_back(p.get<std::string>());
  }
  return out;
}

// "selection": {"gpu": [...], "nvme": [...]}, as collect_capture writes it; each side optional.
PairSelection read_selection(const JsonFields& m) {
  PairSelection out;
  const auto* member = m.object("selection");
  if (!member) return out;
  JsonFields sel(*member, m.file(), m.member("selection"));
  for (auto [key, side] : {std::pair{"gpu", &out.gpu}, std::pair{"nvme", &out.nvme}}) {
    const auto* values = sel.array(key);
    if (!values) continue;
    if (values->size() > kMaxSelectors) sel.fail(key, "at most " + std::to_string(kMaxSelectors) + " selectors");
    for (const auto& v : *values) {
      // As on the command line: a BDF, nvme0, nvme0n1 or /dev/nvme0n1, never empty.
      if (!v.is_string() || v.get_ref<const std::string&>().empty() || v.get_ref<const std::string&>().size() > 256)
        sel.fail(key, "an array of device selectors (as --gpu/--nvme take)");
      side->push_back(v.get<std::string>());
    }
  }
  return out;
}

// "input_note_groups": [{"kind", "count", "subjects", "first"}], as SysfsBuilder::finish writes it.
std::vector<InputNoteGroup> read_input_note_groups(const JsonFields& m) {
  std::vector<InputNoteGroup> out;
  const auto* groups = m.array("input_note_groups");
  if (!groups) return out;
  if (groups->size() > kMaxInputNoteGroups)
    m.fail("input_note_groups", "at most " + std::to_string(kMaxInputNoteGroups) + " groups");
  for (std::size_t i = 0; i < groups->size(); ++i) {
    JsonFields g((*groups)[i], m.file(), m.member("input_note_groups", i));
    InputNoteGroup group;
    group.kind = g.text("kind").value_or("");
    group.first = g.text("first").value_or("");
    group.count = static_cast<std::size_t>(g.integer("count", 1, INT32_MAX).value_or(0));
    const auto* subjects = g.array("subjects");
    if (!group.count || !subjects || subjects->size() > kMaxGroupSubjects || subjects->size() > group.count)
      g.fail("count", "a count of records and at most that many subjects");
    for (const auto& s : *subjects) {
      if (!s.is_string()) g.fail("subjects", "an array of strings");
      group.subjects.push_back(s.get<std::string>());
    }
    out.push_back(std::move(group));
  }
  return out;
}

}  // namespace

nlohmann::ordered_json input_note_groups_json(const std::vector<InputNoteGroup>& groups) {
  if (groups.empty()) return nullptr;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& g : groups)
    out.push_back({{"kind", g.kind}, {"count", g.count}, {"subjects", g.subjects}, {"first", g.first}});
  return out;
}

nlohmann::ordered_json selection_json(const PairSelection& selection) {
  if (selection.gpu.empty() && selection.nvme.empty()) return nullptr;
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!selection.gpu.empty()) j["gpu"] = selection.gpu;
  if (!selection.nvme.empty()) j["nvme"] = selection.nvme;
  return j;
}

nlohmann::ordered_json not_carried_json(const NotCarried& not_carried) {
  if (not_carried.empty()) return nullptr;
  return {{"format", not_carried.format}, {"phrase", not_carried.phrase}, {"paths", not_carried.paths}};
}

std::optional<CaptureInfo> read_capture_info(Source& source) {
  FileRead r = source.read(kManifestPath);
  if (!r.ok()) return std::nullopt;
  return parse_capture_manifest(r.bytes, kManifestPath);
}

std::optional<CaptureInfo> parse_capture_manifest(const std::string& bytes, const std::string& file) {
  auto j = parse_outside_json(bytes, file);
  if (!j) {
    // Only complain about a manifest that claims to be ours; a root may hold its own manifest.json.
    if (bytes.find(kCaptureSchema) != std::string::npos)
      throw Error(file, "not valid JSON; expected the p2pcheck.capture manifest");
    return std::nullopt;
  }
  if (!j->is_object()) return std::nullopt;
  JsonFields m(*j, file);
  if (m.text("schema") != kCaptureSchema) return std::nullopt;
  auto version = m.integer("schema_version", 1, INT64_MAX);
  if (!version) m.fail("schema_version", "an integer");
  if (*version > kCaptureSchemaVersion)
    throw Error(file, "schema_version " + std::to_string(*version) + " is newer than this p2pcheck reads (" +
                          std::to_string(kCaptureSchemaVersion) + "); use a newer p2pcheck");
  CaptureInfo info;
  info.format = m.text("format").value_or("capture");
  if (const auto* notes = m.array("notes"))
    for (const auto& n : *notes) {
      if (!n.is_string()) m.fail("notes", "an array of strings");
      info.notes.push_back(n.get<std::string>());
    }
  if (const auto* skipped = m.array("input_notes"))
    for (const auto& n : *skipped) {
      if (!n.is_string()) m.fail("input_notes", "an array of strings");
      info.input_notes.push_back(n.get<std::string>());
    }
  info.input_note_groups = read_input_note_groups(m);
  // Read here so a replay fails at once, naming the member, rather than when they are applied.
  info.failures = capture_failures(m, *version);
  info.not_carried = read_not_carried(m);
  info.selection = read_selection(m);
  info.manifest = std::move(*j);
  return info;
}

std::unique_ptr<Source> with_capture_manifest(std::unique_ptr<Source> source) {
  if (auto info = read_capture_info(*source)) {
    source->set_recorded_failures(info->failures);
    if (!info->not_carried.empty()) source->set_not_carried(info->not_carried);
  }
  return source;
}

ordered_json capture_summary_json(const CaptureInfo& info) {
  const auto& m = info.manifest;
  ordered_json j;
  j["format"] = info.format;
  for (const char* key : {"tool_version", "captured_at", "source", "as_root", "redacted"})
    if (m.contains(key)) j[key] = m[key];
  j["notes"] = info.notes;
  if (!info.input_notes.empty()) j["input_notes"] = info.input_notes;  // only where records were left out
  if (auto selection = selection_json(info.selection); !selection.is_null()) j["selection"] = selection;
  return j;
}

}  // namespace p2pcheck
