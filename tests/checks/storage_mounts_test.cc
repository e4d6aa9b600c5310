// The storage check on mounts and namespaces: device numbers through mountinfo, what cannot be
// mapped (unknown, not absent), held, swap and unused namespaces, fabrics, native NVMe multipath,
// and every file read once.
#include <gtest/gtest.h>

#include "p2pcheck/checks/storage.h"
#include "storage_fixture.h"
#include "test_expect.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

TEST_F(Storage, DevRootIsMappedThroughMountinfoDeviceNumbers) {
  machine_.mounts[0].device = "/dev/root";
  dir_.write("proc/self/mountinfo",
             "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/root rw\n"
             "23 22 0:5 / /proc rw - proc proc rw\n");
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme0n1p2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kPass);
  EXPECT_TRUE(layout_.unmapped.empty());
}

TEST_F(Storage, UnmappableDeviceIsUnknownNotAbsent) {
  machine_.mounts.push_back({"/dev/disk/by-label/DATA", "/data", "xfs", "rw"});
  auto fs = run();
  ASSERT_EQ(layout_.unmapped.size(), 1u);
  bool unknown = false;
  for (const auto& f : fs)
    if (f.id == "storage.unknown" && has_evidence(f, "/proc/mounts", "by-label/DATA")) {
      unknown = true;
      EXPECT_EQ(f.level, Level::kUnknown);
    }
  EXPECT_TRUE(unknown);
}

TEST_F(Storage, HeldButUnmountedVolumeIsReported) {
  block_.dm("dm-2", "253:2", "vg1-lv", "LVM-abc", {"nvme1n1"});
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme1n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_TRUE(contains(f->message, "not mounted"));
  EXPECT_TRUE(contains(f->message, "no file system mounted on dm-2"));
  EXPECT_FALSE(find(fs, "storage.raw", "nvme1n1"));
}

TEST_F(Storage, SwapPartitionIsInfo) {
  dir_.write("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/dev/nvme1n1p1 partition 8388604 0 -2\n");
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme1n1p1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kInfo);
  EXPECT_TRUE(has_evidence(*f, "/proc/swaps", "nvme1n1p1"));
}

TEST_F(Storage, UnusedNamespaceWithZfsMountedIsOnlyAWarning) {
  machine_.mounts.push_back({"tank/data", "/tank", "zfs", "rw,xattr"});
  auto fs = run();
  const Finding* f = find(fs, "storage.raw", "nvme1n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_TRUE(contains(f->message, "zfs"));
}

TEST_F(Storage, NoMountTableMakesUnusedUnknownOnce) {
  machine_.mounts.clear();
  auto fs = run();
  // One cause: one finding naming the namespaces it leaves open, none per namespace.
  EXPECT_FALSE(find(fs, "storage.raw", "nvme0n1"));
  const Finding* f = find(fs, "storage.unknown", "");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kUnknown);
  EXPECT_TRUE(contains(f->message, "nvme0n1")) << f->message;
  int unknown = 0;
  for (const auto& g : fs) unknown += g.level == Level::kUnknown;
  EXPECT_EQ(unknown, 1);
}

TEST(StorageTree, NoBlockLayerIsUnknown) {
  FakeRoot dir;
  dir.write("sys/bus/pci/devices/.keep", "");
  Machine m;
  m.mounts.push_back({"/dev/nvme0n1p2", "/", "ext4", "rw"});
  Inventory inv;
  auto src = dir.source();
  auto fs = check_storage(read_storage(*src, m, inv));
  const Finding* f = find(fs, "storage.unknown", "");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kUnknown);
  EXPECT_FALSE(f->evidence.empty());
  EXPECT_FALSE(find(fs, "storage.nvme_multipath", ""));  // no NVMe controllers: nothing to say
}

TEST_F(Storage, FabricsNamespaceIsNotLocal) {
  block_.disk("nvme5n1", "259:9", "sys/devices/virtual/nvme-fabrics/ctl/nvme5");
  machine_.mounts.push_back({"/dev/nvme5n1", "/remote", "xfs", "rw"});
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme5n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_TRUE(contains(f->message, "no local PCIe NVMe function"));
}

