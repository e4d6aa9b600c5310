// A saved check --json's result recomputed from its pairs and findings (saved_result.h).
#include "p2pcheck/fleet/saved_result.h"

namespace p2pcheck {

Result result_from_pairs_and_findings(const HostSummary& host) {
  if (host.pairs.empty()) return Result::kNoPairs;
  bool unknown = false;
  for (const auto& p : host.pairs) {
    if (p.verdict == Verdict::kNotSupported) return Result::kFail;
    unknown = unknown || p.verdict == Verdict::kUnknown;
  }
  for (const auto& f : host.findings) {
    if (!f.concerns) continue;
    if (f.level == Level::kFail) return Result::kFail;
    unknown = unknown || f.level == Level::kUnknown;
  }
  return unknown ? Result::kUnknown : Result::kPass;
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
