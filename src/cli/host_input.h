// The machine a command judges, kept as fleet keeps a host (fleet/host_summary.h), for the views
// that compare or export a result: diff, slurm, check --prometheus/--nfd.
#pragma once

#include <optional>
#include <string>

#include "options.h"
#include "p2pcheck/fleet/host_summary.h"

namespace p2pcheck::cli {

struct JudgedHost {
  HostSummary summary;
  std::optional<double> captured_at;  // seconds since the epoch: a capture's time, or now on the live machine
};

// A checked report of `input` (checked()) as a summary, with when its input was captured.
JudgedHost judged_host(const CheckReport& report, const Input& input);
// The machine the global options select (--root, --dump, --plan or this one), checked.
JudgedHost selected_host(const GlobalOptions& o);
// A named input (capture, dump, saved check --json), read as fleet reads one (fleet.h read_host);
// Error "cannot read the ROLE FILE: why" when it cannot be (ROLE: "baseline", "current").
HostSummary named_host(const std::string& path, const std::string& role, const GlobalOptions& o);

}  // namespace p2pcheck::cli
