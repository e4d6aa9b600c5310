// verify's plan: which pairs run, with which engine and target, what is refused before anything
// moves (verify_run.cc runs it).
#include "p2pcheck/verify/verify.h"

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <future>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/checks/links.h"
#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/verify/verify_hipfile.h"
#include "p2pcheck/verify/verify_kmod.h"
#include "p2pcheck/verify/verify_p2pmem.h"
#include "uapi/p2pprobe.h"
#include "verify_internal.h"

namespace p2pcheck {
namespace {

std::uint64_t round_down(std::uint64_t n) { return n / kVerifyAlign * kVerifyAlign; }

}  // namespace

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

namespace {

void validate(const VerifyOptions& o) {
  if (o.targets.empty() && o.raw_devices.empty())
    throw UsageError(
        "verify writes real data: name where, --target DIR (a directory on a file system of each NVMe "
        "to test; a scratch file is created and removed there) or --raw DEVICE --offset N "
        "--allow-destructive");
  if (!o.targets.empty() && !o.raw_devices.empty()) throw UsageError("give --target or --raw, not both");
  if (!o.raw_devices.empty()) {
    if (!o.offset) throw UsageError("--raw needs --offset N: the first byte verify may overwrite (a multiple of 4096)");
    if (!o.allow_destructive)
      throw UsageError("--raw overwrites [offset, offset + size) of the device: add --allow-destructive to confirm");
  } else if (o.offset) {
    throw UsageError("--offset is for --raw; scratch files are always written from their start");
  }
  if (o.size && (*o.size == 0 || *o.size % kVerifyAlign))
    throw UsageError("--size " + std::to_string(*o.size) + ": must be a positive multiple of 4096");
  if (!(o.timeout_s > 0)) throw UsageError("--timeout must be more than 0 seconds");
  if (o.directions.empty()) throw UsageError("--direction: name to-device, to-storage or both");
}

// The verdict as it stands when --force lifted the known-bad-kernel override: the path rules alone.
Verdict path_verdict(const PairDecision& d, const KernelRules& rules, bool force) {
  if (!(rules.known_bad && force)) return d.verdict;
  if (!d.distance) return Verdict::kUnknown;
  return *d.distance >= 0 ? (d.unknowns.empty() ? Verdict::kSupported : Verdict::kUnknown) : Verdict::kNotSupported;
}

// One pair's plan: its decision, target, engine and sizes, or the first reason it is not run.
// Long: the gates in the order they refuse a pair (no target, known-bad kernel, the kernel's verdict,
// no engine, no free p2pmem, past the raw device's end), each returning its refusal; split, that
// order would be spread over functions that each hand back half a plan.
PairPlan plan_pair(const VerifyPlan& plan, const DevicePair& pair, const std::map<Bdf, TargetPlan>& targets) {
  const VerifyOptions& o = plan.options;
  PairPlan pp;
  pp.decision = decide_pair(plan.topo, plan.machine, plan.rules, pair);
  pp.rule = rule_text(pp.decision);
  const Function& provider = plan.topo.at(pair.gpu);
  pp.provider_role = role_of(provider, plan.inv);
  // An NVMe as the provider means its CMB: say whose.
  if (const NvmeController* c = plan.inv.nvme_at(pair.gpu); c && pp.provider_role == "NVMe")
    pp.provider_role = "CMB of " + (c->name.empty() ? std::string("NVMe") : c->name);
  pp.provider_driver = provider.driver;
  if (const NvmeController* c = plan.inv.nvme_at(pair.nvme)) pp.nvme_name = c->name;
  pp.ceiling = path_ceiling(pp.decision.walk);
  const std::string nvme_label = pp.nvme_name.empty() ? pair.nvme.str() : pp.nvme_name;

  if (auto t = targets.find(pair.nvme); t != targets.end()) pp.target = t->second;
  if (!pp.target) {
    pp.skipped = true;
    pp.refusal = "no " + std::string(o.raw_devices.empty() ? "--target directory" : "--raw device") + " on " +
                 nvme_label + ": not tested";
    pp.refusal_level = Level::kUnknown;
    return pp;
  }
  auto refuse = [&](std::string why, Level level) {
    pp.refusal = std::move(why);
    pp.refusal_level = level;
    return pp;
  };
  if (plan.rules.known_bad && !o.force)
    return refuse(std::string(plan.rules.known_bad->name) + " kernels (" + plan.rules.release +
                      ") can corrupt memory with P2PDMA: refusing to move data (" + plan.rules.known_bad->source +
                      "); --force to run anyway",
                  Level::kFail);
  if (const KnownBadKernel* base = plan.rules.known_bad_base.row; base && !o.force)
    return refuse(
        "kernel " + plan.rules.release + " is built on " + base->name +
            "'s kernel base, whose kernels can corrupt memory with P2PDMA, and its name does not tell whether "
            "it carries the fix: refusing to move data; --force to run anyway",
        Level::kUnknown);
  Verdict v = path_verdict(pp.decision, plan.rules, o.force);
  if (v == Verdict::kNotSupported && !o.try_anyway)
    return refuse("the kernel will refuse this pair: " + pp.rule + " (--try-anyway to watch it refuse)", Level::kFail);
  if (v == Verdict::kUnknown && !o.try_anyway)
    return refuse("p2pcheck cannot tell whether the kernel allows this pair (unknown: " +
                      join(unknown_texts(pp.decision), "; ") + "); --try-anyway to let the kernel decide",
                  Level::kUnknown);
  EngineChoice choice = choose_engine(provider, o.engine);
  if (!choice.kind) return refuse(choice.refusal, o.engine ? Level::kFail : Level::kUnknown);
  pp.engine = choice.kind;

  // Sizes: what the provider can lend, whole pages, moved in chunks.
  std::uint64_t size = o.size.value_or(kDefaultVerifySize);
  if (*pp.engine == EngineKind::kHipfile) {
    pp.chunk = std::min(size, kHipfileChunk);
  } else {
    std::uint64_t available =
        provider.p2pmem && provider.p2pmem->available ? round_down(*provider.p2pmem->available) : 0;
    if (available == 0)
      return refuse(provider.bdf.str() + " has no free p2pmem (p2pmem/available is 0 or unreadable)", Level::kUnknown);
    if (!o.size) size = std::min(size, available);
    // DMA_TEST allocates two buffers of the chunk size from the pool; a p2pmem mapping takes one.
    std::uint64_t per_buffer = *pp.engine == EngineKind::kKmod ? round_down(available / 2) : available;
    if (per_buffer == 0)
      return refuse(provider.bdf.str() + " has too little free p2pmem for two buffers (" + format_size(available) + ")",
                    Level::kUnknown);
    pp.chunk = std::min({size, kProviderChunk, per_buffer});
  }
  pp.size = size;
  if (pp.target->kind == TargetPlan::Kind::kRawDevice && pp.target->device_bytes &&
      pp.target->raw_offset + size > pp.target->device_bytes)
    throw UsageError("--raw " + pp.target->path + ": offset " + std::to_string(pp.target->raw_offset) + " + size " +
                     std::to_string(size) + " runs past the end of the device (" +
                     std::to_string(pp.target->device_bytes) + " bytes)");
  if (v != Verdict::kSupported)
    pp.notes.push_back("--try-anyway: expected outcome is the kernel's refusal (" + pp.rule + ")");
  if (pp.decision.kernel && pp.decision.kernel_agrees == Tri::kNo)
    pp.notes.push_back("the running kernel's own verdict (p2pprobe) disagrees with p2pcheck's");
  return pp;
}

class LiveEngines : public EngineProvider {
 public:
  explicit LiveEngines(std::shared_ptr<VerifyIo> io) : io_(std::move(io)) {}
  EngineAvailability get(EngineKind kind) override {
    auto it = cache_.find(kind);
    if (it != cache_.end()) return it->second;
    return cache_[kind] = open(kind);
  }

