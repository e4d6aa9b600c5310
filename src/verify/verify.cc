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
#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/report/rule_text.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/verify/verify_hipfile.h"
#include "p2pcheck/verify/verify_kmod.h"
#include "p2pcheck/verify/verify_p2pmem.h"
#include "uapi/p2pprobe.h"

namespace p2pcheck {
namespace {

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t round_down(std::uint64_t n) { return n / kVerifyAlign * kVerifyAlign; }

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

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

PairPlan plan_pair(const VerifyPlan& plan, const DevicePair& pair, const std::map<Bdf, TargetPlan>& targets) {
  const VerifyOptions& o = plan.options;
  PairPlan pp;
  pp.decision = decide_pair(plan.topo, plan.inv, plan.machine, plan.rules, pair);
  const Function& provider = plan.topo.at(pair.gpu);
  pp.provider_role = role_of(provider, plan.inv);
  // An NVMe as the provider means its CMB: say whose.
  if (const NvmeController* c = plan.inv.nvme_at(pair.gpu); c && pp.provider_role == "NVMe")
    pp.provider_role = "CMB of " + (c->name.empty() ? std::string("NVMe") : c->name);
  pp.provider_driver = provider.driver;
  if (const NvmeController* c = plan.inv.nvme_at(pair.nvme)) pp.nvme_name = c->name;
  pp.ceiling = path_ceiling(pp.decision.path);
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
  Verdict v = path_verdict(pp.decision, plan.rules, o.force);
  if (v == Verdict::kNotSupported && !o.try_anyway)
    return refuse("the kernel will refuse this pair: " + rule_text(pp.decision) + " (--try-anyway to watch it refuse)",
                  Level::kFail);
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
    pp.notes.push_back("--try-anyway: expected outcome is the kernel's refusal (" + rule_text(pp.decision) + ")");
  if (pp.decision.kernel && pp.decision.kernel_agrees == Tri::kNo)
    pp.notes.push_back("the running kernel's own verdict (p2pprobe) disagrees with p2pcheck's");
  return pp;
}

// Runs one engine transfer on a worker thread and stops waiting at the deadline. A transfer the
// root complex drops does not come back until nvme_core's io_timeout fires, maybe after a reset;
// the worker is then abandoned (it owns everything it uses) and the caller starts nothing else.
std::optional<TransferResult> run_with_deadline(std::shared_ptr<VerifyEngine> engine, TransferRequest request,
                                                std::shared_ptr<OpenTarget> keep, double timeout_s) {
  auto task = std::make_shared<std::packaged_task<TransferResult()>>([engine, request, keep] {
    try {
      return engine->transfer(request);
    } catch (const std::exception& e) {
      TransferResult r;
      r.error_text = e.what();
      return r;
    }
  });
  std::future<TransferResult> done = task->get_future();
  std::thread worker([task] { (*task)(); });
  if (done.wait_for(std::chrono::duration<double>(timeout_s)) != std::future_status::ready) {
    worker.detach();
    return std::nullopt;
  }
  worker.join();
  return done.get();
}

std::string mismatch_text(const DataMismatch& m, std::uint64_t start) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "data mismatch: first bad byte at offset %llu (512-byte block %llu of the test), expected 0x%02x, "
                "found 0x%02x; %llu bad byte(s)",
                static_cast<unsigned long long>(m.offset),
                static_cast<unsigned long long>((m.offset - start) / kPatternBlock), m.expected, m.found,
                static_cast<unsigned long long>(m.count));
  return buf;
}

