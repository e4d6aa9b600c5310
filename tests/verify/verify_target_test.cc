// Where verify may write: a directory's file system must sit on the NVMe (st_dev -> sysfs -> the
// storage stacks); a raw device must be an NVMe namespace nothing mounts, holds or swaps on.
#include "p2pcheck/verify/verify_target.h"

#include <fcntl.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "test_expect.h"
#include "verify_fakes.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

struct Machine8Gpu {
  std::unique_ptr<Source> source;
  Topology topo;
  Inventory inv;
  Machine machine;
  StorageLayout layout;
  FakeIo io;
  // The generated fixture is only read, so the tree backend opens it in place.
  explicit Machine8Gpu(std::unique_ptr<Source> from = open_tree_source(fixture_root("epyc-mi300x-8gpu")))
      : source(std::move(from)) {
    PciDecoder decoder;
    topo = read_topology(*source, decoder);
    inv = read_inventory(*source, topo);
    machine = read_machine(*source);
    layout = read_storage(*source, machine, inv);
  }
  TargetPlan dir(const std::string& path) { return resolve_target_dir(path, io, *source, machine, layout, inv); }
  TargetPlan raw(const std::string& path, std::uint64_t offset = 0) {
    return resolve_raw_device(path, offset, io, *source, layout, inv);
  }
};

TEST(VerifyTarget, DirectoryOnAnNvmeFileSystem) {
  Machine8Gpu m;
  m.io.dir_on("/mnt/nvme1/scratch", 259, 1);  // nvme1n1, ext4 at /mnt/nvme1
  TargetPlan t = m.dir("/mnt/nvme1/scratch");
  EXPECT_EQ(t.kind, TargetPlan::Kind::kScratchFile);
  EXPECT_EQ(t.block_device, "nvme1n1");
  ASSERT_EQ(t.controllers.size(), 1u);
  EXPECT_EQ(t.controllers[0].str(), "0000:06:00.0");
  EXPECT_EQ(t.fstype, "ext4");
  EXPECT_EQ(t.mountpoint, "/mnt/nvme1");
  EXPECT_TRUE(t.stacked_layers.empty());
}

TEST(VerifyTarget, DirectoryOnMdIsOnBothNvmeAndSaysTheStackWillRefuse) {
  Machine8Gpu m;
  m.io.dir_on("/scratch", 9, 0);  // md0 (raid0 over nvme6n1, nvme7n1)
  TargetPlan t = m.dir("/scratch");
  EXPECT_EQ(t.block_device, "md0");
  EXPECT_EQ(t.controllers.size(), 2u);
  ASSERT_EQ(t.stacked_layers.size(), 1u);
  EXPECT_NE(t.stacked_layers[0].find("md0 (md"), std::string::npos) << t.stacked_layers[0];
  ASSERT_FALSE(t.notes.empty());
  EXPECT_NE(t.notes[0].find("EREMOTEIO"), std::string::npos);
}

TEST(VerifyTarget, RefusesFileSystemsNotOnNvme) {
  Machine8Gpu m;
  m.io.dir_on("/dev/shm", 0, 27);  // tmpfs: an anonymous device number
  std::string e = usage_error([&] { m.dir("/dev/shm"); });
  EXPECT_NE(e.find("not a block device"), std::string::npos) << e;
  TempDir real;  // a real file and a missing path: resolve_target_dir stats the real file system
  std::ofstream(real.path() + "/file") << "x";
  e = usage_error([&] { m.dir(real.path() + "/file"); });
  EXPECT_NE(e.find("not a directory"), std::string::npos) << e;
  e = usage_error([&] { m.dir(real.path() + "/missing"); });
  EXPECT_NE(e.find("No such file"), std::string::npos) << e;
}

