// `p2pcheck diff BASELINE CURRENT`: what changed between two results of one machine (a baseline an
// admin accepted, and now), and whether it got worse. Both sides are HostSummary, read by the same
// code as fleet reads any input (captures, dumps, saved check --json: fleet.h read_host), so the
// verdicts compared are check's own; nothing is decided again here. What the Slurm health check
// drains on and what the metrics call drift.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/fleet/host_summary.h"

namespace p2pcheck {

// How a change moved: towards PASS, away from it, or sideways (a different cause, same verdict).
enum class Change { kSame, kBetter, kWorse };
const char* to_string(Change change);  // "same", "better", "worse"

// One GPU–NVMe pair whose verdict or cause changed, or that is on one side only.
struct PairChange {
  std::string gpu, nvme, nvme_name;
  std::optional<Verdict> before, after;  // nullopt: the pair is not in that side (a device vanished or came)
  Cause cause_before = Cause::kNone, cause_after = Cause::kNone;
  std::string rule_after;  // the deciding rule now, when the pair has a cause
  Change change = Change::kSame;
};

// A port whose ACS redirect refuses pairs on one side and not on the other (check's host_fix
// acs_ports: the ports `pci=disable_acs_redir=` would name). Worse when it came with pairs that
// got worse; a port that refuses pairs now which a kernel without P2PDMA refused before is listed,
// neither better nor worse.
struct PortChange {
  std::string port;
  bool redirect_before = false, redirect_after = false;
  Change change = Change::kSame;
};

// A finding (id and subject) whose level changed, or that is on one side only: the kernel's facts
// (kernel.*), links (link.downtrained), the storage stack, ... Only findings that count toward the
// result (concerns_selected_pairs) and are above INFO on either side. Better or worse by what the
// level does to the result under each side's --fail-on: a new WARN is listed, but worse only under
// `--fail-on warn`; a FAIL is not worse under `-stack`.
struct FindingChange {
  std::string id, subject;
  std::optional<Level> before, after;
  std::string message;  // the newer side's message (the one present)
  Change change = Change::kSame;
};

struct DriftReport {
  std::string baseline_input, current_input;  // as given
  std::string baseline_host, current_host;
  Result before = Result::kNoPairs, after = Result::kNoPairs;
  std::string kernel_before, kernel_after;
  std::size_t pairs_before = 0, pairs_after = 0;
  std::vector<PairChange> pairs;  // in the current side's pair order, then vanished pairs
  std::vector<PortChange> ports;
  std::vector<FindingChange> findings;
  // Worse when anything moved away from PASS (the result, a pair, an ACS port, a finding); else
  // better when anything moved towards it; else same (also when only sideways changes happened).
  Change overall = Change::kSame;
  bool changed() const;  // anything at all differs (also a kernel release or a sideways change)
};

// Compares two results of one machine. The inputs' own results are check's (result_for); the pair
// order is the current side's.
DriftReport compare_hosts(const HostSummary& baseline, const HostSummary& current);

// One line a person can read in a drain reason or an alert: the worst change first, e.g.
// "ACS redirect on 0000:03:09.0 refuses pairs (not at the baseline); 0000:04:00.0 <-> nvme0 now
// refused (pair.acs_redirect) and 2 more pair(s) worse", at most `limit`
// bytes (cut on a character boundary with "..."). "" when nothing got worse.
std::string worse_summary(const DriftReport& drift, std::size_t limit = 200);

}  // namespace p2pcheck