void classify(const TransferResult& res, const PairPlan& pp, double wall_s, std::optional<int> io_timeout,
              DirectionResult& d) {
  d.error = res.error;
  d.error_text = res.error_text;
  d.bytes = res.bytes;
  d.seconds = res.ns ? static_cast<double>(res.ns) / 1e9 : wall_s;
  if (d.bytes && d.seconds > 0) d.throughput = static_cast<double>(d.bytes) / d.seconds;
  d.mismatch = res.mismatch;
  d.counters = res.counters;
  d.notes = res.notes;
  const bool hipfile = pp.engine == EngineKind::kHipfile;
  // amdgpu's AIS path answers ENODEV where the block layer answers EREMOTEIO (kfd_ais.c).
  const bool refusal = res.error == -EREMOTEIO || (hipfile && res.error == -ENODEV);
  if (refusal) {
    d.outcome = Outcome::kRefused;
    const auto& stacked = pp.target ? pp.target->stacked_layers : std::vector<std::string>{};
    if (!stacked.empty()) {
      d.refused_by = "storage stack";
      d.reason = join(stacked, " on ") +
                 " does not take P2P pages (a stacked queue does not advertise P2PDMA): the "
                 "refusal comes from the storage stack, not the PCI path; test a file system directly on the NVMe";
    } else {
      d.refused_by = "kernel";
      d.reason = "the kernel refused the pair (" + errno_name(res.error) +
                 (res.error == -ENODEV ? " from amdgpu's AIS path, where pci_p2pdma_distance() < 0" : "") +
                 "): " + rule_text(pp.decision);
      if (pp.decision.verdict == Verdict::kSupported)
        d.reason +=
            " — p2pcheck expected it to pass: the running kernel decides differently (compare with the "
            "p2pprobe module's verdict in `p2pcheck check`)";
    }
    return;
  }
  if (res.failed()) {
    d.outcome = Outcome::kFailed;
    std::string why = res.error ? errno_name(res.error) + ": " + errno_meaning(res.error) : "";
    d.reason = res.error_text.empty() ? why : res.error_text + (why.empty() ? "" : " (" + why + ")");
    const int e = -res.error;
    if (io_timeout && wall_s >= 0.8 * *io_timeout && (e == EIO || e == EINTR || e == ETIMEDOUT || e == ECANCELED))
      d.notes.push_back("it took " + std::to_string(static_cast<int>(wall_s)) + " s, about nvme_core's io_timeout (" +
                        std::to_string(*io_timeout) +
                        " s): the root complex probably dropped the transfer and the NVMe driver timed it out, "
                        "usually with a controller reset (see the kernel log)");
    return;
  }
  if (res.mismatch) {
    d.outcome = Outcome::kMismatch;
    d.reason = mismatch_text(*res.mismatch, pp.target ? pp.target->raw_offset : 0);
    return;
  }
  if (res.counters && res.counters->proof == PathProof::kFallback) {
    d.outcome = Outcome::kNotP2p;
    d.reason = res.counters->note;
    return;
  }
  d.outcome = Outcome::kPassed;
  d.reason = "pattern verified";
  if (res.counters) {
    d.reason += res.counters->proof == PathProof::kProven ? "; path proven by amdgpu's AIS counter" : "";
    if (res.counters->proof == PathProof::kUnproven) d.notes.push_back(res.counters->note);
  }
}

std::vector<Bdf> path_devices(const PairDecision& d) {
  std::vector<Bdf> out;
  for (const Function* fn : path_functions(d.path)) out.push_back(fn->bdf);
  return out;
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
  std::set<Bdf> selected_nvme;
  for (const auto& p : pairs) selected_nvme.insert(p.nvme);

  // Each target belongs to the NVMe controller(s) its storage sits on; one target per controller.
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
        const NvmeController* n = plan->inv.nvme_at(c);
        names.push_back(n && !n->name.empty() ? n->name + " (" + c.str() + ")" : c.str());
      }
      throw UsageError(option + " " + t.path + " is on " + join(names, ", ") +
                       ", which is not an NVMe of the selected pairs");
    }
  };
  for (const auto& dir : options.targets)
    add_target(resolve_target_dir(dir, io, source, plan->machine, plan->storage, plan->inv), "--target");
  for (const auto& dev : options.raw_devices)
    add_target(resolve_raw_device(dev, *options.offset, io, source, plan->storage, plan->inv), "--raw");

  for (const auto& p : pairs) plan->pairs.push_back(plan_pair(*plan, p, targets));
  // An NVMe the user named explicitly must have somewhere to write.
  if (!options.selection.nvme.empty())
    for (const auto& pp : plan->pairs)
      if (pp.skipped)
        throw UsageError("--nvme selects " + (pp.nvme_name.empty() ? pp.decision.path.pair.nvme.str() : pp.nvme_name) +
                         " but no " + (options.raw_devices.empty() ? "--target directory" : "--raw device") +
                         " is on it");

  const std::string timeout_text =
      plan->io_timeout_s ? std::to_string(*plan->io_timeout_s) + " s (/sys/module/nvme_core/parameters/io_timeout)"
                         : "30 s by default (/sys/module/nvme_core/parameters/io_timeout unreadable)";
  if (!options.raw_devices.empty()) {
    for (const auto& pp : plan->pairs)
      if (pp.target && pp.target->kind == TargetPlan::Kind::kRawDevice && pp.refusal.empty())
        plan->warnings.push_back("raw mode: overwrites bytes " + std::to_string(pp.target->raw_offset) + " to " +
                                 std::to_string(pp.target->raw_offset + pp.size) + " of " + pp.target->path);
    plan->warnings.push_back(
        "a transfer the root complex drops completes only when the NVMe driver's io_timeout fires, " + timeout_text +
        ", often with a controller reset; p2pcheck stops waiting after " + seconds(options.timeout_s) +
        " s and starts nothing more");
  }
  if (plan->rules.known_bad && options.force)
    plan->warnings.push_back(std::string("--force: running on ") + plan->rules.known_bad->name +
                             ", whose P2PDMA can corrupt memory");
  return plan;
}

