// run_check: load the machine once, decide the pairs, run each check's read step, then its pure
// check, and sum the findings and verdicts up into one result.
#include "p2pcheck/checks/check.h"

#include <algorithm>
#include <string_view>

#include "p2pcheck/checks/gpu.h"
#include "p2pcheck/checks/iommu.h"
#include "p2pcheck/checks/kernel.h"
#include "p2pcheck/checks/kernel_module.h"
#include "p2pcheck/checks/links.h"
#include "p2pcheck/checks/recorded.h"
#include "p2pcheck/checks/storage.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// What the check reads beyond load_machine_state, all of it before any check runs.
struct CheckReads {
  std::optional<RecordedKernelAnswers> recorded_answers;  // replay only
  ModuleAnswers module_answers;                           // live only
  IommuState iommu;
  GpuState gpu;
  StorageLayout storage;
  std::optional<RecordedVerify> recorded_verify;  // replay only
};

// Every read of the checks goes through here, and none needs a decided pair: capture records
// exactly these (read_check_inputs) without deciding. The kernel module is asked in run_check.
CheckReads read_everything(Source& source, const CheckOptions& options, const Machine& machine, const Topology& topo,
                           const Inventory& inv) {
  CheckReads reads;
  const UncarriedAreas& absent = options.not_carried;
  // A capture's recorded answers stand in for the module on replay; never on the live machine.
  if (!absent.has(CheckArea::kKernelModule) && !source.is_live())
    reads.recorded_answers = read_recorded_kernel_answers(source);
  if (!absent.has(CheckArea::kIommu)) reads.iommu = read_iommu(source);
  if (!absent.has(CheckArea::kGpuStack)) reads.gpu = read_gpu(source, machine, topo, inv);
  if (!absent.has(CheckArea::kStorage)) reads.storage = read_storage(source, machine, inv);
  if (!source.is_live() && !absent.has(CheckArea::kRecordedVerify))
    reads.recorded_verify = read_recorded_verify(source);
  return reads;
}

// One UNKNOWN finding for a part of the check the input cannot carry, under that part's usual id.
Finding not_carried_finding(CheckArea area, const std::string& why, const std::string& source) {
  static const struct {
    CheckArea area;
    const char* id;
    const char* what;
  } parts[] = {
      {CheckArea::kIommu, "iommu.state", "IOMMU mode and kernel command line"},
      {CheckArea::kGpuStack, "gpu.driver", "GPU driver stack (amdgpu, KFD, HIP runtime, hipFile) and BAR sizes"},
      {CheckArea::kStorage, "storage.stack", "storage stack (namespaces, file systems, device mapper, multipath)"},
  };
  for (const auto& part : parts)
    if (part.area == area) {
      Finding f{part.id,
                Level::kUnknown,
                "",
                std::string(part.what) + " unknown: " + why,
                {{source, why}},
                "run `p2pcheck check` on the machine once it is built"};
      f.not_carried = why;
      return f;
    }
  return {};
}

// A GPU or NVMe no one can use as it is bound (inventory.h): out of the pairs, said once each.
std::vector<Finding> unusable_findings(const Topology& topo, const Inventory& inv) {
  std::vector<Finding> out;
  for (const UnusableEndpoint& u : inv.unusable) {
    const Function& fn = topo.at(u.bdf);
    Finding f{"inventory.unusable",
              Level::kInfo,
              u.bdf.str(),
              std::string(u.gpu ? "GPU" : "NVMe function") + " " + u.why() +
                  ": hipFile and GDS cannot use it; left out of the pairs and their counts (name it with " +
                  (u.gpu ? "--gpu" : "--nvme") + " to judge it anyway)",
              {{fn.sysfs_path + "/driver", u.driver.empty() ? "(no driver link)" : u.driver}},
              ""};
    f.devices.push_back(u.bdf);
    out.push_back(std::move(f));
  }
  return out;
}

