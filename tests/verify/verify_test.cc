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
#include "verify_run.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

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

}  // namespace
}  // namespace p2pcheck