namespace {

std::uint64_t base_seed_for(const VerifyOptions& options) {
  if (options.seed) return *options.seed;
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) | rd();
}

// Which of the pair's PCI functions left /sys/bus/pci/devices (hot-unplugged, surprise-removed, or
// dropped by the driver after a failed reset), in words; "" when both are there. A removed NVMe
// makes the block layer answer with whatever a 0-byte device gives (ENOSPC on writes, short reads),
// which would otherwise read like a full file system.
std::string devices_gone(Source& source, const PairPlan& pp) {
  std::vector<std::string> gone;
  const Bdf nvme = pp.decision.path.pair.nvme, gpu = pp.decision.path.pair.gpu;
  auto present = [&](const Bdf& b) { return source.read("/sys/bus/pci/devices/" + b.str() + "/vendor").ok(); };
  if (!present(nvme))
    gone.push_back("the NVMe " + nvme.str() + (pp.nvme_name.empty() ? "" : " (" + pp.nvme_name + ")"));
  if (!present(gpu)) gone.push_back("the provider " + gpu.str());
  if (gone.empty()) return "";
  return join(gone, " and ") + (gone.size() > 1 ? " are" : " is") +
         " gone from /sys/bus/pci/devices: removed during the transfer (hot-unplug, surprise removal, or the "
         "driver gave up on it)";
}

// devices_gone(), looked for again while a removal may still be on its way: the 0-byte device a
// removed NVMe leaves answers ENOSPC (ENODEV, ENXIO once its queues are gone) before the PCI core
// takes the function out of sysfs, which on a slow machine came after the error was reported.
std::string devices_gone_after(VerifyEnvironment& env, const PairPlan& pp, const DirectionResult& d) {
  std::string gone = devices_gone(env.source, pp);
  const bool like_removal = d.error == -ENOSPC || d.error == -ENODEV || d.error == -ENXIO;
  for (auto waited = std::chrono::milliseconds(0); gone.empty() && like_removal && env.pause && waited < kRemovalGrace;
       waited += kRemovalPoll) {
    env.pause(kRemovalPoll);
    gone = devices_gone(env.source, pp);
  }
  return gone;
}