ResultCounts count_results(const CheckReport& report) {
  ResultCounts c;
  c.pairs = report.pairs.size();
  for (std::size_t i = 0; i < report.pairs.size(); ++i) {
    Verdict verdict = report.pairs.shared(i).verdict;
    c.allowed += verdict == Verdict::kSupported;
    c.refused += verdict == Verdict::kNotSupported;
    c.undecided += verdict == Verdict::kUnknown;
  }
  for (const auto& f : report.findings) {
    if (!concerns_selected_pairs(f, report)) continue;
    c.failing += f.level == Level::kFail;
    c.unknown += f.level == Level::kUnknown;
    c.warnings += f.level == Level::kWarn;
  }
  return c;
}

// Whether an --nvme value is a path (path_target.h): the storage is read before pairs are chosen.
bool needs_targets(const CheckOptions& options) {
  return options.mounted_targets || std::any_of(options.selection.nvme.begin(), options.selection.nvme.end(),
                                                [](const std::string& s) { return is_path_selector(s); });
}

// The selection with each --nvme path replaced by the addresses of the controllers below it (and for
// `mounts`, every controller below a mounted file system); the targets go into the report.
PairSelection select_targets(Source& source, const CheckOptions& options, StorageLayout storage, CheckReport& report) {
  if (options.not_carried.has(CheckArea::kStorage)) {
    storage.mounts_not_carried = storage.block_not_carried = options.not_carried.why;
    storage.block_known = false;
  }
  PairSelection sel = options.selection;
  std::vector<std::string> nvme;
  auto add = [&](const PathTarget& t) {
    for (const auto& c : t.controllers)
      if (std::find(nvme.begin(), nvme.end(), c.bdf.str()) == nvme.end()) nvme.push_back(c.bdf.str());
  };
  if (options.mounted_targets) {
    if (!sel.nvme.empty())
      throw UsageError(
          "--nvme does not apply to `mounts`, which lists every file system on NVMe; "
          "`p2pcheck --nvme PATH check` judges one");
    if (std::string why = mounts_unknown_why(report.machine, storage); !why.empty())
      report.targets_unknown = "the mount table is " + why;
    else if (!storage.block_known)
      report.targets_unknown =
          "the block layer is " + (storage.block_not_carried.empty() ? "unreadable" : storage.block_not_carried);
    else
      report.targets = mounted_nvme_targets(report.machine, storage);
  }
  for (const std::string& s : sel.nvme) {
    if (!is_path_selector(s)) {
      nvme.push_back(s);
      continue;
    }
    report.targets.push_back(resolve_path_target(source, s, report.machine, storage, sel.nvme_named_by));
  }
  report.nvme_by_path_only = !options.mounted_targets && !report.targets.empty() && nvme.empty();
  for (const auto& t : report.targets) add(t);
  sel.nvme = std::move(nvme);
  return sel;
}

}  // namespace

Result result_for(const ResultCounts& c, const FailPolicy& policy) {
  if (c.pairs == 0) return Result::kNoPairs;
  bool unknown = c.undecided > 0 || c.unknown > 0;
  if (c.allowed == 0 && c.refused > 0) return Result::kFail;
  if ((policy.refused && c.refused > 0) || (policy.stack && c.failing > 0) || (policy.unknown && unknown) ||
      (policy.warn && c.warnings > 0))
    return Result::kFail;
  return unknown ? Result::kUnknown : Result::kPass;
}

namespace {

bool* category_named(FailPolicy& policy, std::string_view name) {
  if (name == "refused") return &policy.refused;
  if (name == "stack") return &policy.stack;
  if (name == "unknown") return &policy.unknown;
  if (name == "warn") return &policy.warn;
  return nullptr;
}

}  // namespace

