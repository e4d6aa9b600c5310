#include "p2pcheck/checks/storage.h"

#include <gtest/gtest.h>
#include <map>

#include "file_map.h"
#include "storage_fixture.h"
#include "test_expect.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::expect_evidence_on_non_pass;
using testing::FakeRoot;
using testing::FileMap;
using testing::TreeWriter;
using namespace p2pcheck::testing;

// Every non-PASS finding must say what it rests on.
// The pure check on a filled layout: ext4 with data=journal straight on an NVMe partition.
TEST(StorageCheck, Ext4JournalModeOnAFilledLayout) {
  StorageLayout layout;
  layout.block_known = true;
  layout.mounts_known = true;
  layout.nvme_controllers = 1;
  layout.multipath.param = NvmeMultipath::Param::kDisabled;
  layout.multipath.param_evidence = {"/sys/module/nvme_core/parameters/multipath", "N"};
  StorageStack s;
  s.nvme = "nvme0n1p2";
  s.nvme_namespace = "nvme0n1";
  s.controller = "nvme0";
  s.controller_bdf = Bdf::parse("0000:04:00.0");
  s.layers.push_back({"nvme0n1p2", LayerKind::kNvmePartition, "", {}});
  s.mounts.push_back({"/dev/nvme0n1p2", "/data", "ext4", "rw,data=journal"});
  s.ext4_data_mode = "journal";
  s.ext4_data_mode_evidence = {"/proc/mounts", mount_line(s.mounts.front())};
  layout.stacks.push_back(s);
  auto fs = check_storage(layout);
  const Finding* f = find(fs, "storage.stack", "nvme0n1p2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_EQ(f->message,
            "/data: ext4 on nvme0n1p2: ext4 with data=journal: hipFile accepts only data=ordered and falls "
            "back to POSIX I/O");
  EXPECT_TRUE(has_evidence(*f, "/proc/mounts", "data=journal"));
  EXPECT_EQ(find(fs, "storage.nvme_multipath", "")->level, Level::kPass);
}

TEST_F(Storage, Ext4WithDefaultModeDirectlyOnNvmePasses) {
  auto fs = run();
  const Finding* root = find(fs, "storage.stack", "nvme0n1p2");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->level, Level::kPass);
  EXPECT_TRUE(contains(root->message, "/: ext4 on nvme0n1p2")) << root->message;
  EXPECT_TRUE(contains(root->message, "default")) << root->message;
  EXPECT_TRUE(has_evidence(*root, "/proc/mounts", "/dev/nvme0n1p2 / ext4"));
  // The EFI partition is not a data file system: INFO, whatever it sits on.
  const Finding* efi = find(fs, "storage.stack", "nvme0n1p1");
  ASSERT_TRUE(efi);
  EXPECT_EQ(efi->level, Level::kInfo);
  // nvme1n1 holds nothing: raw use is fine.
  const Finding* raw = find(fs, "storage.raw", "nvme1n1");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->level, Level::kPass);
  EXPECT_TRUE(contains(raw->message, "raw block device"));
  const Finding* mp = find(fs, "storage.nvme_multipath", "");
  ASSERT_TRUE(mp);
  EXPECT_EQ(mp->level, Level::kPass);
  EXPECT_TRUE(has_evidence(*mp, "/sys/module/nvme_core/parameters/multipath", "N"));
  // The stack knows its controller, for pairing with GPUs.
  ASSERT_FALSE(layout_.stacks.empty());
  EXPECT_EQ(layout_.stacks[0].controller, "nvme0");
  EXPECT_EQ(layout_.stacks[0].controller_bdf, Bdf::parse("0000:04:00.0"));
  EXPECT_EQ(layout_.stacks[0].ext4_data_mode, "ordered");
  expect_evidence_on_non_pass(fs);
}

TEST_F(Storage, Ext4JournalAndWritebackFail) {
  machine_.mounts[0].options = "rw,relatime,data=journal";
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme0n1p2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "data=journal"));
  EXPECT_TRUE(contains(f->fix, "data=ordered"));
  EXPECT_TRUE(contains(f->fix, "cost"));

  machine_.mounts[0].options = "rw,data=writeback";
  fs = run();
  f = find(fs, "storage.stack", "nvme0n1p2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "data=writeback"));
}

