// The kmod engine against a fake /dev/p2pprobe that answers DMA_TEST as the module does, moving
// the pattern through a real file: each direction alone, -EREMOTEIO, a mismatch, ioctl refusals.
#include "p2pcheck/verify/verify_kmod.h"

#include <fcntl.h>

#include <gtest/gtest.h>

#include "verify_fakes.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

struct KmodFixture {
  TempDir dir;
  FakeDmaModule* module = nullptr;
  std::shared_ptr<VerifyEngine> engine;
  std::unique_ptr<VerifyIo> io = open_live_io();
  int fd = -1;
  KmodFixture() {
    auto fake = std::make_unique<FakeDmaModule>();
    module = fake.get();
    engine = make_kmod_engine(std::make_shared<P2pprobeClient>(std::move(fake)));
    fd = io->open(dir.path() + "/target", O_RDWR | O_CREAT | O_EXCL, 0600);
  }
  ~KmodFixture() { io->close(fd); }
  TransferRequest request(Direction d, std::uint64_t size, std::uint64_t seed = 5) {
    TransferRequest r;
    r.provider = *Bdf::parse("0000:05:00.0");
    r.client = *Bdf::parse("0000:06:00.0");
    r.direction = d;
    r.target = {fd, dir.path() + "/target", false, 8192, size};
    r.chunk = 1 << 20;
    r.seed = seed;
    return r;
  }
};

TEST(VerifyKmod, EachDirectionAloneWithTheModuleDoingTheP2pHalf) {
  KmodFixture f;
  // device -> storage: the module writes (NO_READ); the runner reads back.
  TransferResult w = f.engine->transfer(f.request(Direction::kToStorage, 1 << 20, 11));
  EXPECT_FALSE(w.failed()) << w.error << " " << w.error_text;
  EXPECT_EQ(w.bytes, 1u << 20);
  ASSERT_EQ(f.module->requests.size(), 1u);
  const auto& req = f.module->requests[0];
  EXPECT_EQ(req.flags, P2PPROBE_DMA_F_NO_READ);
  EXPECT_EQ(req.offset, 8192u);
  EXPECT_EQ(req.length, 1u << 20);
  EXPECT_EQ(req.provider.bus, 0x05);
  EXPECT_EQ(req.chunk_size, 1u << 20);
  HostIoResult back = read_and_check(*f.io, f.fd, 8192, 1 << 20, 4096, 11);
  EXPECT_EQ(back.error, 0);
  EXPECT_FALSE(back.mismatch);

  // storage -> device: the pattern is on storage; the module reads (NO_WRITE) and compares.
  TransferResult r = f.engine->transfer(f.request(Direction::kToDevice, 1 << 20, 11));
  EXPECT_FALSE(r.failed());
  EXPECT_FALSE(r.mismatch);
  EXPECT_EQ(f.module->requests.back().flags, P2PPROBE_DMA_F_NO_WRITE);
  EXPECT_EQ(r.ns, 1000000u);
  bool described = false;
  for (const auto& n : r.notes) described |= n.find("distance 4") != std::string::npos;
  EXPECT_TRUE(described);
}

TEST(VerifyKmod, SplitsAtTheModulesLengthLimit) {
  KmodFixture f;
  TransferResult w = f.engine->transfer(f.request(Direction::kToStorage, P2PPROBE_DMA_MAX_LENGTH + (1 << 20)));
  EXPECT_FALSE(w.failed());
  ASSERT_EQ(f.module->requests.size(), 2u);
  EXPECT_EQ(f.module->requests[0].length, P2PPROBE_DMA_MAX_LENGTH);
  EXPECT_EQ(f.module->requests[1].offset, 8192u + P2PPROBE_DMA_MAX_LENGTH);
  EXPECT_EQ(f.module->requests[1].length, 1u << 20);
}

TEST(VerifyKmod, KernelRefusalComesBackAsEremoteio) {
  KmodFixture f;
  f.module->read_error = -EREMOTEIO;
  TransferResult r = f.engine->transfer(f.request(Direction::kToDevice, 1 << 20));
  EXPECT_EQ(r.error, -EREMOTEIO);
  EXPECT_EQ(r.bytes, 0u);
  f.module->write_error = -EREMOTEIO;
  f.module->fail_after = 4096;
  TransferResult w = f.engine->transfer(f.request(Direction::kToStorage, 1 << 20));
  EXPECT_EQ(w.error, -EREMOTEIO);
  EXPECT_EQ(w.bytes, 4096u);
}

TEST(VerifyKmod, MismatchNamesTheFirstBadByte) {
  KmodFixture f;
  f.engine->transfer(f.request(Direction::kToStorage, 1 << 20, 3));
  f.module->corrupt_at = 8192 + 5000;
  TransferResult r = f.engine->transfer(f.request(Direction::kToDevice, 1 << 20, 3));
  EXPECT_FALSE(r.failed());
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->offset, 8192u + 5000u);
  EXPECT_EQ(r.mismatch->count, 1u);
  EXPECT_EQ(r.mismatch->expected ^ r.mismatch->found, 0x5a);
}

TEST(VerifyKmod, ModuleRefusalsAreIoctlErrors) {
  KmodFixture f;
  f.module->ioctl_error = -EPERM;  // the provider is not nvme or p2pprobe: the module's own check
  TransferResult r = f.engine->transfer(f.request(Direction::kToDevice, 1 << 20));
  EXPECT_EQ(r.error, -EPERM);
  EXPECT_NE(r.error_text.find("DMA_TEST"), std::string::npos);
}

TEST(VerifyKmod, ClientFillsAndReadsTheUapiStruct) {
  auto fake = std::make_unique<FakeDmaModule>();
  FakeDmaModule* module = fake.get();
  P2pprobeClient client(std::move(fake));
  TempDir dir;
  int fd = ::open((dir.path() + "/t").c_str(), O_RDWR | O_CREAT, 0600);
  DmaTestRequest req;
  req.provider = *Bdf::parse("0000:05:00.0");
  req.fd = fd;
  req.length = 8192;
  req.seed = 1;
  DmaTestResult res = client.dma_test(req);
  ::close(fd);
  EXPECT_EQ(res.ioctl_error, 0);
  EXPECT_TRUE(res.write.ran);
  EXPECT_TRUE(res.read.ran);
  EXPECT_EQ(res.write.bytes, 8192u);
  EXPECT_FALSE(res.mismatch);
  ASSERT_TRUE(res.target_pci);
  EXPECT_EQ(res.target_pci->str(), "0000:06:00.0");
  EXPECT_TRUE(res.target_queue_p2pdma);
  EXPECT_EQ(module->requests[0].size, sizeof(p2pprobe_dma_test));
  EXPECT_EQ(module->requests[0].version, P2PPROBE_API_VERSION);
}

}  // namespace
}  // namespace p2pcheck
