// `p2pcheck verify` end to end on fixture machines: the plan's safety refusals, each engine through
// the runner with real scratch files (fakes only where the hardware would be), classification of
// refusals, failures, mismatches, fallbacks and timeouts, and the JSON document.
#include "p2pcheck/verify/verify.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/verify/verify_hipfile.h"
#include "p2pcheck/verify/verify_kmod.h"
#include "p2pcheck/verify/verify_p2pmem.h"
#include "p2pcheck/verify/verify_report.h"
#include "test_expect.h"
#include "test_paths.h"
#include "verify_fakes.h"

namespace p2pcheck {
namespace {

// tests/json_schema_test.py runs these tests with P2PCHECK_VERIFY_JSON_DIR set and validates the
// verify documents they leave there against docs/schema/p2pcheck.schema.json.
void keep_for_schema_test(const nlohmann::ordered_json& doc, const std::string& name) {
  if (const char* dir = std::getenv("P2PCHECK_VERIFY_JSON_DIR"))
    save_verify_results(doc, std::string(dir) + "/" + name);
}

using namespace p2pcheck::testing;

// epyc-mi300x-8gpu: GPU 0000:03:00.0, nvme0 0000:05:00.0 (nvme0n1 259:0, has a 64 MiB CMB as
// published p2pmem) and nvme1 0000:06:00.0 (nvme1n1 259:1) under one switch; md0 (9:0) over
// nvme6n1 and nvme7n1 at /scratch.
struct VerifyRun {
  std::unique_ptr<Source> source;
  std::shared_ptr<FakeIo> io = std::make_shared<FakeIo>();
  FakeEngines engines;
  FakeKernelLog kmsg;
  VerifyOptions options;
  TempDir nvme0_dir, nvme1_dir;