TEST_F(Storage, Ext4ModeHiddenFromProcMountsIsReadFromProcFs) {
  // A superblock default (tune2fs -o journal_data) does not show in /proc/mounts.
  dir_.write("proc/fs/ext4/nvme0n1p2/options", "rw\nbsddf\ndata=journal\n");
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme0n1p2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(has_evidence(*f, "/proc/fs/ext4/nvme0n1p2/options", "data=journal"));
  dir_.write("proc/fs/ext4/nvme0n1p2/options", "rw\ndata=ordered\n");
  fs = run();
  EXPECT_EQ(find(fs, "storage.stack", "nvme0n1p2")->level, Level::kPass);
}

TEST_F(Storage, XfsPassesOtherFileSystemsFail) {
  machine_.mounts.push_back({"/dev/nvme1n1p1", "/data", "xfs", "rw,noatime"});
  auto fs = run();
  EXPECT_EQ(find(fs, "storage.stack", "nvme1n1p1")->level, Level::kPass);
  EXPECT_FALSE(find(fs, "storage.raw", "nvme1n1"));  // in use now

  machine_.mounts.back().fstype = "btrfs";
  fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme1n1p1");
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "btrfs"));
  EXPECT_TRUE(contains(f->fix, "HIPFILE_UNSUPPORTED_FILE_SYSTEMS"));

  machine_.mounts.back().fstype = "reiserfs";  // not in the table at all
  fs = run();
  f = find(fs, "storage.stack", "nvme1n1p1");
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "not ext4 or xfs"));
  expect_evidence_on_non_pass(fs);
}

TEST_F(Storage, LvmOnAllNvmeWarnsAndSpanningAnotherDiskFails) {
  block_.dm("dm-0", "253:0", "vg0-data", "LVM-AbCdEfGh12345678AbCdEfGh12345678abcdefgh12345678AbCdEfGh1234",
            {"nvme1n1p1"});
  machine_.mounts.push_back({"/dev/mapper/vg0-data", "/data", "xfs", "rw"});
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme1n1p1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_TRUE(contains(f->message, "/data: xfs on LVM vg0-data (dm-0) on nvme1n1p1")) << f->message;
  EXPECT_TRUE(contains(f->message, "all-NVMe"));
  EXPECT_TRUE(has_evidence(*f, "/sys/block/dm-0/dm/uuid", "LVM-"));

  // The same volume group also on a SATA disk: hipFile falls back.
  FakeRoot other;
  FakeBlock b2(other);
  other.write("sys/module/nvme_core/parameters/multipath", "N\n");
  b2.nvme("nvme1", "nvme1n1", "259:3");
  b2.partition("nvme1n1", "nvme1n1p1", "259:4", 1);
  b2.disk("sda", "8:0");
  b2.partition("sda", "sda1", "8:1", 1);
  b2.dm("dm-0", "253:0", "vg0-data", "LVM-xyz", {"nvme1n1p1", "sda1"});
  auto src = other.source();
  Machine m;
  m.mounts.push_back({"/dev/mapper/vg0-data", "/data", "xfs", "rw"});
  Inventory inv;
  inv.nvmes.push_back(controller("nvme1", "0000:05:00.0", {{"nvme1n1", {"nvme1n1p1"}}}));
  fs = check_storage(read_storage(*src, m, inv));
  f = find(fs, "storage.stack", "nvme1n1p1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "sda1")) << f->message;
  EXPECT_TRUE(contains(f->fix, "pvmove"));
  expect_evidence_on_non_pass(fs);
}

TEST_F(Storage, DmCryptFailsWithTheReasonAndFix) {
  block_.dm("dm-1", "253:1", "luks-data", "CRYPT-LUKS2-0123456789abcdef0123456789abcdef-luks-data", {"nvme1n1p1"});
  machine_.mounts.push_back({"/dev/mapper/luks-data", "/secure", "ext4", "rw"});
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme1n1p1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "dm-crypt"));
  EXPECT_TRUE(contains(f->message, "EREMOTEIO"));
  EXPECT_TRUE(contains(f->message, "falls back to POSIX"));
  EXPECT_TRUE(contains(f->fix, "directly on the NVMe partition"));
  EXPECT_TRUE(has_evidence(*f, "/sys/block/dm-1/dm/uuid", "CRYPT-LUKS2"));
}

