// `p2pcheck watch --record FILE` and `--replay FILE`: a watch run kept as a JSON document (schema
// "p2pcheck.watch_recording", docs/json.md) of its facts (kernel, hooks, lockdown, nvidia_fs) and
// its cumulative snapshots. A replay judges the last snapshot again against the machine given by
// --root or --dump, so the same recording judged on the machine it was made on gives the same answer.
// The reader treats the file as hostile: typed reads (source/json_read.h), every count and string bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/watch/watch_report.h"

namespace p2pcheck {

inline constexpr const char* kWatchRecordingSchema = "p2pcheck.watch_recording";
// 2: the house's names (watch_hooks_json(), "direction": "to_device", rows' "requeues"). Version 1
// ("p2pcheck.watch-recording") was written by the first watch, before any release: not read.
inline constexpr int kWatchRecordingVersion = 2;
inline constexpr std::size_t kMaxRecordedRows = 100000;       // per snapshot (the probe holds 8,192)
inline constexpr std::size_t kMaxRecordedSnapshots = 100000;  // a day at one a second
inline constexpr std::uint64_t kMaxRecordingBytes = 256ull << 20;

struct WatchRecording {
  WatchFacts facts;
  std::vector<WatchSnapshot> snapshots;  // cumulative, oldest first
  // Snapshots the writer left out so the document stays within what the reader parses
  // (kMaxJsonElements values); never the last one, which is what a replay judges.
  std::uint64_t snapshots_dropped = 0;
};

// The document. When all snapshots would be more JSON values than parse_outside_json() reads back,
// every other snapshot before the last is left out, repeatedly, and counted in snapshots_dropped.
nlohmann::ordered_json watch_recording_json(const WatchRecording& recording);

// A recording's text; `file` names it in every Error (the member and what was expected): not JSON,
// another schema or version, an unknown path, direction or hook name, too many rows or snapshots,
// a name longer than the probe's fields hold.
WatchRecording read_watch_recording(std::string_view text, const std::string& file);
// The file at `path` (a regular file, at most kMaxRecordingBytes), read as above.
WatchRecording load_watch_recording(const std::string& path);

// The report a replay prints: the last snapshot (none: an empty one) judged on `state` with `rules`.
WatchReport replay_watch_report(const WatchRecording& recording, const MachineState& state, const KernelRules& rules,
                                const WatchFilter& filter = {});

}  // namespace p2pcheck
