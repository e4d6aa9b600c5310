// The pattern as verify uses it: host-side writes and checks over real O_DIRECT files.
#include "p2pcheck/verify/verify_pattern.h"

#include <fcntl.h>

#include <cerrno>
#include <gtest/gtest.h>
#include <vector>

#include "test_tree.h"
#include "uapi/p2pprobe.h"

namespace p2pcheck {
namespace {

using testing::TempDir;

TEST(VerifyPattern, IsTheUapiPattern) {
  std::vector<unsigned char> buf(4096);
  fill_pattern(buf.data(), buf.size(), 8192, 42);
  for (std::uint64_t i = 0; i < buf.size(); i += 97) EXPECT_EQ(buf[i], p2pprobe_pattern_byte(42, 8192 + i));
  EXPECT_FALSE(check_pattern(buf.data(), buf.size(), 8192, 42));
}

TEST(VerifyPattern, MisdirectedStaleAndTornDataFail) {
  std::vector<unsigned char> buf(8192);
  fill_pattern(buf.data(), buf.size(), 0, 7);
  // Misdirected: the right data at the wrong offset.
  auto mm = check_pattern(buf.data(), 4096, 4096, 7);
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->offset, 4096u);
  // Stale: another run's seed.
  EXPECT_TRUE(check_pattern(buf.data(), 4096, 0, 8));
  // Torn: one 512-byte block of the second page never arrived.
  std::fill(buf.begin() + 4096 + 1024, buf.begin() + 4096 + 1536, 0);
  mm = check_pattern(buf.data(), buf.size(), 0, 7);
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->offset / kPatternBlock, (4096u + 1024u) / kPatternBlock);
  EXPECT_GT(mm->count, 400u);
}

TEST(VerifyPattern, MergeKeepsTheFirstAndAddsCounts) {
  std::optional<DataMismatch> all;
  merge_mismatch(all, std::nullopt);
  EXPECT_FALSE(all);
  merge_mismatch(all, DataMismatch{100, 2, 1, 2});
  merge_mismatch(all, DataMismatch{9000, 5, 3, 4});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->offset, 100u);
  EXPECT_EQ(all->count, 7u);
}

TEST(VerifyPattern, HostWriteAndReadBackThroughODirect) {
  TempDir dir;
  auto io = open_live_io();
  int fd = io->open(dir.path() + "/t", O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0600);
  if (fd == -EINVAL) GTEST_SKIP() << "the temporary directory's file system has no O_DIRECT";
  ASSERT_GE(fd, 0);
  const std::uint64_t offset = 3 * 4096, size = 5 * 4096, chunk = 2 * 4096;  // a partial last chunk
  HostIoResult w = write_pattern(*io, fd, offset, size, chunk, 99);
  EXPECT_EQ(w.error, 0);
  EXPECT_EQ(w.bytes, size);
  HostIoResult r = read_and_check(*io, fd, offset, size, chunk, 99);
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.bytes, size);
  EXPECT_FALSE(r.mismatch);
  // Only [offset, offset + size) was written: the bytes before it are still a hole of zeros.
  AlignedBuffer head(4096);
  ASSERT_EQ(io->pread(fd, head.data(), 4096, 0), 4096);
  EXPECT_EQ(static_cast<unsigned char*>(head.data())[0], 0);

  // One corrupted byte is found at its absolute offset.
  AlignedBuffer page(4096);
  ASSERT_EQ(io->pread(fd, page.data(), 4096, offset + 4096), 4096);
  static_cast<unsigned char*>(page.data())[700] ^= 0xff;
  ASSERT_EQ(io->pwrite(fd, page.data(), 4096, offset + 4096), 4096);
  r = read_and_check(*io, fd, offset, size, chunk, 99);
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->offset, offset + 4096 + 700);
  EXPECT_EQ(r.mismatch->count, 1u);

  // Reading past the end is a short transfer, not a silent success.
  r = read_and_check(*io, fd, offset + size, 4096, chunk, 99);
  EXPECT_EQ(r.error, -ENODATA);
  io->close(fd);
}

}  // namespace
}  // namespace p2pcheck
