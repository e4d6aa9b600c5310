// `p2pcheck watch --json` (schema "p2pcheck.watch", docs/json.md) and `--json-lines`' record per
// interval (schema "p2pcheck.watch_interval"): views of the same WatchReport as the text. Names keep
// the bytes the kernel gave; json_text() escapes them (and replaces bytes that are not UTF-8).
#pragma once

#include <nlohmann/json.hpp>

#include "p2pcheck/watch/watch_report.h"

namespace p2pcheck {

nlohmann::ordered_json watch_json(const WatchReport& report);

// One interval: `report` is build_watch_report() of watch_delta(previous, current), `at_seconds`
// the current snapshot's time since the probe started.
nlohmann::ordered_json watch_interval_json(const WatchReport& report, double at_seconds);

// The hook plan as every watch document names it (the summary's top level, `--hooks --json`'s
// "p2pcheck.watch_hooks", a recording's "hooks"): decision_hook, provider_layout, map_type_values,
// refusal_errno, block_hooks, problems, hooks[].
nlohmann::ordered_json watch_hooks_json(const WatchHookPlan& plan);

// "to_device", "to_storage", "other": JSON's direction names (verify's), where the text says "to-device".
const char* watch_direction_key(WatchDir dir);

}  // namespace p2pcheck