TEST_F(Storage, DeviceMapperKindsFromUuidPrefix) {
  struct Case {
    std::string uuid;
    LayerKind kind;
  };
  std::vector<Case> cases = {{"mpath-3600508b400105e210000900000490000", LayerKind::kDmMultipath},
                             {"part1-mpath-3600508b400105e21", LayerKind::kDmPartition},
                             {"CRYPT-VERITY-abc-root", LayerKind::kDmOther},
                             {"CRYPT-PLAIN-abc", LayerKind::kDmCrypt},
                             {"stratis-1-abc", LayerKind::kDmOther},
                             {"", LayerKind::kDmOther}};
  for (const auto& c : cases) {
    FakeRoot d;
    FakeBlock b(d);
    b.nvme("nvme1", "nvme1n1", "259:3");
    b.dm("dm-5", "253:5", "thing", c.uuid, {"nvme1n1"});
    Machine m;
    m.mounts.push_back({"/dev/dm-5", "/x", "xfs", "rw"});
    Inventory inv;
    inv.nvmes.push_back(controller("nvme1", "0000:05:00.0", {{"nvme1n1", {}}}));
    auto src = d.source();
    StorageLayout layout = read_storage(*src, m, inv);
    ASSERT_EQ(layout.stacks.size(), 1u) << c.uuid;
    ASSERT_EQ(layout.stacks[0].layers.size(), 2u);
    EXPECT_EQ(layout.stacks[0].layers[0].kind, c.kind) << c.uuid;
    EXPECT_EQ(layout.stacks[0].layers[1].kind, LayerKind::kNvmeNamespace);
    auto fs = check_storage(layout);
    EXPECT_EQ(find(fs, "storage.stack", "nvme1n1")->level, Level::kFail) << c.uuid;
  }
}

TEST_F(Storage, MdRaidOverTwoNvmesIsOneFindingNamingBoth) {
  block_.md("md0", "9:0", "raid1", {"nvme0n1p1", "nvme1n1p1"});
  machine_.mounts.erase(machine_.mounts.begin() + 1);  // no EFI mount this time
  machine_.mounts.push_back({"/dev/md0", "/scratch", "ext4", "rw"});
  dir_.write("proc/fs/ext4/md0/options", "rw\ndata=ordered\n");
  auto fs = run();
  // Two stacks share one file system: its files are still read once. Not vacuous: md0's files were read.
  const auto& reads = source_->access_log().file_reads;
  EXPECT_TRUE(reads.count("/sys/devices/virtual/block/md0/md/level"));
  EXPECT_TRUE(reads.count("/proc/fs/ext4/md0/options"));
  for (const auto& [path, count] : reads) EXPECT_EQ(count, 1) << path;
  // One cause, one finding: md0 with both members, its reason and fix once.
  const Finding* f = find(fs, "storage.stack", "nvme0n1p1, nvme1n1p1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "md RAID (md0)"));
  EXPECT_TRUE(contains(f->message, "md raid1 (md0) on nvme0n1p1 and nvme1n1p1")) << f->message;
  EXPECT_EQ(f->message.find("md RAID (md0)"), f->message.rfind("md RAID (md0)")) << f->message;
  EXPECT_TRUE(has_evidence(*f, "/sys/block/md0/md/level", "raid1"));
  EXPECT_EQ(f->devices.size(), 2u);
  int md_findings = 0;
  for (const auto& g : fs) md_findings += g.id == "storage.stack" && contains(g.message, "md0");
  EXPECT_EQ(md_findings, 1);
  bool found = false;
  for (const auto& s : layout_.stacks)
    if (s.nvme == "nvme0n1p1") {
      found = true;
      EXPECT_EQ(s.other_members, std::vector<std::string>{"nvme1n1p1"});
      EXPECT_TRUE(s.non_nvme_members.empty());
    }
  EXPECT_TRUE(found);
}

TEST_F(Storage, PartitionOfAnMdArrayIsWalkedThroughTheArray) {
  block_.md("md0", "9:0", "raid0", {"nvme1n1"});
  block_.partition("md0", "md0p1", "259:8", 1);
  machine_.mounts.push_back({"/dev/md0p1", "/fast", "xfs", "rw"});
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme1n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "/fast: xfs on md0p1 on md raid0 (md0) on nvme1n1")) << f->message;
}