FailPolicy parse_fail_policy(const std::string& text) {
  const std::string expected =
      "expected a comma-separated list of refused, stack, unknown, warn (each adds to the default refused,stack), "
      "-NAME to leave one of the default out, or default";
  if (text.empty()) throw UsageError("--fail-on: an empty list; " + expected);
  FailPolicy policy;
  std::string_view rest = text;
  while (true) {
    std::string_view word = rest.substr(0, rest.find(','));
    const bool remove = !word.empty() && word.front() == '-';
    std::string_view name = remove ? word.substr(1) : word;
    bool* category = category_named(policy, name);
    if (word.empty()) throw UsageError("--fail-on " + text + ": an empty name in the list; " + expected);
    if (name == "default" && !remove) {
      // the default: nothing to add
    } else if (!category) {
      throw UsageError("--fail-on " + text + ": '" + std::string(word) + "' is no category; " + expected);
    } else {
      *category = !remove;
    }
    if (word.size() == rest.size()) break;
    rest.remove_prefix(word.size() + 1);
  }
  return policy;
}

std::optional<FailPolicy> fail_policy_of_words(const std::vector<std::string>& words) {
  FailPolicy policy{false, false, false, false};
  for (const std::string& word : words) {
    bool* category = category_named(policy, word);
    if (!category) return std::nullopt;
    *category = true;
  }
  return policy;
}

std::vector<std::string> fail_policy_words(const FailPolicy& policy) {
  std::vector<std::string> words;
  if (policy.refused) words.push_back("refused");
  if (policy.stack) words.push_back("stack");
  if (policy.unknown) words.push_back("unknown");
  if (policy.warn) words.push_back("warn");
  return words;
}

std::string fail_policy_option(const FailPolicy& policy) {
  std::vector<std::string> words;
  if (!policy.refused) words.push_back("-refused");
  if (!policy.stack) words.push_back("-stack");
  if (policy.unknown) words.push_back("unknown");
  if (policy.warn) words.push_back("warn");
  return words.empty() ? "default" : join(words, ",");
}

const char* to_string(Result result) {
  switch (result) {
    case Result::kPass: return "PASS";
    case Result::kFail: return "FAIL";
    case Result::kUnknown: return "UNKNOWN";
    case Result::kNoPairs: return "NO PAIRS";
  }
  return "UNKNOWN";
}

bool concerns_selected_pairs(const Finding& finding, const CheckReport& report) {
  if (finding.devices.empty()) return true;
  // A file system asked about by path: another file system's stack on the same drive (an md array
  // on its other partition) does not decide whether this one goes peer-to-peer.
  if (report.nvme_by_path_only && (finding.id == "storage.stack" || finding.id == "storage.raw"))
    return std::any_of(report.targets.begin(), report.targets.end(), [&](const PathTarget& t) {
      // The same finding: one per file system, told apart by what it says of its mount.
      return t.stack_finding && t.stack_finding->id == finding.id && t.stack_finding->subject == finding.subject &&
             t.stack_finding->message == finding.message;
    });
  return std::any_of(finding.devices.begin(), finding.devices.end(),
                     [&](const Bdf& device) { return report.selected_devices.count(device) != 0; });
}

bool UncarriedAreas::has(CheckArea area) const { return std::find(areas.begin(), areas.end(), area) != areas.end(); }

std::unique_ptr<CheckReport> run_check(Source& source, const CheckOptions& options) {
  return run_check(load_machine_state(source, options.load), source, options);
}

CheckInputs read_check_inputs(Source& source, const CheckOptions& options) {
  CheckInputs in{load_machine_state(source), {}};
  in.state.inv.index();
  CheckReads reads = read_everything(source, options, in.state.machine, in.state.topo, in.state.inv);
  PairSelection selection = options.selection;
  if (needs_targets(options)) {
    CheckReport targets;  // only its machine is read, its targets written
    targets.machine = in.state.machine;
    selection = select_targets(source, options, std::move(reads.storage), targets);
  }
  in.pairs = select_pairs(in.state.topo, in.state.inv, selection);
  return in;
}

