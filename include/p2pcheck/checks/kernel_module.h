// The kernel's own answers beside p2pcheck's: the loaded p2pprobe module (live), or the answers a
// capture recorded from it (live/kmod.json, on replay). Either way one kmod.kernel_verdict finding,
// and each pair that was answered gets the kernel's verdict and whether it agrees.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/checks/recorded.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/rules/kernel_answers.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// On a live machine without the module: INFO saying the verdicts are a prediction. Nothing on a
// replay without recorded answers.
std::vector<Finding> check_kernel_module(const ModuleAnswers& answers, bool live, PairList& pairs);
// A capture's recorded p2pprobe answers beside ours.
std::vector<Finding> check_recorded_kernel_answers(const RecordedKernelAnswers& recorded, PairList& pairs);

}  // namespace p2pcheck
