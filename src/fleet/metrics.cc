// A host's result as Prometheus text exposition (metrics.h).
#include "p2pcheck/fleet/metrics.h"

#include <cstdio>

#include "p2pcheck/fleet/node_features.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

namespace {

class Exposition {
 public:
  // One metric family: its HELP and TYPE lines, then its samples.
  void family(const char* name, const char* help) {
    out_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
  }
  void sample(const char* name, const std::string& labels, const std::string& value) {
    out_ += name;
    if (!labels.empty()) out_ += "{" + labels + "}";
    out_ += " " + value + "\n";
  }
  void sample(const char* name, const std::string& labels, std::size_t value) {
    sample(name, labels, std::to_string(value));
  }
  void comment(const std::string& text) { out_ += "# " + text + "\n"; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string label(const char* name, std::string_view value) {
  return std::string(name) + "=\"" + prometheus_label_value(value) + "\"";
}

std::string seconds(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t);
  return buf;
}

void result_families(Exposition& e, const HostSummary& host, const NodeFeatures& f) {
  e.family("p2pcheck_result",
           "the check's RESULT: 1 for the one it is (PASS, FAIL, UNKNOWN, NO PAIRS), 0 for the others");
  for (Result r : {Result::kPass, Result::kFail, Result::kUnknown, Result::kNoPairs})
    e.sample("p2pcheck_result", label("result", to_string(r)), std::size_t{host.result == r});
  e.family("p2pcheck_info", "which host, kernel and input the metrics describe (always 1)");
  e.sample("p2pcheck_info",
           label("host", host.host) + "," + label("kernel", host.kernel.empty() ? "unknown" : host.kernel) + "," +
               label("input_format", host.format) + "," + label("version", kToolVersion),
           std::size_t{1});
  e.family("p2pcheck_pairs", "GPU-NVMe pairs by verdict: allowed, refused, undecided");
  e.sample("p2pcheck_pairs", label("verdict", "allowed"), f.allowed);
  e.sample("p2pcheck_pairs", label("verdict", "refused"), f.refused);
  e.sample("p2pcheck_pairs", label("verdict", "undecided"), f.undecided);
  e.family("p2pcheck_checks", "checks that count toward the result, by level (fail, unknown, warn)");
  std::size_t fail = 0, unknown = 0, warn = 0;
  for (const HostFinding& x : host.findings) {
    if (!x.concerns) continue;
    fail += x.level == Level::kFail;
    unknown += x.level == Level::kUnknown;
    warn += x.level == Level::kWarn;
  }
  e.sample("p2pcheck_checks", label("level", "fail"), fail);
  e.sample("p2pcheck_checks", label("level", "unknown"), unknown);
  e.sample("p2pcheck_checks", label("level", "warn"), warn);
  e.family("p2pcheck_known_bad_kernel",
           "a kernel known to corrupt memory with P2PDMA: 1 for the state it is in (true, false, unknown)");
  for (Tristate t : {Tristate::kYes, Tristate::kNo, Tristate::kUnknown})
    e.sample("p2pcheck_known_bad_kernel", label("state", to_string(t)), std::size_t{f.known_bad_kernel == t});
  e.family("p2pcheck_acs_redirect_ports", "ports whose ACS redirect refuses pairs (pci=disable_acs_redir= names them)");
  e.sample("p2pcheck_acs_redirect_ports", "", host.fix ? host.fix->acs_ports.size() : std::size_t{0});
}

void pair_families(Exposition& e, const HostSummary& host, std::size_t limit) {
  const bool bounded = host.pairs.size() > limit;
  e.family("p2pcheck_pair_series_limited",
           "1 when the host has more pairs than the per-pair series bound, so only the counts are written");
  e.sample("p2pcheck_pair_series_limited", "", std::size_t{bounded});
  e.family("p2pcheck_pair_series_limit", "the bound: pairs above which no per-pair series is written");
  e.sample("p2pcheck_pair_series_limit", "", limit);
  if (bounded) {
    e.comment(std::to_string(host.pairs.size()) + " pairs exceed the bound of " + std::to_string(limit) +
              ": per-pair series left out, p2pcheck_pairs counts them");
    return;
  }
  struct Family {
    const char* name;
    const char* help;
    Verdict verdict;
  };
  const Family families[] = {
      {"p2pcheck_pair_allowed", "1 when the kernel allows P2PDMA between the GPU and the NVMe", Verdict::kSupported},
      {"p2pcheck_pair_refused", "1 when the kernel refuses P2PDMA between the GPU and the NVMe",
       Verdict::kNotSupported},
      {"p2pcheck_pair_undecided", "1 when whether the kernel allows the pair could not be decided", Verdict::kUnknown}};
  std::vector<std::string> labels;
  labels.reserve(host.pairs.size());
  for (const HostPair& p : host.pairs)
    labels.push_back(label("gpu", p.gpu) + "," + label("nvme", p.nvme) + "," + label("nvme_name", p.nvme_name));
  for (const Family& fam : families) {
    e.family(fam.name, fam.help);
    for (std::size_t i = 0; i < host.pairs.size(); ++i)
      e.sample(fam.name, labels[i], std::size_t{host.pairs[i].verdict == fam.verdict});
  }
}

void drift_families(Exposition& e, const DriftReport& d) {
  std::size_t pairs = 0, ports = 0;
  for (const auto& c : d.pairs) pairs += c.change == Change::kWorse;
  for (const auto& c : d.ports) ports += c.change == Change::kWorse;
  e.family("p2pcheck_drift_worse", "1 when the result got worse than the baseline (p2pcheck diff)");
  e.sample("p2pcheck_drift_worse", "", std::size_t{d.overall == Change::kWorse});
  e.family("p2pcheck_drift_changed", "changes from the baseline: pairs worse, ports whose ACS redirect came on");
  e.sample("p2pcheck_drift_changed", label("what", "pairs_worse"), pairs);
  e.sample("p2pcheck_drift_changed", label("what", "acs_ports_worse"), ports);
}

}  // namespace

std::string prometheus_label_value(std::string_view text) {
  std::string safe = printable(text);
  std::string out;
  out.reserve(safe.size());
  for (char c : safe) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

std::string prometheus_text(const HostSummary& host, const MetricsOptions& options) {
  Exposition e;
  NodeFeatures f = node_features(host);
  result_families(e, host, f);
  pair_families(e, host, options.max_pair_series);
  if (options.captured_at) {
    e.family("p2pcheck_capture_timestamp_seconds", "when the input was captured (the check ran, on a live machine)");
    e.sample("p2pcheck_capture_timestamp_seconds", "", seconds(*options.captured_at));
  }
  if (options.drift) drift_families(e, *options.drift);
  return e.take();
}

}  // namespace p2pcheck
