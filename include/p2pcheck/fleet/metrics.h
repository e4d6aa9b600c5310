// A host's result as Prometheus metrics, in the text exposition format node_exporter's textfile
// collector reads (`*.prom`): the result as a labelled gauge, the pairs counted by verdict, each
// pair's allowed/refused/undecided gauges, the known-bad kernel, ACS redirect ports, the capture
// time, and with a baseline the drift (drift.h). A view of the same result as check; nothing is
// decided here. Label values are escaped per the format; the series are bounded: above
// `max_pair_series` pairs only the counts are written, and a gauge and a comment say so.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "p2pcheck/fleet/drift.h"
#include "p2pcheck/fleet/host_summary.h"

namespace p2pcheck {

struct MetricsOptions {
  // Pairs above which no per-pair series is written (3 series a pair). 1,024 pairs: 3,072 series.
  std::size_t max_pair_series = 1024;
  // When the input was captured (seconds since the epoch): the capture's time for a replay, the
  // time of the check on the live machine; nullopt when the input does not say (a saved report).
  std::optional<double> captured_at;
  const DriftReport* drift = nullptr;  // with --baseline: the drift gauges
};

std::string prometheus_text(const HostSummary& host, const MetricsOptions& options);

// A label value in the exposition format: valid UTF-8 (anything else, and control characters,
// escaped as source/printable.h does: a newline is already `\n` there), then `\` and `"` escaped.
std::string prometheus_label_value(std::string_view text);

}  // namespace p2pcheck