// The direction itself (run_direction below adds what is common to all outcomes).
void run_direction_once(const VerifyPlan& plan, const PairPlan& pp, const EngineAvailability& engine,
                        TargetOpen& opened, const TransferRequest& base, Direction dir, VerifyEnvironment& env,
                        std::string& abandoned_at, DirectionResult& d) {
  const std::uint64_t offset = base.target.offset;
  TransferRequest req = base;
  req.direction = dir;
  // A different seed per direction: data left by the other direction can never pass.
  req.seed = base.seed + (dir == Direction::kToStorage ? 1 : 0);
  if (dir == Direction::kToDevice) {
    HostIoResult host = write_pattern(*env.io, req.target.fd, offset, pp.size, pp.chunk, req.seed);
    if (host.error) {
      d.outcome = Outcome::kFailed;
      d.error = host.error;
      d.reason = "could not put the pattern on storage with ordinary I/O first: " + errno_name(host.error) + ": " +
                 errno_meaning(host.error);
      return;
    }
  }
  if (env.on_transfer_start) env.on_transfer_start(pp, dir);
  auto t0 = std::chrono::steady_clock::now();
  std::optional<TransferResult> res = run_with_deadline(engine.engine, req, opened.target, plan.options.timeout_s);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!res) {
    d.outcome = Outcome::kTimedOut;
    d.seconds = wall;
    d.reason = "no completion within " + seconds(plan.options.timeout_s) +
               " s: the transfer was probably dropped by the root complex; the NVMe driver gives up after its "
               "io_timeout (" +
               (plan.io_timeout_s ? std::to_string(*plan.io_timeout_s) : std::string("30")) +
               " s) and usually resets the controller";
    abandoned_at = (pp.nvme_name.empty() ? base.client.str() : pp.nvme_name) + " " + to_string(dir);
    return;
  }
  classify(*res, pp, wall, plan.io_timeout_s, d);
  if (dir == Direction::kToStorage && d.outcome == Outcome::kPassed) {
    // The P2P write reached the file: read it back the ordinary way.
    env.io->fsync(req.target.fd);
    HostIoResult back = read_and_check(*env.io, req.target.fd, offset, pp.size, pp.chunk, req.seed);
    if (back.error) {
      d.outcome = Outcome::kFailed;
      d.error = back.error;
      d.reason = "the P2P write reported success but reading it back failed: " + errno_name(back.error) + ": " +
                 errno_meaning(back.error);
    } else if (back.mismatch) {
      d.outcome = Outcome::kMismatch;
      d.mismatch = back.mismatch;
      d.reason = mismatch_text(*back.mismatch, offset) + " (read back from storage after the P2P write)";
    }
  }
}

// One direction of one pair: put the pattern where the engine reads it, move it by P2P DMA under a
// deadline, and check what arrived.
// `abandoned_at` names the transfer that never completed ("nvme1 to-storage"); once it is set,
// nothing else may touch any NVMe. `removed` says which device vanished during an earlier direction.
void run_direction(const VerifyPlan& plan, const PairPlan& pp, const EngineAvailability& engine, TargetOpen& opened,
                   const TransferRequest& base, Direction dir, VerifyEnvironment& env, std::string& abandoned_at,
                   std::string& removed, DirectionResult& d) {
  d.direction = dir;
  if (!abandoned_at.empty()) {
    d.reason = "not run: the previous transfer did not complete";
    return;
  }
  if (!removed.empty()) {
    d.reason = "not run: " + removed;
    return;
  }
  run_direction_once(plan, pp, engine, opened, base, dir, env, abandoned_at, d);
  if (d.outcome != Outcome::kPassed && d.outcome != Outcome::kRefused && d.outcome != Outcome::kNotRun) {
    removed = devices_gone_after(env, pp, d);
    if (!removed.empty()) d.reason = removed + "; " + d.reason;
  }
}