  explicit VerifyRun(const std::string& fixture = "epyc-mi300x-8gpu")
      : source(open_tree_source(fixture_root(fixture))) {
    options.size = 1 << 20;
    options.timeout_s = 20;
  }
  // A real directory that "is" on the fixture's block device major:minor.
  std::string target_on(TempDir& dir, unsigned major, unsigned minor) {
    io->dir_on(dir.path(), major, minor);
    options.targets.push_back(dir.path());
    return dir.path();
  }
  std::unique_ptr<VerifyPlan> plan() { return plan_verify(*source, *io, options); }
  // Called for each pause verify makes (none by default: its waits are the tests' to play out).
  std::function<void(std::chrono::milliseconds)> pause;
  VerifyReport run() {
    VerifyEnvironment env{*source, io, engines, &kmsg, nullptr, nullptr, pause};
    return run_verify(plan(), env);
  }
};

const PairResult* ran(const VerifyReport& r) {
  for (size_t i = 0; i < r.results.size(); ++i)
    if (!r.plan->pairs[i].skipped && r.plan->pairs[i].refusal.empty()) return &r.results[i];
  return nullptr;
}

// An engine whose every transfer fails with `error` (a negative errno).
std::function<TransferResult(const TransferRequest&)> failing_with(int error) {
  return [error](const TransferRequest&) {
    TransferResult t;
    t.error = error;
    return t;
  };
}

TEST(Verify, OptionsSayWhereToWriteAndConfirmRawMode) {
  VerifyRun r;
  r.options.targets.clear();
  EXPECT_NE(usage_error([&] { r.plan(); }).find("--target DIR"), std::string::npos);
  r.options.raw_devices = {"/dev/nvme1n1"};
  EXPECT_NE(usage_error([&] { r.plan(); }).find("--offset"), std::string::npos);
  r.options.offset = 0;
  EXPECT_NE(usage_error([&] { r.plan(); }).find("--allow-destructive"), std::string::npos);
  r.options.raw_devices.clear();
  r.target_on(r.nvme1_dir, 259, 1);
  EXPECT_NE(usage_error([&] { r.plan(); }).find("--offset is for --raw"), std::string::npos);
  r.options.offset.reset();
  r.options.size = 1000;
  EXPECT_NE(usage_error([&] { r.plan(); }).find("multiple of 4096"), std::string::npos);
}

TEST(Verify, TargetMustBeOnASelectedNvme) {
  VerifyRun r;
  r.options.selection = {{"0000:03:00.0"}, {"nvme0"}};
  r.target_on(r.nvme1_dir, 259, 1);
  EXPECT_NE(usage_error([&] { r.plan(); }).find("nvme1 (0000:06:00.0), which is not an NVMe of the selected pairs"),
            std::string::npos);
  r.options.selection = {{"0000:03:00.0"}, {"nvme0", "nvme1"}};
  EXPECT_NE(usage_error([&] { r.plan(); }).find("--nvme selects nvme0 but no --target directory is on it"),
            std::string::npos);
}

TEST(Verify, PlanPicksEngineTargetSizeAndLeavesOtherNvmeOut) {
  VerifyRun r;
  r.options.size.reset();
  r.options.selection.gpu = {"0000:03:00.0"};
  r.target_on(r.nvme1_dir, 259, 1);
  auto plan = r.plan();
  int runnable = 0, skipped = 0;
  for (const auto& pp : plan->pairs) {
    if (pp.skipped) {
      ++skipped;
      continue;
    }
    ++runnable;
    EXPECT_EQ(pp.nvme_name, "nvme1");
    EXPECT_EQ(pp.engine, EngineKind::kHipfile);
    EXPECT_EQ(pp.provider_role, "GPU");
    EXPECT_EQ(pp.size, kDefaultVerifySize);
    EXPECT_EQ(pp.chunk, kHipfileChunk);
    ASSERT_TRUE(pp.ceiling);
    EXPECT_GT(*pp.ceiling, 1e9);
  }
  EXPECT_EQ(runnable, 1);
  EXPECT_EQ(skipped, 8);
  EXPECT_TRUE(plan->warnings.empty());
  EXPECT_EQ(plan->io_timeout_s, 30);
  std::string text = verify_plan_text(*plan, TextStyle{false, false});
  EXPECT_NE(text.find("hipfile, 64 MiB each way via scratch file in " + r.nvme1_dir.path() +
                      " (nvme1n1, ext4 at /mnt/nvme1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("not tested (no target on them): nvme0, nvme2"), std::string::npos) << text;
}

TEST(Verify, KnownBadKernelIsRefusedUnlessForced) {
  VerifyRun r("rhel98-epyc");
  r.options.selection = {{"0000:43:00.0"}, {"nvme1"}};
  r.target_on(r.nvme1_dir, 259, 4);  // nvme1n1 at /data
  auto plan = r.plan();
  ASSERT_EQ(plan->pairs.size(), 1u);
  EXPECT_NE(plan->pairs[0].refusal.find("RHEL 9.8 kernels"), std::string::npos) << plan->pairs[0].refusal;
  EXPECT_NE(plan->pairs[0].refusal.find("--force"), std::string::npos);
  EXPECT_EQ(plan->pairs[0].refusal_level, Level::kFail);
  VerifyReport report = r.run();
  EXPECT_EQ(report.result, Level::kFail);
  EXPECT_TRUE(r.engines.asked.empty());  // nothing was even opened

  r.options.force = true;
  plan = r.plan();
  EXPECT_EQ(plan->pairs[0].refusal.find("RHEL"), std::string::npos) << plan->pairs[0].refusal;
  ASSERT_FALSE(plan->warnings.empty());
  EXPECT_NE(plan->warnings[0].find("--force: running on RHEL 9.8"), std::string::npos);
}

TEST(Verify, NotSupportedPairIsRefusedUnlessTryAnywayThenTheKernelSaysWhichRule) {
  VerifyRun r("intel-xeon-broadwell");
  r.target_on(r.nvme0_dir, 259, 2);  // nvme0n1p2 at /
  auto plan = r.plan();
  ASSERT_EQ(plan->pairs.size(), 1u);
  EXPECT_NE(plan->pairs[0].refusal.find("the kernel will refuse this pair: through the root complex"),
            std::string::npos)
      << plan->pairs[0].refusal;
  EXPECT_NE(plan->pairs[0].refusal.find("--try-anyway"), std::string::npos);

  r.options.try_anyway = true;
  r.engines.add(EngineKind::kHipfile, [](const TransferRequest&) {
    TransferResult t;
    t.error = -ENODEV;  // amdgpu's AIS: pci_p2pdma_distance() < 0
    return t;
  });
  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  ASSERT_EQ(pr->directions.size(), 2u);
  for (const auto& d : pr->directions) {
    EXPECT_EQ(d.outcome, Outcome::kRefused);
    EXPECT_EQ(d.refused_by, "kernel");
    EXPECT_NE(d.reason.find("GenuineIntel family 0x6 is not an AMD Zen"), std::string::npos) << d.reason;
  }
  EXPECT_EQ(report.result, Level::kFail);
  EXPECT_TRUE(pr->target_removed);
}

TEST(Verify, EremoteioOnMdIsTheStorageStacksRefusal) {
  VerifyRun r;
  TempDir scratch;
  r.options.selection = {{"0000:c3:00.0"}, {"nvme6"}};
  r.target_on(scratch, 9, 0);  // md0 at /scratch
  r.engines.add(EngineKind::kHipfile, [](const TransferRequest&) {
    TransferResult t;
    t.error = -EREMOTEIO;
    return t;
  });
  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr) << report.plan->pairs[0].refusal;
  EXPECT_EQ(pr->directions[0].outcome, Outcome::kRefused);
  EXPECT_EQ(pr->directions[0].refused_by, "storage stack");
  EXPECT_NE(pr->directions[0].reason.find("md0 (md raid0) does not take P2P pages"), std::string::npos)
      << pr->directions[0].reason;
}

TEST(Verify, GpuOwnedProviderIsNeverGivenToKmodOrP2pmem) {
  for (EngineKind kind : {EngineKind::kKmod, EngineKind::kP2pmem}) {
    VerifyRun r;
    r.options.selection = {{"0000:03:00.0"}, {"nvme1"}};
    r.options.engine = kind;
    r.target_on(r.nvme1_dir, 259, 1);
    VerifyReport report = r.run();
    ASSERT_EQ(report.plan->pairs.size(), 1u);
    EXPECT_NE(report.plan->pairs[0].refusal.find("bound to amdgpu"), std::string::npos);
    EXPECT_NE(report.plan->pairs[0].refusal.find("corrupts GPU memory"), std::string::npos);
    EXPECT_EQ(report.result, Level::kFail);
    EXPECT_TRUE(r.engines.asked.empty());
    EXPECT_TRUE(r.io->opened.empty());  // no file was created either
  }
}

TEST(Verify, KmodEngineEndToEndWithAFakeModule) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};  // nvme0's CMB as the provider
  r.options.engine = EngineKind::kKmod;
  r.options.size.reset();
  r.target_on(r.nvme1_dir, 259, 1);
  auto plan = r.plan();
  ASSERT_EQ(plan->pairs.size(), 1u);
  EXPECT_EQ(plan->pairs[0].provider_role, "CMB of nvme0");
  EXPECT_EQ(plan->pairs[0].size, 64u << 20);  // min(64 MiB, p2pmem/available)
  EXPECT_EQ(plan->pairs[0].chunk, kProviderChunk);
  r.options.size = 2 << 20;

