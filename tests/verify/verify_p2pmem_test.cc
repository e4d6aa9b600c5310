// The p2pmem engine with a plain file standing in for p2pmem/allocate (mapped MAP_SHARED at offset
// 0, as the kernel requires) and a real O_DIRECT target file.
#include "p2pcheck/verify/verify_p2pmem.h"

#include <fcntl.h>

#include <gtest/gtest.h>

#include "verify_fakes.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

struct P2pmemFixture {
  TempDir devices, storage;
  std::shared_ptr<FakeIo> io = std::make_shared<FakeIo>();
  std::shared_ptr<VerifyEngine> engine;
  int fd = -1;
  bool direct = true;
  P2pmemFixture() {
    // The pool's stand-in: the kernel hands out fresh pages per mapping; a file is one fixed page set.
    devices.write("0000:05:00.0/p2pmem/allocate", std::string(1 << 20, '\0'));
    engine = make_p2pmem_engine(io, devices.path());
    fd = io->open(storage.path() + "/target", O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0600);
    if (fd == -EINVAL) {
      direct = false;
      fd = io->open(storage.path() + "/target", O_RDWR | O_CREAT, 0600);
    }
  }
  ~P2pmemFixture() { io->close(fd); }
  TransferRequest request(Direction d, std::uint64_t size, std::uint64_t seed) {
    TransferRequest r;
    r.provider = *Bdf::parse("0000:05:00.0");
    r.client = *Bdf::parse("0000:06:00.0");
    r.direction = d;
    r.target = {fd, storage.path() + "/target", false, 0, size};
    r.chunk = 256 << 10;
    r.seed = seed;
    return r;
  }
};

TEST(VerifyP2pmem, WritesFromAndReadsIntoTheMappedPages) {
  P2pmemFixture f;
  ASSERT_GE(f.fd, 0);
  // device -> storage: pattern filled into the mapping, pwrite from it.
  TransferResult w = f.engine->transfer(f.request(Direction::kToStorage, 1 << 20, 21));
  EXPECT_FALSE(w.failed()) << w.error << " " << w.error_text;
  EXPECT_EQ(w.bytes, 1u << 20);
  HostIoResult back = read_and_check(*f.io, f.fd, 0, 1 << 20, 4096, 21);
  EXPECT_EQ(back.error, 0);
  EXPECT_FALSE(back.mismatch);
  // The mapping was opened from the provider's allocate file, read-write.
  EXPECT_EQ(f.io->opened.back(), f.devices.path() + "/0000:05:00.0/p2pmem/allocate");
  EXPECT_EQ(f.io->open_flags.back() & O_ACCMODE, O_RDWR);

  // storage -> device: host wrote the pattern; pread into the mapping, compared there.
  ASSERT_EQ(write_pattern(*f.io, f.fd, 0, 1 << 20, 4096, 22).error, 0);
  TransferResult r = f.engine->transfer(f.request(Direction::kToDevice, 1 << 20, 22));
  EXPECT_FALSE(r.failed());
  EXPECT_FALSE(r.mismatch);
  EXPECT_GT(r.ns, 0u);
}

TEST(VerifyP2pmem, ATornBlockOnStorageIsFound) {
  P2pmemFixture f;
  ASSERT_GE(f.fd, 0);
  ASSERT_EQ(write_pattern(*f.io, f.fd, 0, 1 << 20, 4096, 7).error, 0);
  AlignedBuffer zero(4096);
  std::memset(zero.data(), 0, 4096);
  ASSERT_EQ(f.io->pwrite(f.fd, zero.data(), 4096, 300 << 10), 4096);  // one page never written
  TransferResult r = f.engine->transfer(f.request(Direction::kToDevice, 1 << 20, 7));
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->offset / 4096, (300u << 10) / 4096);
}

TEST(VerifyP2pmem, ErrorsOfTheDataPathAreReported) {
  P2pmemFixture f;
  ASSERT_GE(f.fd, 0);
  f.io->pwrite_error = [&](int fd, std::uint64_t off) -> long {
    return fd == f.fd && off >= (512 << 10) ? -EREMOTEIO : 0;
  };
  TransferResult w = f.engine->transfer(f.request(Direction::kToStorage, 1 << 20, 1));
  EXPECT_EQ(w.error, -EREMOTEIO);
  EXPECT_EQ(w.bytes, 512u << 10);  // what went before the refusal

  TransferRequest r = f.request(Direction::kToDevice, 1 << 20, 1);
  r.provider = *Bdf::parse("0000:07:00.0");  // no p2pmem/allocate there
  TransferResult missing = f.engine->transfer(r);
  EXPECT_EQ(missing.error, -ENOENT);
  EXPECT_NE(missing.error_text.find("0000:07:00.0/p2pmem/allocate"), std::string::npos);
}

}  // namespace
}  // namespace p2pcheck
