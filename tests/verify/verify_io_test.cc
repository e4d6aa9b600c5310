// The live-only layer of verify: real files through VerifyIo, dlopen errors, /dev/kmsg records.
#include "p2pcheck/verify/verify_io.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <gtest/gtest.h>

#include "p2pcheck/verify/verify_pattern.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::TempDir;

TEST(VerifyIo, ErrorsAreNegativeErrnoNotExceptions) {
  auto io = open_live_io();
  TempDir dir;
  EXPECT_EQ(io->open(dir.path() + "/missing", O_RDONLY), -ENOENT);
  int fd = io->open(dir.path() + "/f", O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  // O_EXCL: a second create of the same name is refused, which is what keeps verify off existing files.
  EXPECT_EQ(io->open(dir.path() + "/f", O_RDWR | O_CREAT | O_EXCL, 0600), -EEXIST);
  EXPECT_EQ(io->pwrite(fd, "abcd", 4, 0), 4);
  char buf[4];
  EXPECT_EQ(io->pread(fd, buf, 4, 0), 4);
  EXPECT_EQ(std::memcmp(buf, "abcd", 4), 0);
  EXPECT_EQ(io->fallocate(fd, 0, 8192), 0);
  FileStat st;
  ASSERT_EQ(io->stat(dir.path() + "/f", st), 0);
  EXPECT_TRUE(st.is_regular);
  EXPECT_EQ(st.size, 8192u);
  ASSERT_EQ(io->stat(dir.path(), st), 0);
  EXPECT_TRUE(st.is_dir);
  EXPECT_EQ(io->close(fd), 0);
  EXPECT_EQ(io->unlink(dir.path() + "/f"), 0);
  EXPECT_EQ(io->unlink(dir.path() + "/f"), -ENOENT);
}

TEST(VerifyIo, MapsAFileSharedAtOffsetZero) {
  auto io = open_live_io();
  TempDir dir;
  dir.write("allocate", std::string(8192, '\0'));
  int fd = io->open(dir.path() + "/allocate", O_RDWR);
  ASSERT_GE(fd, 0);
  int err = 1;
  void* p = io->map_shared(fd, 8192, err);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(err, 0);
  std::memcpy(p, "p2p", 3);
  EXPECT_EQ(io->unmap(p, 8192), 0);
  char buf[3];
  EXPECT_EQ(io->pread(fd, buf, 3, 0), 3);
  EXPECT_EQ(std::memcmp(buf, "p2p", 3), 0);
  io->close(fd);
  EXPECT_EQ(io->map_shared(-1, 4096, err), nullptr);
  EXPECT_EQ(err, -EBADF);
}

TEST(VerifyIo, LoaderSaysWhyALibraryDidNotLoad) {
  auto loader = open_live_loader();
  std::string error;
  EXPECT_EQ(loader->open("libp2pcheck-no-such-library.so", error), nullptr);
  EXPECT_NE(error.find("libp2pcheck-no-such-library.so"), std::string::npos) << error;
  void* libc = loader->open("libc.so.6", error);
  ASSERT_NE(libc, nullptr);
  EXPECT_NE(loader->symbol(libc, "pread"), nullptr);
  EXPECT_NE(loader->path_of(libc).find("libc.so.6"), std::string::npos);
}

TEST(VerifyIo, KmsgRecordsBecomeTheirText) {
  EXPECT_EQ(kmsg_text("3,1234,567890,-;nvme nvme0: I/O 12 QID 3 timeout, reset controller\n"),
            "nvme nvme0: I/O 12 QID 3 timeout, reset controller");
  EXPECT_EQ(
      kmsg_text("4,99,1,c;pcieport 0000:00:01.1: AER: Corrected error\n SUBSYSTEM=pci\n DEVICE=+pci:0000:00:01.1\n"),
      "pcieport 0000:00:01.1: AER: Corrected error");
  EXPECT_TRUE(kmsg_relevant("nvme nvme0: I/O 12 QID 3 timeout, reset controller"));
  // As the lab's fault injection logs it: the kernel escapes the message's own line break.
  EXPECT_EQ(kmsg_text("4,352,1,-;FAULT_INJECTION: forcing a failure.\\x0aname fail_io_timeout, times 1\n"),
            "FAULT_INJECTION: forcing a failure. / name fail_io_timeout, times 1");
  EXPECT_EQ(kmsg_text("4,1,1,-;a\\x5cb\\x0"), "a\\b\\x0");
  EXPECT_TRUE(kmsg_relevant("amdgpu 0000:43:00.0: AIS: P2P DMA not accessible"));
  EXPECT_TRUE(kmsg_relevant("pci 0000:00:01.1: p2pdma: ACS redirect is set"));
  EXPECT_FALSE(kmsg_relevant("usb 1-1: new high-speed USB device number 2"));
}

TEST(VerifyIo, ErrnoNamesAndMeanings) {
  EXPECT_EQ(errno_name(-EREMOTEIO), "EREMOTEIO");
  EXPECT_EQ(errno_name(EIO), "EIO");
  EXPECT_NE(errno_meaning(-EREMOTEIO).find("pci_p2pdma_distance"), std::string::npos);
  EXPECT_NE(errno_meaning(-EREMOTEIO).find("md, dm, loop"), std::string::npos);
  EXPECT_NE(errno_meaning(-EIO).find("io_timeout"), std::string::npos);
  EXPECT_NE(errno_meaning(-EPERM).find("CMB"), std::string::npos);
}

TEST(VerifyIo, LiveKernelLogSaysWhyItCannotRead) {
  // Either it reads (root, or dmesg_restrict=0) or it names the reason; it never throws.
  auto log = open_live_kernel_log();
  std::string problem = log->start();
  if (!problem.empty()) {
    EXPECT_NE(problem.find("/dev/kmsg"), std::string::npos);
    EXPECT_TRUE(log->read_new().empty());
  } else {
    for (const auto& line : log->read_new()) EXPECT_EQ(line.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace p2pcheck