  auto module = std::make_unique<FakeDmaModule>();
  FakeDmaModule* fake = module.get();
  r.engines.engines[EngineKind::kKmod] = {
      make_kmod_engine(std::make_shared<P2pprobeClient>(std::move(module))), {}, {}};
  r.kmsg.lines = {"usb 1-1: new device", "nvme nvme1: 8/0/0 default/read/poll queues"};
  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  EXPECT_EQ(pr->problem, "");
  ASSERT_EQ(pr->directions.size(), 2u);
  for (const auto& d : pr->directions) {
    EXPECT_EQ(d.outcome, Outcome::kPassed) << d.reason;
    EXPECT_EQ(d.bytes, 2u << 20);
    ASSERT_TRUE(d.throughput);
  }
  EXPECT_EQ(report.result, Level::kPass);
  EXPECT_EQ(report.summary, "2 of 2 direction(s) passed");
  // Each direction alone, with its own seed.
  ASSERT_EQ(fake->requests.size(), 2u);
  EXPECT_EQ(fake->requests[0].flags, P2PPROBE_DMA_F_NO_WRITE);
  EXPECT_EQ(fake->requests[1].flags, P2PPROBE_DMA_F_NO_READ);
  EXPECT_NE(fake->requests[0].seed, fake->requests[1].seed);
  // The scratch file: new, O_EXCL|O_DIRECT, in the named directory, removed afterwards.
  EXPECT_EQ(std::filesystem::path(pr->target_file).parent_path(), r.nvme1_dir.path());
  EXPECT_TRUE(pr->target_removed);
  EXPECT_FALSE(std::filesystem::exists(pr->target_file));
  EXPECT_TRUE(std::filesystem::is_empty(r.nvme1_dir.path()));
  // Kernel messages: only the relevant ones; the window was opened before the transfer.
  EXPECT_EQ(r.kmsg.starts, 1);
  ASSERT_EQ(pr->kernel_log.size(), 1u);
  EXPECT_NE(pr->kernel_log[0].find("nvme nvme1"), std::string::npos);
  // The fixture has no AER files: not reported, never "no errors".
  EXPECT_EQ(pr->aer_not_reported.size(), pr->aer_devices.size());
  EXPECT_GE(pr->aer_devices.size(), 3u);
}

TEST(Verify, DirectionOptionRunsOnlyThatDirection) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.options.engine = EngineKind::kKmod;
  r.options.directions = {Direction::kToStorage};
  r.target_on(r.nvme1_dir, 259, 1);
  auto module = std::make_unique<FakeDmaModule>();
  FakeDmaModule* fake = module.get();
  r.engines.engines[EngineKind::kKmod] = {
      make_kmod_engine(std::make_shared<P2pprobeClient>(std::move(module))), {}, {}};
  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  ASSERT_EQ(pr->directions.size(), 1u);
  EXPECT_EQ(pr->directions[0].direction, Direction::kToStorage);
  EXPECT_EQ(pr->directions[0].outcome, Outcome::kPassed) << pr->directions[0].reason;
  ASSERT_EQ(fake->requests.size(), 1u);
  EXPECT_EQ(fake->requests[0].flags, P2PPROBE_DMA_F_NO_READ);
  EXPECT_EQ(pr->directions[0].direction, Direction::kToStorage);
  EXPECT_EQ(report.summary, "1 of 1 direction(s) passed");
  EXPECT_EQ(verify_json(report)["options"]["directions"], nlohmann::ordered_json::array({"to_storage"}));
  EXPECT_EQ(parse_direction("to-device"), Direction::kToDevice);
  EXPECT_EQ(parse_direction("both"), std::nullopt);
  r.options.directions.clear();
  EXPECT_NE(usage_error([&] { r.plan(); }).find("--direction"), std::string::npos);
}

