#include "exports.h"

#include <ctime>

#include "host_input.h"
#include "output_file.h"
#include "p2pcheck/fleet/metrics.h"
#include "p2pcheck/fleet/node_features.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck::cli {

namespace {

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

void add_export_options(CLI::App& check, ExportOptions& e) {
  check
      .add_option("--prometheus", e.prometheus,
                  "also write the result as Prometheus metrics to FILE.prom (node_exporter's textfile collector)")
      ->option_text("FILE");
  check
      .add_option("--prometheus-max-pairs", e.max_pair_series,
                  "pairs above which --prometheus writes only counts, no per-pair series (default 1024)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 20))
      ->option_text("N");
  check
      .add_option("--nfd", e.nfd,
                  "also write node-feature-discovery labels to FILE (features.d/p2pcheck: name=value lines)")
      ->option_text("FILE");
  check.add_option("--nfd-expiry", e.nfd_expiry_seconds, "seconds until NFD drops the labels (default 10800)")
      ->check(CLI::Range(60LL, 366LL * 86400))
      ->option_text("SECONDS");
  check
      .add_option("--baseline", e.baseline,
                  "with --prometheus: also the drift from this saved check --json (p2pcheck_drift_*)")
      ->option_text("FILE");
}

bool exports_asked(const ExportOptions& e) { return !e.prometheus.empty() || !e.nfd.empty(); }

void check_export_options(const ExportOptions& e) {
  if (!e.prometheus.empty() && !e.prometheus.ends_with(".prom"))
    throw UsageError("--prometheus " + e.prometheus + ": node_exporter's textfile collector reads only *.prom files");
  if (!e.nfd.empty() && (base_name(e.nfd).empty() || base_name(e.nfd)[0] == '.'))
    throw UsageError("--nfd " + e.nfd + ": node-feature-discovery skips files whose name starts with a dot");
  if (!e.baseline.empty() && e.prometheus.empty()) throw UsageError("--baseline is for --prometheus's drift metrics");
}

void write_exports(const ExportOptions& e, const CheckReport& report, const Input& input, const GlobalOptions& o) {
  JudgedHost host = judged_host(report, input);
  if (!e.prometheus.empty()) {
    MetricsOptions m;
    m.max_pair_series = e.max_pair_series;
    m.captured_at = host.captured_at;
    std::optional<DriftReport> drift;
    if (!e.baseline.empty()) {
      drift = compare_hosts(named_host(e.baseline, "baseline", o), host.summary);
      m.drift = &*drift;
    }
    write_whole_file(e.prometheus, prometheus_text(host.summary, m), "metrics");
  }
  if (!e.nfd.empty()) {
    std::string expiry = rfc3339_utc(static_cast<long long>(std::time(nullptr)) + e.nfd_expiry_seconds);
    write_whole_file(e.nfd, nfd_features_text(node_features(host.summary), expiry), "node features");
  }
}

}  // namespace p2pcheck::cli