TEST(VerifyTarget, RawDeviceMountedOrHeldIsRefused) {
  Machine8Gpu m;
  m.io.block_device("/dev/nvme1n1", 259, 1);
  std::string e = usage_error([&] { m.raw("/dev/nvme1n1"); });
  EXPECT_NE(e.find("mounted at /mnt/nvme1"), std::string::npos) << e;
  m.io.block_device("/dev/nvme6n1", 259, 6);
  e = usage_error([&] { m.raw("/dev/nvme6n1"); });
  EXPECT_NE(e.find("held by md0"), std::string::npos) << e;
  // A whole namespace is in use when any partition of it is.
  m.io.block_device("/dev/nvme8n1", 259, 8);
  e = usage_error([&] { m.raw("/dev/nvme8n1"); });
  EXPECT_NE(e.find("mounted at /"), std::string::npos) << e;
  // A partition is an NVMe target of its own, refused only for its own use.
  m.io.block_device("/dev/nvme8n1p2", 259, 10);
  e = usage_error([&] { m.raw("/dev/nvme8n1p2"); });
  EXPECT_NE(e.find("nvme8n1p2 is mounted at"), std::string::npos) << e;
  m.io.block_device("/dev/md0", 9, 0);
  e = usage_error([&] { m.raw("/dev/md0"); });
  EXPECT_NE(e.find("not an NVMe namespace"), std::string::npos) << e;
  e = usage_error([&] { m.raw("/etc/hostname"); });
  EXPECT_NE(e.find("not a block device"), std::string::npos) << e;
}

TEST(VerifyTarget, UnusedRawNamespaceIsAccepted) {
  // The 8-GPU machine with /mnt/nvme1 unmounted.
  Machine8Gpu m(fixture_unmounting("epyc-mi300x-8gpu", "/dev/nvme1n1").source());
  m.io.block_device("/dev/nvme1n1", 259, 1);
  TargetPlan t = m.raw("/dev/nvme1n1", 1 << 20);
  EXPECT_EQ(t.kind, TargetPlan::Kind::kRawDevice);
  EXPECT_EQ(t.block_device, "nvme1n1");
  EXPECT_EQ(t.raw_offset, 1u << 20);
  EXPECT_GT(t.device_bytes, 0u);
  ASSERT_EQ(t.controllers.size(), 1u);
  EXPECT_EQ(t.controllers[0].str(), "0000:06:00.0");
  std::string e = usage_error([&] { m.raw("/dev/nvme1n1", 1000); });
  EXPECT_NE(e.find("multiple of 4096"), std::string::npos) << e;
}

// A scratch-file plan for a real directory, as resolve_target_dir() makes it (st_dev of the directory).
TargetPlan scratch_plan(VerifyIo& io, const std::string& dir) {
  FileStat st;
  EXPECT_EQ(io.stat(dir, st), 0) << dir;
  TargetPlan t;
  t.path = dir;
  t.block_device = "test";
  t.dev_major = st.dev_major;
  t.dev_minor = st.dev_minor;
  return t;
}

TEST(VerifyTarget, ScratchFileIsNewExclusiveDirectAndRemoved) {
  TempDir dir;
  auto io = std::make_shared<FakeIo>();
  TargetOpen a = create_scratch_file(io, scratch_plan(*io, dir.path()), 1 << 20);
  ASSERT_TRUE(a.target) << a.problem;
  TargetOpen b = create_scratch_file(io, scratch_plan(*io, dir.path()), 1 << 20);
  ASSERT_TRUE(b.target);
  EXPECT_NE(a.target->path(), b.target->path());  // unique names
  EXPECT_EQ(io->open_flags[0] & (O_CREAT | O_EXCL | O_DIRECT | O_NOFOLLOW), O_CREAT | O_EXCL | O_DIRECT | O_NOFOLLOW);
  EXPECT_EQ(std::filesystem::file_size(a.target->path()), 1u << 20);  // preallocated
  std::string path = a.target->path();
  a.target.reset();
  EXPECT_EQ(remove_scratch_file(*io, path), "");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_NE(remove_scratch_file(*io, path).find("remove it by hand"), std::string::npos);
}