TEST(Verify, KmodRefusalAndMismatchAreReportedPerDirection) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.options.engine = EngineKind::kKmod;
  r.target_on(r.nvme1_dir, 259, 1);
  auto module = std::make_unique<FakeDmaModule>();
  FakeDmaModule* fake = module.get();
  fake->corrupt_at = 3 * 512 + 17;  // storage -> CMB delivers one bad byte in block 3
  fake->write_error = -EREMOTEIO;   // CMB -> storage refused by the kernel
  r.engines.engines[EngineKind::kKmod] = {
      make_kmod_engine(std::make_shared<P2pprobeClient>(std::move(module))), {}, {}};
  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  const DirectionResult& to_dev = pr->directions[0];
  EXPECT_EQ(to_dev.outcome, Outcome::kMismatch);
  ASSERT_TRUE(to_dev.mismatch);
  EXPECT_EQ(to_dev.mismatch->offset, 3u * 512 + 17);
  EXPECT_NE(to_dev.reason.find("512-byte block 3 of the test"), std::string::npos) << to_dev.reason;
  const DirectionResult& to_sto = pr->directions[1];
  EXPECT_EQ(to_sto.outcome, Outcome::kRefused);
  EXPECT_EQ(to_sto.refused_by, "kernel");
  EXPECT_NE(to_sto.reason.find("EREMOTEIO"), std::string::npos);
  // p2pcheck said supported: the disagreement is called out.
  EXPECT_NE(to_sto.reason.find("p2pcheck expected it to pass"), std::string::npos) << to_sto.reason;
  EXPECT_EQ(report.result, Level::kFail);

  auto json = verify_json(report);
  keep_for_schema_test(json, "refusal-and-mismatch.json");
  const auto& p = json["pairs"][0];
  EXPECT_EQ(p["directions"][0]["outcome"], "mismatch");
  EXPECT_EQ(p["directions"][0]["mismatch"]["block"], 3);
  EXPECT_EQ(p["directions"][0]["mismatch"]["offset"], 3 * 512 + 17);
  EXPECT_EQ(p["directions"][1]["errno"], "EREMOTEIO");
  EXPECT_EQ(p["directions"][1]["errno_value"], EREMOTEIO);
  EXPECT_EQ(p["directions"][1]["refused_by"], "kernel");
  EXPECT_EQ(p["directions"][1]["p2p"], "read");
  EXPECT_EQ(p["directions"][1]["flow"], "CMB -> storage");
}

TEST(Verify, P2pmemEngineIsAutoForACmbAndMovesRealData) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.target_on(r.nvme1_dir, 259, 1);
  TempDir devices;
  devices.write("0000:05:00.0/p2pmem/allocate", std::string(4 << 20, '\0'));
  r.engines.engines[EngineKind::kP2pmem] = {make_p2pmem_engine(r.io, devices.path()), {}, {}};
  VerifyReport report = r.run();
  ASSERT_EQ(report.plan->pairs[0].engine, EngineKind::kP2pmem);
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  ASSERT_EQ(pr->directions.size(), 2u);  // both directions ran, so the loop below checks something
  for (const auto& d : pr->directions) EXPECT_EQ(d.outcome, Outcome::kPassed) << d.reason;
  EXPECT_EQ(report.result, Level::kPass);
}

TEST(Verify, ReadBackCatchesAWriteThatLandedWrong) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  // A fixed seed: with a random one, the first byte of the two directions' patterns is equal one
  // time in 256 and the first mismatch is then a byte later.
  r.options.seed = 7;
  r.target_on(r.nvme1_dir, 259, 1);
  r.engines.add(EngineKind::kP2pmem, [](const TransferRequest& req) {
    if (req.direction == Direction::kToDevice) return honest_transfer(req);
    // A misdirected write that reports success: the first page's data lands one page further on.
    AlignedBuffer page(4096);
    fill_pattern(page.data(), 4096, req.target.offset, req.seed);
    auto io = open_live_io();
    io->pwrite(req.target.fd, page.data(), 4096, req.target.offset + 4096);
    TransferResult t;
    t.bytes = req.target.size;
    return t;
  });
  VerifyReport report = r.run();
  const DirectionResult& d = ran(report)->directions[1];
  EXPECT_EQ(d.outcome, Outcome::kMismatch);
  EXPECT_NE(d.reason.find("read back from storage after the P2P write"), std::string::npos);
  EXPECT_EQ(d.mismatch->offset, 0u);
}

