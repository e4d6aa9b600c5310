// The kernel's own answers beside p2pcheck's: the loaded p2pprobe module (live), or the answers a
// capture recorded from it (live/kmod.json, on replay). Either way one kmod.kernel_verdict finding,
// and each pair that was answered gets the kernel's verdict and whether it agrees.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/checks/recorded.h"
#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// What the loaded module answered, asked once per pair.
struct ModuleAnswers {
  bool asked = false;         // a module was there to ask
  std::string not_asked_why;  // when not: "not loaded", "needs root"; empty means p2pprobe is not loaded
  std::string device;         // the device node asked ("/dev/p2pprobe")
  ModuleInfo info;
  std::map<std::pair<Bdf, Bdf>, KernelVerdict> verdicts;  // (GPU, NVMe)
  std::string error;  // why the module stopped answering; empty when it answered every pair
};

// Asks `module` (null when absent; `problem` says why) for its info and each pair's verdict.
ModuleAnswers ask_kernel_module(P2pprobeClient* module, const std::string& problem, const PairList& pairs);

// On a live machine without the module: INFO saying the verdicts are a prediction. Nothing on a
// replay without recorded answers.
std::vector<Finding> check_kernel_module(const ModuleAnswers& answers, bool live, PairList& pairs);
// A capture's recorded p2pprobe answers beside ours.
std::vector<Finding> check_recorded_kernel_answers(const RecordedKernelAnswers& recorded, PairList& pairs);

}  // namespace p2pcheck