 private:
  EngineAvailability open(EngineKind kind) {
    EngineAvailability out;
    switch (kind) {
      case EngineKind::kP2pmem: out.engine = make_p2pmem_engine(io_); break;
      case EngineKind::kHipfile:
        out = open_hipfile_engine(HipfileConfig{}, std::shared_ptr<DynamicLoader>(open_live_loader()),
                                  open_live_source());
        break;
      case EngineKind::kKmod:
        try {
          auto client = std::make_shared<P2pprobeClient>(open_ioctl_device(P2PPROBE_DEVICE_PATH));
          ModuleInfo info = client->info();
          out.facts.push_back("p2pprobe " + info.module_version + " on kernel " + info.kernel_release);
          if (!info.p2pdma)
            out.problems.push_back("the p2pprobe module's kernel has no CONFIG_PCI_P2PDMA: DMA_TEST cannot run");
          else
            out.engine = make_kmod_engine(client);
        } catch (const Error& e) {
          out.problems.push_back(e.what());
        }
        break;
    }
    return out;
  }

  std::shared_ptr<VerifyIo> io_;
  std::map<EngineKind, EngineAvailability> cache_;
};

}  // namespace

std::uint64_t parse_size(const std::string& text, const std::string& option) {
  size_t used = 0;
  unsigned long long n = 0;
  try {
    // stoull would wrap "-1" around to 2^64 - 1
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) throw std::invalid_argument(text);
    n = std::stoull(text, &used, 10);
  } catch (const std::exception&) {
    throw UsageError(option + " " + text + ": expected a size such as 64M, 1G or 4096");
  }
  std::string unit = text.substr(used);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() > 1 && (unit.back() == 'i' || unit.back() == 'I')) unit.pop_back();
  std::uint64_t mult = 1;
  if (unit == "K" || unit == "k")
    mult = 1ull << 10;
  else if (unit == "M" || unit == "m")
    mult = 1ull << 20;
  else if (unit == "G" || unit == "g")
    mult = 1ull << 30;
  else if (!unit.empty())
    throw UsageError(option + " " + text + ": unknown unit (use K, M or G)");
  if (n > UINT64_MAX / mult) throw UsageError(option + " " + text + ": too large");
  return n * mult;
}

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kPassed: return "passed";
    case Outcome::kRefused: return "refused";
    case Outcome::kFailed: return "failed";
    case Outcome::kMismatch: return "mismatch";
    case Outcome::kTimedOut: return "timeout";
    case Outcome::kNotP2p: return "not_p2p";
    case Outcome::kNotRun: return "not_run";
  }
  return "?";
}