TEST(Verify, HipfileThroughTheDoubleEndToEndAndItsSilentFallback) {
  for (const std::string mode : {"p2p", "fallback"}) {
    VerifyRun r;
    TempDir kfd;
    kfd.mkdir("sys/class/kfd/kfd/proc");
    ScopedEnv env;
    env.set("P2PCHECK_DOUBLE_MODE", mode);
    env.set("P2PCHECK_DOUBLE_GPUS", "0000:03:00.0");
    env.set("P2PCHECK_DOUBLE_ROOT", kfd.path());
    env.set("P2PCHECK_DOUBLE_PEER", "0000:05:00.0");
    r.options.selection = {{"0000:03:00.0"}, {"nvme0"}};
    r.target_on(r.nvme0_dir, 259, 0);
    HipfileConfig config;
    config.hip_runtime_libraries = config.hipfile_libraries = {P2PCHECK_HIPFILE_DOUBLE};
    r.engines.engines[EngineKind::kHipfile] =
        open_hipfile_engine(config, std::shared_ptr<DynamicLoader>(open_live_loader()), open_tree_source(kfd.path()));
    ASSERT_TRUE(r.engines.engines[EngineKind::kHipfile].engine);
    VerifyReport report = r.run();
    const PairResult* pr = ran(report);
    ASSERT_TRUE(pr);
    ASSERT_EQ(pr->directions.size(), 2u);
    for (const auto& d : pr->directions) {
      ASSERT_TRUE(d.counters) << mode;
      if (mode == "p2p") {
        EXPECT_EQ(d.outcome, Outcome::kPassed) << d.reason;
        EXPECT_EQ(d.counters->proof, PathProof::kProven);
        EXPECT_NE(d.reason.find("path proven"), std::string::npos);
      } else {
        EXPECT_EQ(d.outcome, Outcome::kNotP2p) << d.reason;
        EXPECT_NE(d.reason.find("silent compat fallback"), std::string::npos);
      }
    }
    EXPECT_EQ(report.result, mode == "p2p" ? Level::kPass : Level::kFail);
    auto json = verify_json(report);
    EXPECT_EQ(json["pairs"][0]["directions"][0]["counters"]["proof"], mode == "p2p" ? "proven" : "fallback");
    EXPECT_EQ(json["pairs"][0]["engine"], "hipfile");
  }
}

TEST(Verify, EngineMissingOnThisMachineIsUnknownNotFail) {
  VerifyRun r;
  r.options.selection = {{"0000:03:00.0"}, {"nvme1"}};
  r.target_on(r.nvme1_dir, 259, 1);
  r.engines.engines[EngineKind::kHipfile] = {
      nullptr,
      {"no AMD GPU visible to HIP (hipGetDeviceCount: hipErrorNoDevice)", "hipFile not installed (libhipfile.so: ...)"},
      {}};
  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  EXPECT_NE(pr->problem.find("hipfile cannot run here: no AMD GPU visible to HIP"), std::string::npos) << pr->problem;
  EXPECT_NE(pr->problem.find("; hipFile not installed"), std::string::npos);
  EXPECT_TRUE(pr->directions.empty());
  EXPECT_EQ(report.result, Level::kUnknown);
  EXPECT_TRUE(r.io->opened.empty());  // no scratch file for a pair that cannot run
}