namespace {

// The p2pprobe module's answers, asked the way the CLI handed in (live only), or why not asked.
ModuleAnswers kernel_module_answers(const CheckOptions& options, const PairList& pairs) {
  if (options.ask_kernel_module) return options.ask_kernel_module(pairs);
  ModuleAnswers answers;
  answers.not_asked_why = options.kernel_module_problem;
  return answers;
}

}  // namespace

std::unique_ptr<CheckReport> run_check(MachineState state, Source& source, const CheckOptions& options) {
  auto report = std::make_unique<CheckReport>();
  report->source = std::move(state.source);
  report->topo = std::move(state.topo);  // before deciding: the decisions point into report->topo
  report->inv = std::move(state.inv);
  report->machine = std::move(state.machine);
  report->inv.index();  // a state made in a test may not be indexed yet
  report->supplied = apply_supplied(report->machine, options.supplied);
  report->rules = kernel_rules_for(report->machine, options.what_if_kernel, options.what_if_image.get());
  // A path among --nvme needs the storage stacks before the pairs: read first, then, once only.
  std::optional<CheckReads> early;
  PairSelection selection = options.selection;
  if (needs_targets(options)) {
    early = read_everything(source, options, report->machine, report->topo, report->inv);
    selection = select_targets(source, options, early->storage, *report);
  }
  std::vector<DevicePair> selected;
  if (!options.mounted_targets || !selection.nvme.empty())
    selected = select_pairs(report->topo, report->inv, selection);
  // decide_pair() for each, made once per class of pairs that read the same facts
  report->pairs = PairDecider(report->topo, report->machine, report->rules).decide_all(selected);
  // The list numbers each device of its pairs once: those, not every pair's two, go in the set.
  for (std::uint32_t e = 0; e < report->pairs.ends(); ++e) {
    report->selected_devices.insert(report->pairs.end(e).bdf);
    // Each pair's locality (model/locality.h) reads its two ends' NUMA nodes, and no other function's.
    Function& fn = report->topo.functions.at(report->pairs.end(e).bdf);
    if (fn.numa_unknown == kNumaNotRead) read_function_numa(source, fn);
  }
  std::vector<DevicePair>().swap(selected);  // decided: its memory is free for the reads below

  CheckReads reads =
      early ? std::move(*early) : read_everything(source, options, report->machine, report->topo, report->inv);
  if (!options.not_carried.has(CheckArea::kKernelModule) && !reads.recorded_answers)
    reads.module_answers = kernel_module_answers(options, report->pairs);

  auto add = [&](std::vector<Finding> more) {
    report->findings.insert(report->findings.end(), more.begin(), more.end());
  };
  const UncarriedAreas& absent = options.not_carried;
  add(check_kernel(report->machine, report->rules));
  add(unusable_findings(report->topo, report->inv));
  if (reads.recorded_answers)
    add(check_recorded_kernel_answers(*reads.recorded_answers, report->pairs));
  else if (!absent.has(CheckArea::kKernelModule))
    add(check_kernel_module(reads.module_answers, source.is_live(), report->pairs));
  // Each part in its usual place, or the UNKNOWN that stands for it.
  auto part = [&](CheckArea area, auto check) {
    add(absent.has(area) ? std::vector{not_carried_finding(area, absent.why, report->source)} : check());
  };
  part(CheckArea::kIommu, [&] { return check_iommu(reads.iommu, report->machine, report->topo, report->pairs); });
  add(check_links(report->topo, report->inv, report->pairs));
  part(CheckArea::kGpuStack, [&] { return check_gpu(reads.gpu, report->machine, report->topo, report->inv); });
  part(CheckArea::kStorage, [&] { return check_storage(reads.storage); });
  if (reads.recorded_verify) add({check_recorded_verify(*reads.recorded_verify, report->pairs)});
  for (Finding& f : report->findings) finish_provenance(f);
  report->fail_on = options.fail_on;
  report->counts = count_results(*report);
  report->result = result_for(report->counts, report->fail_on);
  if (!report->targets_unknown.empty()) report->result = Result::kUnknown;  // `mounts` could not list them
  return report;
}

}  // namespace p2pcheck
