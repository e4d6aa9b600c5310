// The hipfile engine's whole sequence (load, find the GPU by PCI address, allocate VRAM, read,
// write, compare, AIS counters, compat fallback) against tests/hipfile_double, loaded through the
// same dlopen path as the real libraries; and Debian's real HIP 5.2 runtime where it is installed.
#include "p2pcheck/verify/verify_hipfile.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <gtest/gtest.h>

#include "p2pcheck/verify/hip_api.h"
#include "test_paths.h"
#include "verify_fakes.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

const Bdf kGpu = *Bdf::parse("0000:43:00.0");
const Bdf kNvme = *Bdf::parse("0000:45:00.0");

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

struct DoubleFixture {
  // On disk: the double (another library, through dlopen) writes its KFD counters under kfd as files,
  // and storage holds the real O_DIRECT scratch file.
  TempDir kfd, storage;
  ScopedEnv env;
  HipfileConfig config;
  int fd = -1;
  std::unique_ptr<VerifyIo> io = open_live_io();

  explicit DoubleFixture(const std::string& mode, const std::string& gpus = "0000:41:00.0,0000:43:00.0") {
    env.set("P2PCHECK_DOUBLE_MODE", mode);
    env.set("P2PCHECK_DOUBLE_GPUS", gpus);
    env.set("P2PCHECK_DOUBLE_ROOT", kfd.path());
    env.set("P2PCHECK_DOUBLE_PEER", kNvme.str());
    // Whatever the caller had: the engine must forbid compat mode itself.
    env.set(hipfile::kAllowCompatModeEnv, "true");
    env.set(hipfile::kForceCompatModeEnv, "true");
    config.hip_runtime_libraries = {"libamdhip64-not-here.so", P2PCHECK_HIPFILE_DOUBLE};
    config.hipfile_libraries = {P2PCHECK_HIPFILE_DOUBLE};
    fd = io->open(storage.path() + "/scratch", O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0600);
    if (fd == -EINVAL) fd = io->open(storage.path() + "/scratch", O_RDWR | O_CREAT, 0600);
  }
  ~DoubleFixture() { io->close(fd); }
  EngineAvailability open() {
    kfd.mkdir("sys/class/kfd/kfd/proc");  // a tree source wants a sys/ directory
    return open_hipfile_engine(config, std::shared_ptr<DynamicLoader>(open_live_loader()),
                               open_tree_source(kfd.path()));
  }
  TransferRequest request(Direction d, std::uint64_t seed, Bdf gpu = kGpu) {
    TransferRequest r;
    r.provider = gpu;
    r.client = kNvme;
    r.direction = d;
    r.target = {fd, storage.path() + "/scratch", false, 0, 3 << 20};
    r.chunk = 1 << 20;
    r.seed = seed;
    return r;
  }
};

TEST(VerifyHipfile, WholeSequenceThroughTheDouble) {
  DoubleFixture f("p2p");
  ASSERT_GE(f.fd, 0);
  EngineAvailability a = f.open();
  ASSERT_TRUE(a.engine) << joined(a.problems);
  EXPECT_TRUE(a.problems.empty());
  EXPECT_TRUE(contains(a.facts, "HIP runtime 7.2.0")) << joined(a.facts);
  EXPECT_TRUE(contains(a.facts, "HIP sees 2 GPU(s)"));
  EXPECT_TRUE(contains(a.facts, "hipFile 0.2.0"));
  // Compat mode forbidden before hipFile started (the double refuses hipFileDriverOpen otherwise).
  EXPECT_STREQ(getenv(hipfile::kAllowCompatModeEnv), "false");
  EXPECT_STREQ(getenv(hipfile::kForceCompatModeEnv), "false");

  // storage -> GPU: pattern on storage, hipFileRead into VRAM, copied back and compared.
  ASSERT_EQ(write_pattern(*f.io, f.fd, 0, 3 << 20, 1 << 20, 31).error, 0);
  TransferResult r = a.engine->transfer(f.request(Direction::kToDevice, 31));
  EXPECT_FALSE(r.failed()) << r.error << " " << r.error_text;
  EXPECT_EQ(r.bytes, 3u << 20);
  EXPECT_FALSE(r.mismatch);
  ASSERT_TRUE(r.counters);
  EXPECT_EQ(r.counters->proof, PathProof::kProven) << r.counters->note;
  EXPECT_FALSE(r.counters->before);  // created by the first validated I/O, as kfd_ais.c does
  EXPECT_EQ(r.counters->after, 3u << 20);
  EXPECT_NE(r.counters->file.find("/sys/class/kfd/kfd/proc/" + std::to_string(getpid()) + "/ais_2/0000:45:00.0:PCI_in"),
            std::string::npos)
      << r.counters->file;

  // GPU -> storage: pattern copied into VRAM, hipFileWrite, read back by host I/O.
  TransferResult w = a.engine->transfer(f.request(Direction::kToStorage, 32));
  EXPECT_FALSE(w.failed());
  ASSERT_TRUE(w.counters);
  EXPECT_EQ(w.counters->proof, PathProof::kProven);
  EXPECT_EQ(w.counters->before, 0u);  // the pair of files exists since the read
  HostIoResult back = read_and_check(*f.io, f.fd, 0, 3 << 20, 1 << 20, 32);
  EXPECT_EQ(back.error, 0);
  EXPECT_FALSE(back.mismatch);
}