TEST(VerifyTarget, NoODirectNoScratchFileLeftBehind) {
  TempDir dir;
  auto io = std::make_shared<FakeIo>();
  io->o_direct_error = -EINVAL;
  TargetOpen a = create_scratch_file(io, scratch_plan(*io, dir.path()), 1 << 20);
  EXPECT_FALSE(a.target);
  EXPECT_NE(a.problem.find("does not support O_DIRECT"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  io->o_direct_error = 0;
  io->fallocate_error = -ENOSPC;
  a = create_scratch_file(io, scratch_plan(*io, dir.path()), 1 << 20);
  EXPECT_FALSE(a.target);
  EXPECT_NE(a.problem.find("No space"), std::string::npos) << a.problem;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// Issue 15: the directory is checked by path (st_dev -> the NVMe); a file system mounted over it, or a
// symlink swapped in, before the scratch file is created must not receive the test's writes.
TEST(VerifyTarget, ScratchFileOnAnotherFileSystemThanCheckedIsRefusedAndRemoved) {
  TempDir dir;
  auto io = std::make_shared<FakeIo>();
  io->dir_on(dir.path(), 259, 1);
  TargetPlan plan = scratch_plan(*io, dir.path());  // checked: 259:1
  io->dir_on(dir.path(), 8, 3);                     // now another file system is there
  TargetOpen a = create_scratch_file(io, plan, 1 << 20);
  EXPECT_FALSE(a.target);
  EXPECT_EQ(a.error, -EXDEV);
  EXPECT_NE(a.problem.find("changed between the check and the test"), std::string::npos) << a.problem;
  EXPECT_NE(a.problem.find("device 8:3, not on the checked 259:1"), std::string::npos) << a.problem;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));  // created O_EXCL, so ours: removed again
  io->dir_on(dir.path(), 259, 1);
  a = create_scratch_file(io, plan, 1 << 20);
  EXPECT_TRUE(a.target) << a.problem;
}

TEST(VerifyTarget, RawOpenIsExclusive) {
  auto io = std::make_shared<FakeIo>();
  TargetPlan plan;
  plan.kind = TargetPlan::Kind::kRawDevice;
  plan.path = "/nonexistent/nvme9n1";
  TargetOpen t = open_raw_device(io, plan);
  EXPECT_FALSE(t.target);
  EXPECT_EQ(io->open_flags[0] & (O_EXCL | O_DIRECT | O_ACCMODE), O_EXCL | O_DIRECT | O_RDWR);
}

// Issue 15: the raw device is checked by path (stat: st_rdev -> nvme1n1, unused) and opened by path
// again; a node that names another device by then (or is no device at all) is refused unwritten.
TEST(VerifyTarget, RawDeviceSwappedAfterTheCheckIsRefused) {
  Machine8Gpu m(fixture_unmounting("epyc-mi300x-8gpu", "/dev/nvme1n1").source());
  m.io.block_device("/dev/nvme1n1", 259, 1);
  TargetPlan plan = m.raw("/dev/nvme1n1", 0);
  EXPECT_EQ(plan.dev_major, 259u);
  EXPECT_EQ(plan.dev_minor, 1u);
  TempDir dir;
  const std::string image = dir.path() + "/image";
  std::ofstream(image) << std::string(8192, 'x');
  auto io = std::make_shared<FakeIo>();
  io->redirect["/dev/nvme1n1"] = image;

  io->block_device("/dev/nvme1n1", 259, 7);  // another namespace now
  TargetOpen t = open_raw_device(io, plan);
  EXPECT_FALSE(t.target);
  EXPECT_EQ(t.error, -EXDEV);
  EXPECT_NE(t.problem.find("changed between the check and the open: it is block device 259:7 now, the checked "
                           "nvme1n1 was 259:1"),
            std::string::npos)
      << t.problem;

  io->stats.erase("/dev/nvme1n1");  // a regular file now
  t = open_raw_device(io, plan);
  EXPECT_FALSE(t.target);
  EXPECT_NE(t.problem.find("it is not a block device now"), std::string::npos) << t.problem;

  io->block_device("/dev/nvme1n1", 259, 1);  // unchanged: opened
  t = open_raw_device(io, plan);
  EXPECT_TRUE(t.target) << t.problem;
}

}  // namespace
}  // namespace p2pcheck
