// watch's recordings, the reader (watch_recording.h): the file is hostile. Every member is read by
// type, every enum word must be one the writer writes, every count and string is bounded (names by
// the probe's own field sizes), and each Error names the file, the member and what was expected.
#include <cmath>
#include <iterator>

#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/json_read.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/watch/watch_json.h"
#include "p2pcheck/watch/watch_recording.h"
#include "watch_internal.h"
#include "watch_shared.h"  // src/live/bpf/: the probe's field sizes: a longer name was not made by it

namespace p2pcheck {

using json = nlohmann::ordered_json;

namespace {

// Bounds of what the writer writes: the probe's names hold their field less the NUL, in characters
// (json_text() writes a byte that is not UTF-8 as one U+FFFD, so characters, not bytes, are kept).
constexpr std::size_t kNameChars = WATCH_NAME_LEN - 1, kDiskChars = WATCH_DISK_LEN - 1, kCommChars = WATCH_COMM_LEN - 1;
constexpr std::size_t kReleaseChars = 64;  // __NEW_UTS_LEN
constexpr std::size_t kWordChars = 256;    // a program, hook or mode name
constexpr std::size_t kTextChars = 4096;   // an error or reason
constexpr std::size_t kMaxPrograms = 64, kMaxProblems = 64;

std::size_t characters(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

std::string text(const JsonFields& j, const char* key, std::size_t max_chars) {
  std::string s = j.text(key).value_or("");
  if (characters(s) > max_chars) j.fail(key, "a string of at most " + std::to_string(max_chars) + " characters");
  return s;
}

std::optional<std::string> optional_text(const JsonFields& j, const char* key, std::size_t max_chars) {
  if (!j.text(key)) return std::nullopt;
  return text(j, key, max_chars);
}

std::uint64_t count(const JsonFields& j, const char* key) {
  return static_cast<std::uint64_t>(j.integer(key, 0, INT64_MAX).value_or(0));
}

const json& array(const JsonFields& j, const char* key, std::size_t max, bool required) {
  static const json empty = json::array();
  const json* a = j.array(key);
  if (!a && required) j.fail(key, "an array");
  if (a && a->size() > max) j.fail(key, "an array of at most " + std::to_string(max) + " elements");
  return a ? *a : empty;
}

const json& object(const JsonFields& j, const char* key, bool required) {
  static const json empty = json::object();
  const json* o = j.object(key);
  if (!o && required) j.fail(key, "an object");
  return o ? *o : empty;
}

// Declared before word() so that its lookup finds it (ReadStatus has no to_string of its own).
const char* to_string(ReadStatus s) { return read_status_name(s); }

// One of `values` by its to_string() word; anything else (or nothing) is an Error listing them.
template <typename E, std::size_t N>
E word(const JsonFields& j, const char* key, const E (&values)[N]) {
  std::optional<std::string> w = j.text(key);
  for (E v : values)
    if (w && *w == to_string(v)) return v;
  std::vector<std::string> names;
  for (E v : values) names.push_back(std::string("\"") + to_string(v) + "\"");
  j.fail(key, "one of " + join(names, ", "));
}

constexpr WatchPath kPaths[] = {WatchPath::kHost, WatchPath::kBusAddr, WatchPath::kThruHostBridge, WatchPath::kRefused,
                                WatchPath::kStackRefused};
constexpr WatchDir kDirs[] = {WatchDir::kToDevice, WatchDir::kToStorage, WatchDir::kOther};
constexpr DecisionHook kDecisions[] = {DecisionHook::kNone, DecisionHook::kMapSegment, DecisionHook::kUpdateState,
                                       DecisionHook::kIterStart};
constexpr ProviderLayout kLayouts[] = {ProviderLayout::kUnknown, ProviderLayout::kPagemapProvider,
                                       ProviderLayout::kMemOwner};
constexpr ReadStatus kStatuses[] = {ReadStatus::kOk, ReadStatus::kMissing, ReadStatus::kDenied, ReadStatus::kFailed,
                                    ReadStatus::kNotCarried};

WatchDir direction(const JsonFields& j) {
  std::optional<std::string> w = j.text("direction");
  for (WatchDir d : kDirs)
    if (w && *w == watch_direction_key(d)) return d;
  j.fail("direction", "one of \"to_device\", \"to_storage\", \"other\"");
}

WatchRow read_row(const JsonFields& j) {
  WatchRow r;
  r.provider = text(j, "provider", kNameChars);
  r.client = text(j, "client", kNameChars);
  r.disk = text(j, "disk", kDiskChars);
  r.comm = text(j, "comm", kCommChars);
  r.tgid = static_cast<std::uint32_t>(j.integer("tgid", 0, UINT32_MAX).value_or(0));
  r.path = word(j, "path", kPaths);
  r.dir = direction(j);
  r.requests = count(j, "requests");
  r.bytes = count(j, "bytes");
  r.segments = count(j, "segments");
  r.errors = count(j, "errors");
  r.error_bytes = count(j, "error_bytes");
  r.last_status = static_cast<std::uint32_t>(j.integer("last_status", 0, UINT32_MAX).value_or(0));
  // Absent in recordings made before watch counted requeues; their hooks then lack watch_rq_requeue,
  // so the report says requeues were not counted rather than none.
  r.requeues = count(j, "requeues");
  // Absent in recordings made before watch followed a command's process tree: those name no command.
  r.in_tree = j.flag("in_tree").value_or(false);
  return r;
}

double seconds(const JsonFields& j, const json& snapshot) {
  auto it = snapshot.find("seconds");
  if (it == snapshot.end() || !it->is_number()) j.fail("seconds", "a number of seconds");
  double s = it->get<double>();
  if (!std::isfinite(s) || s < 0 || s > 1e9) j.fail("seconds", "a number of seconds from 0 to 1e9");
  return s;
}

WatchSnapshot read_snapshot(const json& value, const std::string& file, const std::string& where) {
  JsonFields j(value, file, where);
  WatchSnapshot s;
  s.seconds = seconds(j, value);
  const json& rows = array(j, "rows", kMaxRecordedRows, true);
  s.rows.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    s.rows.push_back(read_row(JsonFields(rows[i], file, j.member("rows", i))));
  s.unpaired = count(j, "unpaired");
  s.dropped_rows = count(j, "dropped_rows");
  s.inflight_full = count(j, "inflight_full");
  s.tree_full = count(j, "tree_full");
  return s;
}

WatchHook read_program(const JsonFields& j) {
  WatchHook h;
  h.program = text(j, "program", kWordChars);
  h.attach = text(j, "attach", kWordChars);
  h.enabled = j.flag("enabled").value_or(false);
  h.why = text(j, "why", kTextChars);
  h.attached = j.flag("attached").value_or(false);
  h.error = text(j, "error", kTextChars);
  return h;
}

// The plan's refusal errno is a static string: only the two a kernel sets.
const char* refusal_errno(const JsonFields& j) {
  std::optional<std::string> w = j.text("refusal_errno");
  if (!w || *w == "EREMOTEIO") return "EREMOTEIO";
  if (*w == "EINVAL") return "EINVAL";
  j.fail("refusal_errno", "\"EREMOTEIO\" or \"EINVAL\"");
}

WatchHookPlan read_hooks(const JsonFields& j) {
  WatchHookPlan plan;
  plan.decision = word(j, "decision_hook", kDecisions);
  plan.provider = word(j, "provider_layout", kLayouts);
  JsonFields types(object(j, "map_type_values", false), j.file(), j.member("map_type_values"));
  plan.not_supported = types.integer("not_supported", -1, 1000);
  plan.bus_addr = types.integer("bus_addr", -1, 1000);
  plan.thru_host_bridge = types.integer("thru_host_bridge", -1, 1000);
  plan.block_hooks = j.flag("block_hooks").value_or(false);
  plan.refusal_errno = refusal_errno(j);
  const json& problems = array(j, "problems", kMaxProblems, false);
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (!problems[i].is_string() || characters(problems[i].get<std::string>()) > kTextChars)
      throw Error(j.file(), j.member("problems", i) + ": expected a string of at most " + std::to_string(kTextChars) +
                                " characters, found " + json_brief(problems[i]));
    plan.problems.push_back(problems[i].get<std::string>());
  }
  const json& programs = array(j, "hooks", kMaxPrograms, true);
  for (std::size_t i = 0; i < programs.size(); ++i)
    plan.hooks.push_back(read_program(JsonFields(programs[i], j.file(), j.member("hooks", i))));
  return plan;
}

void read_environment(const JsonFields& j, WatchFacts& facts) {
  JsonFields lockdown(object(j, "lockdown", false), j.file(), j.member("lockdown"));
  facts.lockdown.status = lockdown.text("status") ? word(lockdown, "status", kStatuses) : ReadStatus::kMissing;
  facts.lockdown.mode = text(lockdown, "mode", kWordChars);
  facts.lockdown.error = text(lockdown, "error", kTextChars);
  JsonFields nv(object(j, "nvidia_fs", false), j.file(), j.member("nvidia_fs"));
  std::optional<bool> loaded = nv.flag("loaded");
  facts.nvidia_fs.loaded = loaded ? tri(*loaded) : Tri::kUnknown;
  facts.nvidia_fs.stats = optional_text(nv, "stats", kMaxNvidiaFsStatsBytes);
}

}  // namespace

WatchRecording read_watch_recording(std::string_view input, const std::string& file) {
  auto doc = parse_outside_json(input, file);
  if (!doc)
    throw Error(file, std::string("not JSON; expected a p2pcheck watch recording (schema \"") + kWatchRecordingSchema +
                          "\", made by p2pcheck watch --record)");
  JsonFields top(*doc, file);
  if (top.text("schema") != kWatchRecordingSchema)
    top.fail("schema", std::string("\"") + kWatchRecordingSchema + "\" (a recording made by p2pcheck watch --record)");
  if (top.integer("schema_version", INT64_MIN, INT64_MAX) != kWatchRecordingVersion)
    top.fail("schema_version", std::to_string(kWatchRecordingVersion) + " (this p2pcheck reads version " +
                                   std::to_string(kWatchRecordingVersion) + ")");
  WatchRecording rec;
  JsonFields kernel(object(top, "kernel", false), file, "kernel");
  rec.facts.kernel_release = text(kernel, "release", kReleaseChars);
  rec.facts.cannot_watch = optional_text(top, "cannot_watch", kTextChars);
  if (const json* command = top.object("command")) {
    JsonFields c(*command, file, "command");
    std::optional<long long> pid = c.integer("pid", 1, UINT32_MAX);
    if (!pid) c.fail("pid", "the command's process id");
    rec.facts.command = WatchCommand{static_cast<std::uint32_t>(*pid), text(c, "name", kTextChars)};
  }
  rec.facts.hooks = read_hooks(JsonFields(object(top, "hooks", true), file, "hooks"));
  read_environment(JsonFields(object(top, "environment", false), file, "environment"), rec.facts);
  rec.snapshots_dropped = count(top, "snapshots_dropped");
  const json& snapshots = array(top, "snapshots", kMaxRecordedSnapshots, true);
  rec.snapshots.reserve(snapshots.size());
  for (std::size_t i = 0; i < snapshots.size(); ++i)
    rec.snapshots.push_back(read_snapshot(snapshots[i], file, top.member("snapshots", i)));
  return rec;
}

WatchRecording load_watch_recording(const std::string& path) {
  return read_watch_recording(
      read_input_file(path, kMaxRecordingBytes, "--replay", "a watch recording is its counters, far smaller"), path);
}

}  // namespace p2pcheck
