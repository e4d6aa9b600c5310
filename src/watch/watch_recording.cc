// watch's recordings, the writer (watch_recording.h); the reader is watch_recording_read.cc.
#include "p2pcheck/watch/watch_recording.h"

#include <cstdint>

#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/source/json_read.h"
#include "p2pcheck/source/version.h"
#include "p2pcheck/watch/watch_json.h"
#include "watch_internal.h"

namespace p2pcheck {

using json = nlohmann::ordered_json;

namespace {

using report_detail::opt;
using report_detail::text_or_null;

// The reader takes integers up to INT64_MAX; a counter never gets there, but the file must read back.
std::uint64_t clamp(std::uint64_t n) { return n > INT64_MAX ? INT64_MAX : n; }

json row_json(const WatchRow& r) {
  return {{"provider", r.provider},
          {"client", r.client},
          {"disk", r.disk},
          {"comm", r.comm},
          {"tgid", r.tgid},
          {"path", to_string(r.path)},
          {"direction", watch_direction_key(r.dir)},
          {"requests", clamp(r.requests)},
          {"bytes", clamp(r.bytes)},
          {"segments", clamp(r.segments)},
          {"errors", clamp(r.errors)},
          {"error_bytes", clamp(r.error_bytes)},
          {"last_status", r.last_status},
          {"requeues", clamp(r.requeues)},
          {"in_tree", r.in_tree}};
}

json snapshot_json(const WatchSnapshot& s) {
  json rows = json::array();
  for (const WatchRow& r : s.rows) rows.push_back(row_json(r));
  return {{"seconds", s.seconds},
          {"rows", std::move(rows)},
          {"unpaired", clamp(s.unpaired)},
          {"dropped_rows", clamp(s.dropped_rows)},
          {"inflight_full", clamp(s.inflight_full)},
          {"tree_full", clamp(s.tree_full)}};
}

json environment_json(const WatchFacts& f) {
  json loaded = f.nvidia_fs.loaded == Tri::kUnknown ? json(nullptr) : json(f.nvidia_fs.loaded == Tri::kYes);
  return {{"lockdown",
           {{"status", read_status_name(f.lockdown.status)}, {"mode", f.lockdown.mode}, {"error", f.lockdown.error}}},
          {"nvidia_fs", {{"loaded", loaded}, {"stats", opt(f.nvidia_fs.stats)}}}};
}

// About how many values parse_outside_json() counts for a snapshot: a row is 15 members.
std::size_t snapshot_values(const WatchSnapshot& s) { return 9 + 17 * s.rows.size(); }

// Which snapshots fit the reader's limit: all, or every other one before the last, repeatedly.
std::vector<std::size_t> kept_snapshots(const std::vector<WatchSnapshot>& snapshots) {
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < snapshots.size(); ++i) kept.push_back(i);
  const std::size_t budget = kMaxJsonElements - kMaxJsonElements / 8;  // the rest for facts and hooks
  auto total = [&] {
    std::size_t n = 0;
    for (std::size_t i : kept) n += snapshot_values(snapshots[i]);
    return n;
  };
  while (kept.size() > 1 && total() > budget) {
    std::vector<std::size_t> thinner;
    // From the end backwards, so the last one always stays.
    for (std::size_t k = kept.size(); k-- > 0;)
      if ((kept.size() - 1 - k) % 2 == 0) thinner.insert(thinner.begin(), kept[k]);
    kept.swap(thinner);
  }
  return kept;
}

}  // namespace

json watch_recording_json(const WatchRecording& rec) {
  json j = json::object();
  j["schema"] = kWatchRecordingSchema;
  j["schema_version"] = kWatchRecordingVersion;
  j["tool_version"] = kToolVersion;
  j["kernel"] = {{"release", text_or_null(rec.facts.kernel_release)}};
  j["cannot_watch"] = opt(rec.facts.cannot_watch);
  j["command"] =
      rec.facts.command ? json{{"pid", rec.facts.command->pid}, {"name", rec.facts.command->name}} : json(nullptr);
  j["hooks"] = watch_hooks_json(rec.facts.hooks);
  j["environment"] = environment_json(rec.facts);
  std::vector<std::size_t> kept = kept_snapshots(rec.snapshots);
  j["snapshots_dropped"] = clamp(rec.snapshots_dropped + (rec.snapshots.size() - kept.size()));
  json snapshots = json::array();
  for (std::size_t i : kept) snapshots.push_back(snapshot_json(rec.snapshots[i]));
  j["snapshots"] = std::move(snapshots);
  return j;
}

WatchReport replay_watch_report(const WatchRecording& rec, const MachineState& state, const KernelRules& rules,
                                const WatchFilter& filter) {
  static const WatchSnapshot none;
  WatchFacts facts = rec.facts;
  // A recording without a snapshot counted nothing: that is not "no P2P".
  if (rec.snapshots.empty() && !facts.cannot_watch)
    facts.cannot_watch = "the recording holds no snapshot of the probe's counters: nothing was counted";
  return build_watch_report(rec.snapshots.empty() ? none : rec.snapshots.back(), facts, state, rules, filter);
}

}  // namespace p2pcheck
