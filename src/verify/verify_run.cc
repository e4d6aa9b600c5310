// verify's run: each pair's directions under a deadline, the data checked, the outcome classified,
// and the report's result.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <future>
#include <random>
#include <thread>

#include "p2pcheck/checks/links.h"
#include "p2pcheck/rules/pair_walk.h"
#include "p2pcheck/rules/policy.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/verify/verify.h"
#include "verify_internal.h"

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

// A transfer the kernel or the storage stack refused: which, and why in words.
void classify_refusal(const TransferResult& res, const PairPlan& pp, DirectionResult& d) {
  d.outcome = Outcome::kRefused;
  const auto& stacked = pp.target ? pp.target->stacked_layers : std::vector<std::string>{};
  if (!stacked.empty()) {
    d.refused_by = "storage stack";
    d.reason = join(stacked, " on ") +
               " does not take P2P pages (a stacked queue does not advertise P2PDMA): the "
               "refusal comes from the storage stack, not the PCI path; test a file system directly on the NVMe";
    return;
  }
  d.refused_by = "kernel";
  d.reason = "the kernel refused the pair (" + errno_name(res.error) +
             (res.error == -ENODEV ? " from amdgpu's AIS path, where pci_p2pdma_distance() < 0" : "") + "): " + pp.rule;
  if (pp.decision.verdict == Verdict::kSupported)
    d.reason +=
        " — p2pcheck expected it to pass: the running kernel decides differently (compare with the "
        "p2pprobe module's verdict in `p2pcheck check`)";
}

void classify(const TransferResult& res, const PairPlan& pp, double wall_s, std::optional<int> io_timeout,
              const P2pRefusalErrno& refusal_errno, DirectionResult& d) {
  d.error = res.error;
  d.error_text = res.error_text;
  d.bytes = res.bytes;
  d.seconds = res.ns ? static_cast<double>(res.ns) / 1e9 : wall_s;
  if (d.bytes && d.seconds > 0) d.throughput = static_cast<double>(d.bytes) / d.seconds;
  d.mismatch = res.mismatch;
  d.counters = res.counters;
  d.notes = res.notes;
  const bool hipfile = pp.engine == EngineKind::kHipfile;
  // amdgpu's AIS path answers ENODEV where the block layer answers EREMOTEIO (kfd_ais.c); from
  // 6.17 the block layer answers a refused P2P map with EINVAL (policy.h kP2pRefusalErrnos).
  const bool refusal = res.error == -EREMOTEIO || (hipfile && res.error == -ENODEV) ||
                       (refusal_errno.errno_value != EREMOTEIO && res.error == -refusal_errno.errno_value);
  if (refusal) {
    classify_refusal(res, pp, d);
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
  for (const Function* fn : walk_functions(d.walk)) out.push_back(fn->bdf);
  return out;
}

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
  const Bdf nvme = pp.decision.walk.pair().nvme, gpu = pp.decision.walk.pair().gpu;
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
    d.reason = "no completion within " + seconds_text(plan.options.timeout_s) +
               " s: the transfer was probably dropped by the root complex; the NVMe driver gives up after its "
               "io_timeout (" +
               (plan.io_timeout_s ? std::to_string(*plan.io_timeout_s) : std::string("30")) +
               " s) and usually resets the controller";
    abandoned_at = (pp.nvme_name.empty() ? base.client.str() : pp.nvme_name) + " " + to_string(dir);
    return;
  }
  const std::optional<KernelVersion>& v = plan.rules.version;
  classify(*res, pp, wall, plan.io_timeout_s, v ? p2p_refusal_errno(v->major, v->minor) : p2p_refusal_errno(0, 0), d);
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
  base.provider = pp.decision.walk.pair().gpu;
  base.client = pp.decision.walk.pair().nvme;
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

}  // namespace p2pcheck