TEST(VerifyHipfile, SilentCompatFallbackIsDetected) {
  DoubleFixture f("fallback");
  EngineAvailability a = f.open();
  ASSERT_TRUE(a.engine) << joined(a.problems);
  ASSERT_EQ(write_pattern(*f.io, f.fd, 0, 3 << 20, 1 << 20, 5).error, 0);
  TransferResult r = a.engine->transfer(f.request(Direction::kToDevice, 5));
  EXPECT_FALSE(r.failed());
  EXPECT_FALSE(r.mismatch);  // the data is right: only the path is wrong
  ASSERT_TRUE(r.counters);
  EXPECT_EQ(r.counters->proof, PathProof::kFallback);
  EXPECT_EQ(r.counters->before, 0u);
  EXPECT_EQ(r.counters->after, 0u);
  EXPECT_NE(r.counters->note.find("silent compat fallback"), std::string::npos);
}

TEST(VerifyHipfile, NoCountersMeansUnprovenNotFallback) {
  DoubleFixture f("nocounters");
  EngineAvailability a = f.open();
  ASSERT_TRUE(a.engine);
  TransferResult w = a.engine->transfer(f.request(Direction::kToStorage, 9));
  ASSERT_TRUE(w.counters);
  EXPECT_EQ(w.counters->proof, PathProof::kUnproven);
  EXPECT_NE(w.counters->note.find("no per-process AIS counters"), std::string::npos);
}

TEST(VerifyHipfile, CorruptedReadIsAMismatch) {
  DoubleFixture f("corrupt");
  EngineAvailability a = f.open();
  ASSERT_TRUE(a.engine);
  ASSERT_EQ(write_pattern(*f.io, f.fd, 0, 3 << 20, 1 << 20, 8).error, 0);
  TransferResult r = a.engine->transfer(f.request(Direction::kToDevice, 8));
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->offset, 4100u);  // the double flips byte 4100 of each read
  EXPECT_EQ(r.mismatch->count, 3u);      // once per 1 MiB chunk
}

TEST(VerifyHipfile, AisRefusalIsEnodev) {
  DoubleFixture f("refuse");
  EngineAvailability a = f.open();
  ASSERT_TRUE(a.engine);
  TransferResult r = a.engine->transfer(f.request(Direction::kToDevice, 1));
  EXPECT_EQ(r.error, -ENODEV);
  EXPECT_NE(r.error_text.find("compat mode forbidden"), std::string::npos);
  EXPECT_FALSE(r.counters);  // nothing moved
}

TEST(VerifyHipfile, GpuMustBeTheOneHipSees) {
  DoubleFixture f("p2p");
  EngineAvailability a = f.open();
  ASSERT_TRUE(a.engine);
  TransferResult r = a.engine->transfer(f.request(Direction::kToDevice, 1, *Bdf::parse("0000:99:00.0")));
  EXPECT_TRUE(r.failed());
  EXPECT_NE(r.error_text.find("0000:99:00.0 is not among the GPUs HIP sees (0000:41:00.0, 0000:43:00.0)"),
            std::string::npos)
      << r.error_text;
}