// Native multipath: head nvme1n1 in nvme-subsys1 over nvme1c1n1 and nvme1c2n1 (two controllers).

TEST_F(Multipath, HeadNodeFailsWithTheCommandLineFix) {
  make_head();
  machine_.mounts.push_back({"/dev/nvme1n1p1", "/data", "xfs", "rw"});
  auto fs = run();
  const Finding* f = find(fs, "storage.nvme_multipath", "nvme1n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "nvme1c1n1, nvme1c2n1")) << f->message;
  EXPECT_TRUE(contains(f->message, "controllers nvme1, nvme2")) << f->message;
  EXPECT_TRUE(contains(f->fix, "nvme_core.multipath=N"));
  EXPECT_TRUE(contains(f->fix, "loses NVMe native multipathing"));
  EXPECT_TRUE(has_evidence(*f, "/sys/module/nvme_core/parameters/multipath", "Y"));
  // The file system on it is judged with the head in mind.
  const Finding* stack = find(fs, "storage.stack", "nvme1n1p1");
  ASSERT_TRUE(stack);
  EXPECT_EQ(stack->level, Level::kFail);
  EXPECT_TRUE(contains(stack->message, "multipath head"));
  // The fix is said once, in storage.nvme_multipath; the stack points there.
  EXPECT_FALSE(contains(stack->fix, "loses NVMe native multipathing")) << stack->fix;
  EXPECT_TRUE(contains(stack->fix, "storage.nvme_multipath")) << stack->fix;
  // No machine-wide multipath finding when per-head ones exist.
  EXPECT_FALSE(find(fs, "storage.nvme_multipath", ""));
}

TEST_F(Multipath, RawHeadFails) {
  make_head();
  auto fs = run();
  const Finding* f = find(fs, "storage.raw", "nvme1n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
}

TEST_F(Multipath, EnabledWithoutHeadsIsInfoAndParameterStatesAreDistinguished) {
  dir_.write("sys/module/nvme_core/parameters/multipath", "Y\n");
  auto fs = run();
  const Finding* f = find(fs, "storage.nvme_multipath", "");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kInfo);
  EXPECT_EQ(layout_.multipath.param, NvmeMultipath::Param::kEnabled);

  dir_.remove("sys/module/nvme_core/parameters/multipath");
  dir_.write("sys/module/nvme_core/parameters/io_timeout", "30\n");
  fs = run();
  EXPECT_EQ(layout_.multipath.param, NvmeMultipath::Param::kAbsent);
  EXPECT_EQ(find(fs, "storage.nvme_multipath", "")->level, Level::kPass);

  dir_.remove("sys/module/nvme_core");
  fs = run();
  EXPECT_EQ(layout_.multipath.param, NvmeMultipath::Param::kUnknown);
  f = find(fs, "storage.nvme_multipath", "");
  EXPECT_EQ(f->level, Level::kUnknown);
  EXPECT_TRUE(contains(f->evidence[0].value, "not present"));
}

TEST_F(Storage, EachFileIsReadOnce) {
  block_.dm("dm-0", "253:0", "vg0-data", "LVM-abc", {"nvme1n1p1"});
  machine_.mounts.push_back({"/dev/mapper/vg0-data", "/data", "xfs", "rw"});
  machine_.mounts.push_back({"/dev/mapper/vg0-data", "/data2", "xfs", "rw"});  // bind mount: same top
  run();
  const auto& reads = source_->access_log().file_reads;
  // Not vacuous: the mapping's files were read (once, though two mounts sit on it).
  EXPECT_TRUE(reads.count("/sys/devices/virtual/block/dm-0/dm/name"));
  EXPECT_TRUE(reads.count("/sys/module/nvme_core/parameters/multipath"));
  for (const auto& [path, count] : reads) EXPECT_EQ(count, 1) << path;
  int data_stacks = 0;
  for (const auto& s : layout_.stacks)
    if (s.nvme == "nvme1n1p1") {
      ++data_stacks;
      EXPECT_EQ(s.mounts.size(), 2u);
    }
  EXPECT_EQ(data_stacks, 1);
}

}  // namespace
}  // namespace p2pcheck
