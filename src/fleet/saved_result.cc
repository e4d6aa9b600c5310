// A saved check --json's result recomputed from its pairs and findings (saved_result.h).
#include "p2pcheck/fleet/saved_result.h"

namespace p2pcheck {

Result result_from_pairs_and_findings(const HostSummary& host) {
  // The check's own rule (result_for) over the report's pairs and findings, under its own fail_on.
  ResultCounts counts;
  counts.pairs = host.pairs.size();
  for (const auto& p : host.pairs) {
    counts.allowed += p.verdict == Verdict::kSupported;
    counts.refused += p.verdict == Verdict::kNotSupported;
    counts.undecided += p.verdict == Verdict::kUnknown;
  }
  for (const auto& f : host.findings) {
    if (!f.concerns) continue;
    counts.failing += f.level == Level::kFail;
    counts.unknown += f.level == Level::kUnknown;
    counts.warnings += f.level == Level::kWarn;
  }
  return result_for(counts, host.fail_on);
}

void recompute_saved_result(HostSummary& host) {
  Result stored = host.result;
  host.result = result_from_pairs_and_findings(host);
  if (host.result == stored) return;
  HostFinding note;
  note.id = kSavedResultFinding;
  note.level = Level::kUnknown;
  note.subject = host.input;
  note.message = std::string("the saved check --json says ") + to_string(stored) +
                 ", but its pairs and findings give " + to_string(host.result) +
                 " (fleet counts that); the file was edited or made by another tool";
  note.fix = "send a capture (p2pcheck capture) instead of a saved report";
  host.findings.push_back(std::move(note));
}

}  // namespace p2pcheck