TEST(VerifyHipfile, SaysPreciselyWhatIsMissing) {
  {
    DoubleFixture f("p2p", "");
    EngineAvailability a = f.open();
    EXPECT_FALSE(a.engine);
    EXPECT_TRUE(contains(a.problems, "no AMD GPU visible to HIP (hipGetDeviceCount: hipErrorNoDevice)"))
        << joined(a.problems);
  }
  {
    DoubleFixture f("noais");
    EngineAvailability a = f.open();
    EXPECT_FALSE(a.engine);
    EXPECT_TRUE(contains(a.problems, "does not provide hipAmdFileRead/hipAmdFileWrite")) << joined(a.problems);
  }
  {
    DoubleFixture f("p2p");
    f.config.hipfile_libraries = {"libhipfile-not-installed.so"};
    EngineAvailability a = f.open();
    EXPECT_FALSE(a.engine);
    EXPECT_TRUE(
        contains(a.problems, "hipFile not installed (libhipfile-not-installed.so: cannot open shared object file"))
        << joined(a.problems);
  }
  {
    DoubleFixture f("p2p");
    f.config.hip_runtime_libraries = {"libamdhip64-not-installed.so"};
    f.config.hipfile_libraries = {"libhipfile-not-installed.so"};
    EngineAvailability a = f.open();
    EXPECT_TRUE(contains(a.problems, "HIP runtime not installed (libamdhip64-not-installed.so"));
    EXPECT_TRUE(contains(a.problems, "hipFile not installed"));
  }
}

TEST(VerifyHipfile, CounterJudgement) {
  AisCounterRead none, zero, some, all;
  zero.total = 0;
  zero.files = {"f"};
  some = zero;
  some.total = 100;
  all = zero;
  all.total = 4096;
  EXPECT_EQ(judge_counters(none, none, 4096, "x").proof, PathProof::kUnproven);
  EXPECT_EQ(judge_counters(none, all, 4096, "x").proof, PathProof::kProven);
  EXPECT_EQ(judge_counters(zero, zero, 4096, "x").proof, PathProof::kFallback);
  CounterEvidence partial = judge_counters(zero, some, 4096, "x");
  EXPECT_EQ(partial.proof, PathProof::kFallback);
  EXPECT_NE(partial.note.find("100 of 4096"), std::string::npos);
  EXPECT_EQ(hip_version_text(50221153), "5.2.21153");
}

TEST(VerifyHipfile, ReadsCountersUpToTwoLevelsDown) {
  FakeRoot root;  // shared tree: the source sees process 78's counters written after it was opened
  root.write("sys/class/kfd/kfd/proc/77/ais_1/0000:45:00.0:PCI_in", "4096\n");
  root.write("sys/class/kfd/kfd/proc/77/ais_2/0000:45:00.0:PCI_in", "8192\n");
  root.write("sys/class/kfd/kfd/proc/77/ais_2/0000:46:00.0:PCI_in", "1\n");
  root.write("sys/class/kfd/kfd/proc/77/vram_1", "0\n");
  auto source = root.source();
  AisCounterRead in = read_ais_counters(*source, 77, kNvme, Direction::kToDevice);
  EXPECT_EQ(in.total, 12288u);
  EXPECT_EQ(in.files.size(), 2u);
  EXPECT_FALSE(read_ais_counters(*source, 77, kNvme, Direction::kToStorage).total);
  root.write("sys/class/kfd/kfd/proc/78/ais_1/0000:45:00.0:PCI_out", "lots\n");
  AisCounterRead bad = read_ais_counters(*source, 78, kNvme, Direction::kToStorage);
  EXPECT_FALSE(bad.total);
  EXPECT_NE(bad.problem.find("not a byte count"), std::string::npos);
}

// Debian 12's libamdhip64-5 (HIP 5.2) on a machine without an AMD GPU: the engine must say exactly
// why it cannot run. Runs only where that library is installed and no KFD device exists.
TEST(VerifyHipfile, DebianHip52WithoutGpu) {
  void* probe = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
  if (!probe) GTEST_SKIP() << "libamdhip64-5 not installed (apt-get install libamdhip64-5)";
  if (std::filesystem::exists("/dev/kfd")) GTEST_SKIP() << "this machine has an AMD GPU stack (/dev/kfd)";
  HipfileConfig config;  // the real search lists
  FakeRoot kfd;          // nothing writes counters here (no double), so the KFD tree can live in memory
  kfd.mkdir("sys/class/kfd/kfd/proc");
  EngineAvailability a = open_hipfile_engine(config, std::shared_ptr<DynamicLoader>(open_live_loader()), kfd.source());
  EXPECT_FALSE(a.engine);
  EXPECT_TRUE(contains(a.facts, "HIP runtime 5.2.")) << joined(a.facts);
  EXPECT_TRUE(contains(a.problems, "no AMD GPU visible to HIP (hipGetDeviceCount: hipErrorNoDevice)"))
      << joined(a.problems);
  EXPECT_TRUE(contains(a.problems, "has no hipGetProcAddress")) << joined(a.problems);
  EXPECT_TRUE(contains(a.problems, "hipFile not installed (libhipfile.so: cannot open shared object file"))
      << joined(a.problems);
}

}  // namespace
}  // namespace p2pcheck