TEST_F(Storage, DeviceLinksInDevAreFollowed) {
  dir_.write("dev/nvme1n1p1", "");
  dir_.link("dev/disk/by-uuid/0f3c-11aa", "../../nvme1n1p1");
  machine_.mounts.push_back({"/dev/disk/by-uuid/0f3c-11aa", "/data", "xfs", "rw"});
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme1n1p1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kPass);
  EXPECT_TRUE(layout_.unmapped.empty());
}

TEST_F(Storage, EscapedMountPointsMatchLoopBackingFiles) {
  machine_.mounts.push_back({"/dev/nvme1n1p1", "/mnt/my\\040data", "xfs", "rw"});
  block_.loop("loop3", "7:3", "/mnt/my data/vm.img (deleted)");
  machine_.mounts.push_back({"/dev/loop3", "/mnt/vm", "ext4", "rw"});
  auto fs = run();
  bool found = false;
  for (const auto& f : fs)
    if (f.subject == "nvme1n1p1" && contains(f.message, "loop3")) {
      found = true;
      EXPECT_EQ(f.level, Level::kFail);
    }
  EXPECT_TRUE(found);
}

TEST_F(Storage, DmMultipathOverNvmeFails) {
  block_.dm("dm-4", "253:4", "mpatha", "mpath-eui.0025385b71b0f4a1", {"nvme1n1"});
  block_.dm("dm-5", "253:5", "mpatha1", "part1-mpath-eui.0025385b71b0f4a1", {"dm-4"});
  machine_.mounts.push_back({"/dev/mapper/mpatha1", "/mp", "xfs", "rw"});
  auto fs = run();
  const Finding* f = find(fs, "storage.stack", "nvme1n1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "dm partition mapping mpatha1 (dm-5) on dm-multipath mpatha (dm-4) on nvme1n1"))
      << f->message;
  EXPECT_TRUE(contains(f->fix, "failover"));
}

TEST_F(Storage, LoopDeviceWithBackingFileOnNvmeFails) {
  machine_.mounts.push_back({"/dev/nvme1n1p1", "/srv", "ext4", "rw"});
  block_.loop("loop0", "7:0", "/srv/images/disk.img");
  machine_.mounts.push_back({"/dev/loop0", "/mnt/img", "ext4", "rw"});
  // A snap: a read-only image, not a data target.
  block_.loop("loop1", "7:1", "/var/lib/snapd/snaps/core_1.snap");
  machine_.mounts.push_back({"/dev/loop1", "/snap/core/1", "squashfs", "ro"});
  auto fs = run();
  const Finding* direct = nullptr;
  const Finding* via_loop = nullptr;
  for (const auto& f : fs) {
    if (f.id != "storage.stack" || f.subject != "nvme1n1p1") continue;
    (contains(f.message, "loop") ? via_loop : direct) = &f;
  }
  ASSERT_TRUE(direct);
  ASSERT_TRUE(via_loop);
  EXPECT_EQ(direct->level, Level::kPass);
  EXPECT_EQ(via_loop->level, Level::kFail);
  EXPECT_TRUE(contains(via_loop->message, "/srv/images/disk.img on /srv")) << via_loop->message;
  EXPECT_TRUE(has_evidence(*via_loop, "/sys/block/loop0/loop/backing_file", "/srv/images/disk.img"));
  // The snap's backing file is on / (nvme0n1p2): reported, but only as INFO.
  bool snap = false;
  for (const auto& f : fs)
    if (f.subject == "nvme0n1p2" && contains(f.message, "squashfs")) {
      snap = true;
      EXPECT_EQ(f.level, Level::kInfo);
    }
  EXPECT_TRUE(snap);
}

}  // namespace
}  // namespace p2pcheck