TEST(Verify, ATransferThatNeverCompletesIsCalledDroppedAndNothingElseStarts) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1", "nvme2"}};
  r.options.engine = EngineKind::kKmod;
  r.options.timeout_s = 0.3;
  r.target_on(r.nvme1_dir, 259, 1);
  TempDir nvme2_dir;
  r.target_on(nvme2_dir, 259, 2);
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  auto engine = r.engines.add(EngineKind::kKmod, [released](const TransferRequest& req) {
    released.wait();  // a DMA the root complex dropped: nothing comes back
    TransferResult t;
    t.error = -EIO;
    t.bytes = req.target.size;
    return t;
  });
  VerifyReport report = r.run();
  release->set_value();
  ASSERT_EQ(report.results.size(), 2u);
  const PairResult& first = report.results[0];
  ASSERT_EQ(first.directions.size(), 2u);
  EXPECT_EQ(first.directions[0].outcome, Outcome::kTimedOut);
  EXPECT_NE(first.directions[0].reason.find(
                "no completion within 0.3 s: the transfer was probably dropped by the root complex"),
            std::string::npos)
      << first.directions[0].reason;
  EXPECT_NE(first.directions[0].reason.find("io_timeout (30 s)"), std::string::npos);
  EXPECT_EQ(first.directions[1].outcome, Outcome::kNotRun);
  EXPECT_TRUE(first.target_removed);  // unlinked even though the abandoned worker still holds it open
  EXPECT_NE(report.results[1].problem.find("not run: nvme1 to_device did not complete"), std::string::npos)
      << report.results[1].problem;
  EXPECT_TRUE(report.abandoned);
  EXPECT_EQ(report.result, Level::kFail);
  EXPECT_EQ(engine->requests.size(), 1u);
  EXPECT_NE(verify_text(report, TextStyle{false, false}).find("TIMEOUT"), std::string::npos);
}

TEST(Verify, SlowIoErrorNearIoTimeoutPointsAtADroppedTransfer) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.options.engine = EngineKind::kKmod;
  r.target_on(r.nvme1_dir, 259, 1);
  r.engines.add(EngineKind::kKmod, failing_with(-EIO));
  VerifyReport report = r.run();
  const DirectionResult& d = ran(report)->directions[0];
  EXPECT_EQ(d.outcome, Outcome::kFailed);
  EXPECT_NE(d.reason.find("EIO: I/O error"), std::string::npos) << d.reason;
  // Fast failure: no io_timeout note (that needs the wall time of a real timeout).
  for (const auto& n : d.notes) EXPECT_EQ(n.find("io_timeout"), std::string::npos);
}

