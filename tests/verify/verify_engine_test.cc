// Which engine a provider may use, and the refusal that keeps kmod and p2pmem off GPU memory.
#include "p2pcheck/verify/verify_engine.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

Function provider(const std::string& driver, bool p2pmem, bool allocate) {
  Function fn;
  fn.bdf = *Bdf::parse("0000:05:00.0");
  fn.driver = driver;
  if (p2pmem) {
    fn.p2pmem = P2pmem{};
    fn.p2pmem->size = fn.p2pmem->available = 64ull << 20;
    fn.p2pmem->has_allocate = allocate;
  }
  return fn;
}

TEST(VerifyEngine, AutoPicksWhatTheProviderIs) {
  EXPECT_EQ(choose_engine(provider("amdgpu", true, true), std::nullopt).kind, EngineKind::kHipfile);
  EXPECT_EQ(choose_engine(provider("nvme", true, true), std::nullopt).kind, EngineKind::kP2pmem);
  EXPECT_EQ(choose_engine(provider("nvme", true, false), std::nullopt).kind, EngineKind::kKmod);
  EXPECT_EQ(choose_engine(provider("p2pprobe", true, true), std::nullopt).kind, EngineKind::kP2pmem);
}

TEST(VerifyEngine, NeverKmodOrP2pmemOnGpuDriverMemory) {
  for (const char* driver : {"amdgpu", "nvidia"}) {
    for (EngineKind kind : {EngineKind::kKmod, EngineKind::kP2pmem}) {
      // Even with p2pmem/allocate present (amdgpu with AIS registers VRAM as p2pmem).
      EngineChoice c = choose_engine(provider(driver, true, true), kind);
      EXPECT_FALSE(c.kind) << driver;
      EXPECT_NE(c.refusal.find("corrupts GPU memory"), std::string::npos) << c.refusal;
      EXPECT_NE(c.refusal.find(driver), std::string::npos) << c.refusal;
    }
  }
}

TEST(VerifyEngine, OnlyNvmeOrP2pprobeBoundProviders) {
  EngineChoice unbound = choose_engine(provider("", true, true), EngineKind::kP2pmem);
  EXPECT_FALSE(unbound.kind);
  EXPECT_NE(unbound.refusal.find("bound to no driver"), std::string::npos) << unbound.refusal;
  EngineChoice other = choose_engine(provider("ivshmem", true, true), std::nullopt);
  EXPECT_FALSE(other.kind);
  EXPECT_NE(other.refusal.find("p2pprobe"), std::string::npos);
  EngineChoice no_cmb = choose_engine(provider("nvme", false, false), EngineKind::kKmod);
  EXPECT_FALSE(no_cmb.kind);
  EXPECT_NE(no_cmb.refusal.find("CMB"), std::string::npos);
  EngineChoice old_kernel = choose_engine(provider("nvme", true, false), EngineKind::kP2pmem);
  EXPECT_FALSE(old_kernel.kind);
  EXPECT_NE(old_kernel.refusal.find("6.2"), std::string::npos);
}

TEST(VerifyEngine, HipfileOnlyForAmdGpus) {
  EngineChoice nvme = choose_engine(provider("nvme", true, true), EngineKind::kHipfile);
  EXPECT_FALSE(nvme.kind);
  EXPECT_NE(nvme.refusal.find("amdgpu"), std::string::npos);
  EngineChoice nvidia = choose_engine(provider("nvidia", false, false), std::nullopt);
  EXPECT_FALSE(nvidia.kind);
  EXPECT_NE(nvidia.refusal.find("hipFile only"), std::string::npos);
}

TEST(VerifyEngine, Names) {
  for (EngineKind k : {EngineKind::kHipfile, EngineKind::kKmod, EngineKind::kP2pmem})
    EXPECT_EQ(parse_engine_kind(to_string(k)), k);
  EXPECT_FALSE(parse_engine_kind("auto"));
  EXPECT_STREQ(to_string(Direction::kToDevice), "to_device");
  EXPECT_STREQ(to_string(PathProof::kFallback), "fallback");
}

}  // namespace
}  // namespace p2pcheck
