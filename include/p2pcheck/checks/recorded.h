// What a capture recorded from the live machine beyond its files (live/ in the capture): the
// p2pprobe module's verdicts (live/kmod.json) and the last `p2pcheck verify` (live/verify.json).
// A replay shows them as what that machine said at capture time; they are read through the same
// Source as everything else and never come from the machine doing the replay.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/rules/kernel_answers.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/verdict.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

inline constexpr const char* kRecordedKmodPath = "/live/kmod.json";
inline constexpr const char* kRecordedVerifyPath = "/live/verify.json";

struct RecordedKernelAnswers {
  ModuleInfo info;
  std::map<std::pair<Bdf, Bdf>, KernelVerdict> verdicts;  // (provider, client)
  std::map<std::pair<Bdf, Bdf>, std::string> failures;    // pairs the module could not answer
};
// nullopt when the source has no live/kmod.json; Error naming the file when it is not the
// p2pcheck.kmod document capture writes.
std::optional<RecordedKernelAnswers> read_recorded_kernel_answers(Source& source);

// The last `p2pcheck verify` the capture recorded, one entry per pair it covered.
struct RecordedVerifyPair {
  std::optional<Bdf> gpu, nvme;
  std::string status;                 // "ran", "skipped", "refused", ...
  std::string flow;                   // the pair and each direction's outcome, one evidence line
  std::vector<std::string> outcomes;  // each direction's outcome: "passed", "not_run", "failed", ...
  // "directions" is not an array: an error only if this pair is one being checked (as it always was).
  bool directions_broken = false;
};
struct RecordedVerify {
  std::string finished_at;
  std::string summary;
  std::vector<RecordedVerifyPair> pairs;
};
// nullopt when the source has no live/verify.json; Error naming the file when it is broken.
std::optional<RecordedVerify> read_recorded_verify(Source& source);

// One finding about the recorded verify run for the pairs being checked: its outcome per pair and
// direction as evidence, FAIL when a transfer that ran failed, PASS when all that ran passed.
Finding check_recorded_verify(const RecordedVerify& recorded, const PairList& pairs);

}  // namespace p2pcheck