// Issue 15: an NVMe removed during the transfer leaves a 0-byte block device behind, whose ENOSPC
// and short reads read like a full file system. Verify names the vanished device instead, and does
// not start the other direction.
// A writable copy of the 8-GPU machine whose NVMe 0000:06:00.0 (nvme1) can go away, and a verify run
// on it: the GPU 0000:05:00.0 to nvme1 by the kmod engine, on a directory of nvme1.
struct RemovableNvme {
  TempDir copy;
  VerifyRun r;
  RemovableNvme() {
    std::filesystem::copy(fixture_root("epyc-mi300x-8gpu"), copy.path(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
    r.source = open_tree_source(copy.path());
    r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
    r.options.engine = EngineKind::kKmod;
    r.target_on(r.nvme1_dir, 259, 1);
  }
  // Hot-unplugged: the device's directory and its link go.
  void unplug() {
    const std::string link = copy.path() + "/sys/bus/pci/devices/0000:06:00.0";
    if (std::filesystem::exists(link)) std::filesystem::remove_all(std::filesystem::canonical(link));
    std::filesystem::remove(link);
  }
};

TEST(Verify, ANvmeRemovedDuringTheTransferIsNamedAndNothingMoreRuns) {
  RemovableNvme m;
  VerifyRun& r = m.r;
  int calls = 0;
  r.engines.add(EngineKind::kKmod, [&](const TransferRequest&) {
    ++calls;
    m.unplug();
    TransferResult t;
    t.error = -ENOSPC;
    return t;
  });
  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  ASSERT_EQ(pr->directions.size(), 2u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(pr->directions[0].outcome, Outcome::kFailed);
  EXPECT_EQ(pr->directions[0].reason.rfind("the NVMe 0000:06:00.0 (nvme1) is gone from /sys/bus/pci/devices: "
                                           "removed during the transfer",
                                           0),
            0u)
      << pr->directions[0].reason;
  EXPECT_NE(pr->directions[0].reason.find("ENOSPC"), std::string::npos) << pr->directions[0].reason;
  EXPECT_EQ(pr->directions[1].outcome, Outcome::kNotRun);
  EXPECT_NE(pr->directions[1].reason.find("not run: the NVMe 0000:06:00.0 (nvme1) is gone"), std::string::npos)
      << pr->directions[1].reason;
  EXPECT_EQ(report.result, Level::kFail);
  EXPECT_TRUE(pr->target_removed);  // the scratch file still goes
}

// The removal is still on its way when the 0-byte device answers: the function leaves sysfs only
// after a while. Verify looks again while it may (kRemovalGrace) and names the vanished device; an
// ENOSPC with the device staying is given as it is, after the grace; other errors wait for nothing.
TEST(Verify, ANvmeLeavingSysfsAfterItsErrorIsStillNamedAsRemoved) {
  for (int leaves_after : {1, 5, -1}) {  // pauses before the function leaves; -1: it never does
    SCOPED_TRACE(leaves_after);
    RemovableNvme m;
    VerifyRun& r = m.r;
    std::chrono::milliseconds paused{0};
    int pauses = 0;
    r.pause = [&](std::chrono::milliseconds wait) {
      paused += wait;
      if (++pauses == leaves_after) m.unplug();
    };
    r.engines.add(EngineKind::kKmod, failing_with(-ENOSPC));
    VerifyReport report = r.run();
    const PairResult* pr = ran(report);
    ASSERT_TRUE(pr);
    const std::string& reason = pr->directions[0].reason;
    if (leaves_after > 0) {
      EXPECT_EQ(reason.rfind("the NVMe 0000:06:00.0 (nvme1) is gone from /sys/bus/pci/devices", 0), 0u) << reason;
      EXPECT_EQ(pauses, leaves_after);
      EXPECT_EQ(pr->directions[1].outcome, Outcome::kNotRun);
    } else {
      EXPECT_EQ(reason.find("gone"), std::string::npos) << reason;
      EXPECT_NE(reason.find("ENOSPC"), std::string::npos) << reason;
      EXPECT_GE(paused, kRemovalGrace);  // each direction waited out the grace, and no longer
      EXPECT_LE(paused, 2 * kRemovalGrace);
    }
  }
  // An I/O error is no removal's answer: nothing waits.
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.options.engine = EngineKind::kKmod;
  r.target_on(r.nvme1_dir, 259, 1);
  int pauses = 0;
  r.pause = [&](std::chrono::milliseconds) { ++pauses; };
  r.engines.add(EngineKind::kKmod, failing_with(-EIO));
  VerifyReport report = r.run();
  ASSERT_TRUE(ran(report));
  EXPECT_EQ(pauses, 0);
}

TEST(Verify, RawModeWarnsFirstAndWritesOnlyItsRange) {
  FakeRoot root = fixture_unmounting("epyc-mi300x-8gpu", "/dev/nvme1n1");
  VerifyRun r;
  r.source = root.source();
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.options.raw_devices = {"/dev/nvme1n1"};
  r.options.offset = 1 << 20;
  r.options.allow_destructive = true;
  r.io->block_device("/dev/nvme1n1", 259, 1);
  // The "namespace": a file of 0xee bytes; only [1 MiB, 2 MiB) may change.
  TempDir disk;
  std::string image = disk.path() + "/nvme1n1";
  std::ofstream(image) << std::string(3 << 20, '\xee');
  r.io->redirect["/dev/nvme1n1"] = image;
  r.engines.add(EngineKind::kP2pmem, honest_transfer);

  auto plan = r.plan();
  ASSERT_EQ(plan->warnings.size(), 2u);
  EXPECT_NE(plan->warnings[0].find("overwrites bytes 1048576 to 2097152 of /dev/nvme1n1"), std::string::npos)
      << plan->warnings[0];
  EXPECT_NE(plan->warnings[1].find(
                "io_timeout fires, 30 s (/sys/module/nvme_core/parameters/io_timeout), often with a controller reset"),
            std::string::npos)
      << plan->warnings[1];
  EXPECT_NE(verify_plan_text(*plan, TextStyle{false, false}).find("warning: a transfer the root complex drops"),
            std::string::npos);

  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  ASSERT_EQ(pr->directions.size(), 2u);  // both directions ran, so the loop below checks something
  for (const auto& d : pr->directions) EXPECT_EQ(d.outcome, Outcome::kPassed) << d.reason;
  EXPECT_EQ(r.io->open_flags.back() & (O_EXCL | O_DIRECT | O_CREAT), O_EXCL | O_DIRECT);
  EXPECT_TRUE(r.io->unlinked.empty());  // a raw device is never removed
  std::ifstream in(image, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 3u << 20);
  EXPECT_EQ(bytes.substr(0, 1 << 20), std::string(1 << 20, '\xee'));
  EXPECT_EQ(bytes.substr(2 << 20), std::string(1 << 20, '\xee'));
  EXPECT_NE(bytes.substr(1 << 20, 1 << 20), std::string(1 << 20, '\xee'));
  // Past the end of the device is a usage error before anything runs.
  r.options.offset = 1ull << 50;  // 1 PiB
  EXPECT_NE(usage_error([&] { r.plan(); }).find("runs past the end of the device"), std::string::npos);
}

TEST(Verify, ResultsFileForCapture) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.target_on(r.nvme1_dir, 259, 1);
  r.engines.add(EngineKind::kP2pmem, honest_transfer);
  VerifyReport report = r.run();
  auto json = verify_json(report);
  keep_for_schema_test(json, "passed.json");
  EXPECT_EQ(json["schema"], "p2pcheck.verify");
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["result"], "PASS");
  EXPECT_EQ(json["kernel"]["nvme_io_timeout_s"], 30);
  const auto& p = json["pairs"][0];
  EXPECT_EQ(p["status"], "ran");
  EXPECT_EQ(p["target"]["kind"], "file");
  EXPECT_EQ(p["target"]["removed"], true);
  EXPECT_EQ(p["directions"][0]["flow"], "storage -> CMB");
  EXPECT_EQ(p["directions"][0]["p2p"], "write");
  EXPECT_TRUE(p["aer"]["changes"].empty());
  TempDir out;
  std::string path = out.path() + "/run/p2pcheck/verify.json";
  save_verify_results(json, path);
  std::ifstream in(path);
  auto back = nlohmann::ordered_json::parse(in);
  EXPECT_EQ(back, json);
  EXPECT_EQ(std::string(kVerifyResultsPath), "/run/p2pcheck/verify.json");
}

// Issue 15: the results file is written as root into a shared directory. A symlink planted at the
// target, at the directory, or at the old predictable PATH.tmp.<pid> must never be written through.
TEST(Verify, ResultsAreNeverWrittenThroughASymlink) {
  namespace fs = std::filesystem;
  const nlohmann::ordered_json doc = {{"schema", "p2pcheck.verify"}, {"result", "PASS"}};
  TempDir d;
  const std::string victim = d.path() + "/victim";
  std::ofstream(victim) << "precious\n";
  auto victim_text = [&] {
    std::ifstream in(victim);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  fs::create_directories(d.path() + "/run/p2pcheck");
  const std::string path = d.path() + "/run/p2pcheck/verify.json";
  auto error_text = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };

  // The old temporary name, planted: ignored (an unpredictable name, created O_EXCL).
  const std::string planted = path + ".tmp." + std::to_string(getpid());
  fs::create_symlink(victim, planted);
  save_verify_results(doc, path);
  EXPECT_EQ(victim_text(), "precious\n");
  EXPECT_TRUE(fs::is_symlink(planted));
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::ordered_json::parse(in), doc);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(d.path() + "/run/p2pcheck")) entries += !e.path().empty();
  EXPECT_EQ(entries, 2);  // verify.json and the planted link: no temporary file left

  // The results file itself a symlink: refused, the link and its target untouched.
  fs::remove(path);
  fs::create_symlink(victim, path);
  std::string err = error_text([&] { save_verify_results(doc, path); });
  EXPECT_NE(err.find("not a regular file (a symbolic link?)"), std::string::npos) << err;
  EXPECT_EQ(victim_text(), "precious\n");
  EXPECT_TRUE(fs::is_symlink(path));

  // The directory a symlink to another place: refused.
  fs::create_directories(d.path() + "/elsewhere");
  fs::create_directory_symlink(d.path() + "/elsewhere", d.path() + "/run/linked");
  err = error_text([&] { save_verify_results(doc, d.path() + "/run/linked/verify.json"); });
  EXPECT_NE(err.find("is not a directory (a symbolic link?)"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(d.path() + "/elsewhere"));
}

