// The kernel's answers beside ours, live or recorded.
#include "p2pcheck/checks/kernel_module.h"

#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

using KernelVerdicts = std::map<std::pair<Bdf, Bdf>, KernelVerdict>;

// The kernel's answers beside ours: one finding, FAIL naming the pairs where they differ. Pairs the
// kernel was not asked about keep their prediction alone.
Finding compare_with_kernel(PairList& pairs, const KernelVerdicts& answers, Evidence ev, const std::string& whose) {
  std::vector<std::string> disagree;
  size_t compared = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const DevicePair& pair = pairs.pair(i);
    auto it = answers.find({pair.gpu, pair.nvme});
    if (it == answers.end()) continue;
    ++compared;
    Tri agreed = tri(agrees(pairs[i], it->second));
    pairs.set_kernel_answer(i, it->second, agreed);
    if (agreed == Tri::kNo) disagree.push_back(pair.gpu.str() + " <-> " + pair.nvme.str());
  }
  if (compared == 0)
    return {"kmod.kernel_verdict", Level::kInfo, "", whose + " answers cover none of the pairs checked here", {ev}, ""};
  if (disagree.empty()) {
    std::string of = compared == pairs.size() ? "all " + std::to_string(compared)
                                              : std::to_string(compared) + " of " + std::to_string(pairs.size());
    return {
        "kmod.kernel_verdict",
        Level::kPass,
        "",
        whose + " answers agree with p2pcheck for " + of + " pair(s) (distance, supported, map type where observable)",
        {ev},
        ""};
  }
  return {"kmod.kernel_verdict",
          Level::kFail,
          "",
          whose + " answers disagree with p2pcheck's rules on " + std::to_string(disagree.size()) +
              " pair(s): " + disagree.front() + (disagree.size() > 1 ? ", ..." : "") +
              " — trust the kernel's answer; this is a bug in p2pcheck or a kernel patch it does not know",
          {ev},
          "report it with `p2pcheck capture` attached; the pair details show both answers"};
}

std::string module_text(const ModuleInfo& info) {
  return "p2pprobe " + info.module_version + " on " + info.kernel_release +
         (info.p2pdma ? ", CONFIG_PCI_P2PDMA=y" : ", no CONFIG_PCI_P2PDMA");
}

}  // namespace

std::vector<Finding> check_kernel_module(const ModuleAnswers& answers, bool live, PairList& pairs) {
  if (!answers.asked) {
    if (!live) return {};
    return {{"kmod.kernel_verdict",
             Level::kInfo,
             "",
             "the kernel's own answers were not asked (" +
                 (answers.not_asked_why.empty() ? std::string("p2pprobe not loaded") : answers.not_asked_why) +
                 "): the verdicts are p2pcheck's prediction from the kernel's rules",
             {{"/dev/p2pprobe", "absent"}},
             "p2pcheck kmod load (as root) to compare every pair with the running kernel's answer"}};
  }
  if (!answers.error.empty()) {
    // A module that stops answering leaves our prediction standing, said plainly.
    pairs.clear_kernel_answers();
    return {{"kmod.kernel_verdict",
             Level::kUnknown,
             "",
             "the kernel module did not answer: " + answers.error,
             {{answers.device, "ioctl failed"}},
             "reload it: p2pcheck kmod unload; p2pcheck kmod load"}};
  }
  return {compare_with_kernel(pairs, answers.verdicts, {answers.device, module_text(answers.info)},
                              "the running kernel's own")};
}

std::vector<Finding> check_recorded_kernel_answers(const RecordedKernelAnswers& recorded, PairList& pairs) {
  Evidence ev{kRecordedKmodPath, module_text(recorded.info) + ", recorded at capture time"};
  return {compare_with_kernel(pairs, recorded.verdicts, ev, "the captured machine's kernel (p2pprobe)")};
}

}  // namespace p2pcheck
