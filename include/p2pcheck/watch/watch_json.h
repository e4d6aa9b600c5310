// `p2pcheck watch --json` (schema "p2pcheck.watch", docs/json.md) and `--json-lines`' record per
// interval (schema "p2pcheck.watch-interval"): views of the same WatchReport as the text. Names keep
// the bytes the kernel gave; json_text() escapes them (and replaces bytes that are not UTF-8).
#pragma once

#include <nlohmann/json.hpp>

#include "p2pcheck/watch/watch_report.h"

namespace p2pcheck {

nlohmann::ordered_json watch_json(const WatchReport& report);

// One interval: `report` is build_watch_report() of watch_delta(previous, current), `at_seconds`
// the current snapshot's time since the probe started.
nlohmann::ordered_json watch_interval_json(const WatchReport& report, double at_seconds);

}  // namespace p2pcheck