namespace {

// Each target belongs to the NVMe controller(s) its storage sits on; one target per controller.
std::map<Bdf, TargetPlan> plan_targets(const VerifyPlan& plan, const std::vector<DevicePair>& pairs, Source& source,
                                       VerifyIo& io) {
  const VerifyOptions& options = plan.options;
  std::set<Bdf> selected_nvme;
  for (const auto& p : pairs) selected_nvme.insert(p.nvme);
  std::map<Bdf, TargetPlan> targets;
  auto add_target = [&](TargetPlan t, const std::string& option) {
    bool used = false;
    for (const Bdf& c : t.controllers) {
      if (!selected_nvme.count(c)) continue;
      used = true;
      if (!targets.emplace(c, t).second)
        t.notes.push_back("another target on the same NVMe came first; " + t.path + " is not used for it");
    }
    if (!used) {
      std::vector<std::string> names;
      for (const Bdf& c : t.controllers) {
        const NvmeController* n = plan.inv.nvme_at(c);
        names.push_back(n && !n->name.empty() ? n->name + " (" + c.str() + ")" : c.str());
      }
      throw UsageError(option + " " + t.path + " is on " + join(names, ", ") +
                       ", which is not an NVMe of the selected pairs");
    }
  };
  for (const auto& dir : options.targets)
    add_target(resolve_target_dir(dir, io, source, plan.machine, plan.storage, plan.inv), "--target");
  for (const auto& dev : options.raw_devices)
    add_target(resolve_raw_device(dev, *options.offset, io, source, plan.storage, plan.inv), "--raw");
  return targets;
}

// What the user must know before anything is written: raw mode's byte ranges, the NVMe driver's
// timeout a dropped transfer waits for, and --force on a known-bad kernel.
void add_warnings(VerifyPlan& plan) {
  const VerifyOptions& options = plan.options;
  const std::string timeout_text =
      plan.io_timeout_s ? std::to_string(*plan.io_timeout_s) + " s (/sys/module/nvme_core/parameters/io_timeout)"
                        : "30 s by default (/sys/module/nvme_core/parameters/io_timeout unreadable)";
  if (!options.raw_devices.empty()) {
    for (const auto& pp : plan.pairs)
      if (pp.target && pp.target->kind == TargetPlan::Kind::kRawDevice && pp.refusal.empty())
        plan.warnings.push_back("raw mode: overwrites bytes " + std::to_string(pp.target->raw_offset) + " to " +
                                std::to_string(pp.target->raw_offset + pp.size) + " of " + pp.target->path);
    plan.warnings.push_back(
        "a transfer the root complex drops completes only when the NVMe driver's io_timeout fires, " + timeout_text +
        ", often with a controller reset; p2pcheck stops waiting after " + seconds_text(options.timeout_s) +
        " s and starts nothing more");
  }
  if (plan.rules.known_bad && options.force)
    plan.warnings.push_back(std::string("--force: running on ") + plan.rules.known_bad->name +
                            ", whose P2PDMA can corrupt memory");
}

}  // namespace

std::unique_ptr<VerifyPlan> plan_verify(Source& source, VerifyIo& io, const VerifyOptions& options) {
  validate(options);
  auto plan = std::make_unique<VerifyPlan>();
  plan->options = options;
  MachineState state = load_machine_state(source);
  plan->source = std::move(state.source);
  plan->topo = std::move(state.topo);
  plan->inv = std::move(state.inv);
  plan->machine = std::move(state.machine);
  plan->rules = kernel_rules_for(plan->machine, std::nullopt);
  plan->storage = read_storage(source, plan->machine, plan->inv);
  plan->io_timeout_s = nvme_io_timeout(source);
  std::vector<DevicePair> pairs = select_pairs(plan->topo, plan->inv, options.selection);
  std::map<Bdf, TargetPlan> targets = plan_targets(*plan, pairs, source, io);
  for (const auto& p : pairs) plan->pairs.push_back(plan_pair(*plan, p, targets));
  // An NVMe the user named explicitly must have somewhere to write.
  if (!options.selection.nvme.empty())
    for (const auto& pp : plan->pairs)
      if (pp.skipped)
        throw UsageError("--nvme selects " +
                         (pp.nvme_name.empty() ? pp.decision.walk.pair().nvme.str() : pp.nvme_name) + " but no " +
                         (options.raw_devices.empty() ? "--target directory" : "--raw device") + " is on it");
  add_warnings(*plan);
  return plan;
}

std::unique_ptr<EngineProvider> open_live_engines(std::shared_ptr<VerifyIo> io) {
  return std::make_unique<LiveEngines>(std::move(io));
}

}  // namespace p2pcheck