// One pair: open its target, run each direction, then record AER counters and the kernel log, and
// remove the scratch file. `r.problem` says why it could not start.
void run_pair(const VerifyPlan& plan, const PairPlan& pp, std::uint64_t seed, VerifyEnvironment& env,
              std::string& abandoned_at, PairResult& r) {
  if (!abandoned_at.empty()) {
    r.problem = "not run: " + abandoned_at + " did not complete, and the NVMe may still be resetting";
    return;
  }
  EngineAvailability engine = env.engines.get(*pp.engine);
  r.engine_facts = engine.facts;
  if (!engine.engine) {
    r.problem = std::string(to_string(*pp.engine)) + " cannot run here: " + join(engine.problems, "; ");
    if (env.on_pair_done) env.on_pair_done(pp, r);
    return;
  }
  const TargetPlan& tp = *pp.target;
  const std::uint64_t offset = tp.kind == TargetPlan::Kind::kRawDevice ? tp.raw_offset : 0;
  TargetOpen opened = tp.kind == TargetPlan::Kind::kScratchFile ? create_scratch_file(env.io, tp, offset + pp.size)
                                                                : open_raw_device(env.io, tp);
  r.notes = opened.notes;
  if (!opened.target) {
    r.problem = opened.problem;
    if (env.on_pair_done) env.on_pair_done(pp, r);
    return;
  }
  r.target_file = opened.target->path();
  r.seed = seed;
  r.aer_devices = path_devices(pp.decision);
  AerSnapshot aer_before = read_aer(env.source, r.aer_devices);
  if (env.kernel_log) r.kernel_log_problem = env.kernel_log->start();

  TransferRequest base;
  base.provider = pp.decision.path.pair.gpu;
  base.client = pp.decision.path.pair.nvme;
  base.target = {opened.target->fd(), opened.target->path(), tp.kind == TargetPlan::Kind::kRawDevice, offset, pp.size};
  base.chunk = pp.chunk;
  base.seed = r.seed;
  std::string removed;
  for (Direction dir : plan.options.directions)
    run_direction(plan, pp, engine, opened, base, dir, env, abandoned_at, removed, r.directions.emplace_back());

  if (abandoned_at.empty()) env.io->fsync(opened.target->fd());
  AerSnapshot aer_after = read_aer(env.source, r.aer_devices);
  r.aer_changes = aer_changes(aer_before, aer_after);
  r.aer_not_reported = aer_after.not_reported;
  r.aer_unreadable = aer_after.unreadable;
  if (env.kernel_log && r.kernel_log_problem.empty())
    for (auto& line : env.kernel_log->read_new())
      if (kmsg_relevant(line)) r.kernel_log.push_back(std::move(line));
  if (tp.kind == TargetPlan::Kind::kScratchFile) {
    std::string problem = remove_scratch_file(*env.io, r.target_file);
    r.target_removed = problem.empty();
    if (!problem.empty()) r.notes.push_back(problem);
  }
  opened.target.reset();  // closes it, unless an abandoned worker still holds it
  if (env.on_pair_done) env.on_pair_done(pp, r);
}

// PASS needs at least one direction that ran, and every direction that ran to pass.
void summarize(VerifyReport& report) {
  const VerifyPlan& plan = *report.plan;
  Level result = Level::kPass;
  int passed = 0, total = 0;
  auto worse = [&](Level l) {
    if (severity(l) > severity(result)) result = l;
  };
  for (size_t i = 0; i < plan.pairs.size(); ++i) {
    const PairPlan& pp = plan.pairs[i];
    const PairResult& r = report.results[i];
    if (pp.skipped) continue;
    if (!pp.refusal.empty()) {
      worse(pp.refusal_level);
      continue;
    }
    if (!r.problem.empty()) worse(r.problem_level);
    for (const auto& d : r.directions) {
      ++total;
      if (d.outcome == Outcome::kPassed)
        ++passed;
      else
        worse(d.outcome == Outcome::kNotRun ? Level::kUnknown : Level::kFail);
    }
  }
  if (passed == 0 && result == Level::kPass) result = Level::kUnknown;
  report.result = result;
  report.finished_at = utc_now();
  report.summary = std::to_string(passed) + " of " + std::to_string(total) + " direction(s) passed";
  int refused = 0, not_started = 0;
  for (size_t i = 0; i < plan.pairs.size(); ++i) {
    if (plan.pairs[i].skipped) continue;
    refused += !plan.pairs[i].refusal.empty();
    not_started += plan.pairs[i].refusal.empty() && !report.results[i].problem.empty();
  }
  if (refused) report.summary += "; " + std::to_string(refused) + " pair(s) refused before running";
  if (not_started) report.summary += "; " + std::to_string(not_started) + " pair(s) could not run here";
}

}  // namespace

VerifyReport run_verify(std::unique_ptr<VerifyPlan> plan_in, VerifyEnvironment& env) {
  VerifyReport report;
  report.plan = std::move(plan_in);
  const VerifyPlan& plan = *report.plan;
  std::uint64_t base_seed = base_seed_for(plan.options);
  std::string abandoned_at;
  for (size_t i = 0; i < plan.pairs.size(); ++i) {
    const PairPlan& pp = plan.pairs[i];
    PairResult& r = report.results.emplace_back();
    if (pp.skipped || !pp.refusal.empty()) continue;
    run_pair(plan, pp, base_seed + 2 * i, env, abandoned_at, r);
  }
  report.abandoned = !abandoned_at.empty();
  summarize(report);
  return report;
}

std::unique_ptr<EngineProvider> open_live_engines(std::shared_ptr<VerifyIo> io) {
  return std::make_unique<LiveEngines>(std::move(io));
}

}  // namespace p2pcheck