TEST(Verify, SizesParse) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("64M"), 64u << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("512k"), 512u << 10);
  EXPECT_THROW(parse_size("lots"), UsageError);
  EXPECT_THROW(parse_size("5T"), UsageError);
  EXPECT_THROW(parse_size("-1"), UsageError);
  EXPECT_THROW(parse_size("99999999999999G"), UsageError);
  try {
    parse_size("8Q", "--offset");
    ADD_FAILURE() << "8Q parsed";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--offset 8Q"), std::string::npos) << e.what();
  }
}

TEST(VerifyEvidence, AerCountersThatMoveAreReported) {
  FakeRoot root;  // the source sees the counters written after it was opened: the tree is shared
  const std::string dev = "sys/bus/pci/devices/0000:00:01.1/";
  root.write(dev + "aer_dev_correctable", "RxErr 0\nBadTLP 0\nTOTAL_ERR_COR 0\n");
  root.write(dev + "aer_dev_fatal", "TOTAL_ERR_FATAL 0\n");
  root.write(dev + "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL 0\n");
  root.mkdir("sys/bus/pci/devices/0000:01:00.0");
  auto source = root.source();
  std::vector<Bdf> devs{*Bdf::parse("0000:00:01.1"), *Bdf::parse("0000:01:00.0")};
  AerSnapshot before = read_aer(*source, devs);
  root.write(dev + "aer_dev_correctable", "RxErr 0\nBadTLP 3\nTOTAL_ERR_COR 3\n");
  AerSnapshot after = read_aer(*source, devs);
  auto changes = aer_changes(before, after);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].counter, "aer_dev_correctable:BadTLP");
  EXPECT_EQ(changes[0].after, 3u);
  ASSERT_EQ(after.not_reported.size(), 1u);
  EXPECT_EQ(after.not_reported[0].str(), "0000:01:00.0");
}

}  // namespace
}  // namespace p2pcheck
