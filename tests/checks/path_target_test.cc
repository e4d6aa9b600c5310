// Paths as the NVMe side: path -> mount -> stack -> controllers on the storage-stacks fixture (md
// RAID1 over both drives, dm-crypt, LVM with a nested mount, a loop image on the array, hostile
// mount point names), and the lexical resolution that never leaves the source's root.
#include "p2pcheck/checks/path_target.h"

#include <gtest/gtest.h>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/error.h"
#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::FakeRoot;

const Bdf kNvme0 = *Bdf::parse("0000:27:00.0");
const Bdf kNvme1 = *Bdf::parse("0000:98:00.0");

class PathTargets : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new FakeRoot(FakeRoot::load(std::string(P2PCHECK_FIXTURES) + "/storage-stacks/root"));
  }
  static void TearDownTestSuite() { delete root_; }

  std::unique_ptr<CheckReport> check(std::vector<std::string> nvme, bool mounted = false) {
    source_ = root_->source();
    CheckOptions options;
    options.selection.nvme = std::move(nvme);
    options.mounted_targets = mounted;
    return run_check(*source_, options);
  }
  std::vector<Bdf> controllers(const PathTarget& t) {
    std::vector<Bdf> out;
    for (const auto& c : t.controllers) out.push_back(c.bdf);
    return out;
  }
  std::vector<std::string> stacked(const PathTarget& t) {
    std::vector<std::string> out;
    for (const auto& l : t.stacked) out.push_back(l.device);
    return out;
  }
  std::string error_of(const std::string& path) {
    try {
      check({path});
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }

  static FakeRoot* root_;
  std::unique_ptr<Source> source_;
};
FakeRoot* PathTargets::root_ = nullptr;

TEST_F(PathTargets, MdRaidOverTwoNamespacesSelectsBothControllers) {
  auto r = check({"/data/run1/shard.bin"});
  ASSERT_EQ(r->targets.size(), 1u);
  const PathTarget& t = r->targets[0];
  EXPECT_EQ(t.mountpoint, "/data");
  EXPECT_EQ(t.mount.device, "/dev/md0");
  ASSERT_EQ(t.stacks.size(), 2u);
  EXPECT_EQ(t.stacks[0].layers.front().device, "md0");
  EXPECT_EQ(t.stacks[0].nvme, "nvme0n1p4");
  EXPECT_EQ(t.stacks[1].nvme, "nvme1n1p1");
  EXPECT_EQ(controllers(t), (std::vector<Bdf>{kNvme0, kNvme1}));
  EXPECT_EQ(stacked(t), std::vector<std::string>{"md0"});
  ASSERT_TRUE(t.stack_finding);
  EXPECT_EQ(t.stack_finding->id, "storage.stack");
  EXPECT_EQ(t.stack_finding->level, Level::kFail);
  EXPECT_EQ(r->pairs.size(), 2u);  // the GPU with each controller
  EXPECT_EQ(r->pairs.pair(0).nvme, kNvme0);
  EXPECT_EQ(r->pairs.pair(1).nvme, kNvme1);
}

TEST_F(PathTargets, DmCryptIsAStackedLayer) {
  auto r = check({"/home/ada/notes"});
  const PathTarget& t = r->targets.at(0);
  EXPECT_EQ(t.mountpoint, "/home");
  EXPECT_EQ(t.stacks.at(0).layers.at(0).kind, LayerKind::kDmCrypt);
  EXPECT_EQ(t.stacks.at(0).nvme, "nvme0n1p3");
  EXPECT_EQ(controllers(t), std::vector<Bdf>{kNvme0});
  EXPECT_EQ(stacked(t), std::vector<std::string>{"dm-0"});
  EXPECT_EQ(t.stack_finding->level, Level::kFail);
}

TEST_F(PathTargets, LvmWarnsAndDoesNotBlock) {
  auto r = check({"/srv/site"});
  const PathTarget& t = r->targets.at(0);
  EXPECT_EQ(t.mountpoint, "/srv");
  EXPECT_EQ(t.stacks.at(0).layers.at(0).kind, LayerKind::kLvm);
  EXPECT_EQ(controllers(t), std::vector<Bdf>{kNvme1});
  EXPECT_TRUE(t.stacked.empty());
  EXPECT_EQ(t.stack_finding->level, Level::kWarn);
}

TEST_F(PathTargets, NestedMountWinsOverItsParent) {
  EXPECT_EQ(check({"/srv/work/a/b"})->targets.at(0).stacks.at(0).layers.at(0).device, "dm-2");
  // A loop image on the md array: loop0, then md0, then both namespaces.
  const PathTarget t = check({"/data/scratch/tmp"})->targets.at(0);
  EXPECT_EQ(t.mountpoint, "/data/scratch");
  EXPECT_EQ(stacked(t), (std::vector<std::string>{"loop0", "md0"}));
  EXPECT_EQ(controllers(t), (std::vector<Bdf>{kNvme0, kNvme1}));
}

TEST_F(PathTargets, DirectPartitionPassesTheStack) {
  const PathTarget t = check({"/"})->targets.at(0);
  EXPECT_EQ(t.mountpoint, "/");
  EXPECT_EQ(t.stacks.at(0).nvme, "nvme0n1p2");
  EXPECT_TRUE(t.stacked.empty());
  EXPECT_EQ(t.stack_finding->level, Level::kPass);
}

TEST_F(PathTargets, HostileMountPointsAsTheKernelEscapesThem) {
  const PathTarget space = check({"/mnt/fast lane/x"})->targets.at(0);
  EXPECT_EQ(space.mountpoint, "/mnt/fast lane");
  EXPECT_EQ(space.mount.mountpoint, "/mnt/fast\\040lane");
  EXPECT_EQ(controllers(space), std::vector<Bdf>{kNvme1});
  const PathTarget newline = check({"/mnt/odd\nname"})->targets.at(0);
  EXPECT_EQ(newline.mountpoint, "/mnt/odd\nname");
  // The escaped spelling is not the name: "/mnt/odd\012name" is under "/" on the machine.
  EXPECT_EQ(check({"/mnt/odd\\012name"})->targets.at(0).mountpoint, "/");
}

TEST_F(PathTargets, NotOnNvmeNamesPathMountAndDevice) {
  std::string tmp = error_of("/tmp/x");
  EXPECT_NE(tmp.find("--nvme /tmp/x"), std::string::npos) << tmp;
  EXPECT_NE(tmp.find("tmpfs mounted on /tmp (device tmpfs)"), std::string::npos) << tmp;
  EXPECT_NE(tmp.find("not on an NVMe"), std::string::npos) << tmp;
  std::string nfs = error_of("/net/home/ada");
  EXPECT_NE(nfs.find("nfs4 mounted on /net/home (device fileserver:/export/home)"), std::string::npos) << nfs;
}

TEST_F(PathTargets, RelativeAndLinkedPathsResolveInsideTheSource) {
  root_->link("shortcut", "srv/work");         // relative
  root_->link("srv/latest", "/data/scratch");  // absolute: the source's /, never the host's
  root_->link("loop-a", "loop-b");
  root_->link("loop-b", "loop-a");
  source_ = root_->source();
  // ".." after a link is its target's parent, as the kernel resolves it: shortcut/.. is /srv.
  EXPECT_EQ(resolve_in_source(*source_, "shortcut/../shortcut/./x", "--nvme"), "/srv/shortcut/x");
  EXPECT_EQ(resolve_in_source(*source_, "shortcut/../work/./x", "--nvme"), "/srv/work/x");
  EXPECT_EQ(resolve_in_source(*source_, "/srv/latest/f", "--nvme"), "/data/scratch/f");
  EXPECT_EQ(resolve_in_source(*source_, "/../../etc/../home", "--nvme"), "/home");
  EXPECT_THROW(resolve_in_source(*source_, "/loop-a/x", "--nvme"), UsageError);
  EXPECT_EQ(check({"shortcut/file"})->targets.at(0).mountpoint, "/srv/work");
  EXPECT_EQ(check({"/srv/latest"})->targets.at(0).mountpoint, "/data/scratch");
}

TEST_F(PathTargets, MountsModeListsEveryFileSystemOnNvmeOnceInOrder) {
  auto r = check({}, true);
  std::vector<std::string> points;
  for (const auto& t : r->targets) points.push_back(t.mountpoint);
  EXPECT_EQ(points, (std::vector<std::string>{"/", "/boot/efi", "/home", "/data", "/data/scratch", "/srv", "/srv/work",
                                              "/mnt/fast lane"}));
  // A second mount of nvme1n1p3's xfs is the same file system: one target, its mount kept with it.
  ASSERT_EQ(r->targets.back().more_mounts.size(), 1u);
  EXPECT_EQ(r->targets.back().more_mounts[0].mountpoint, "/mnt/odd\\012name");
  EXPECT_EQ(r->pairs.size(), 2u);  // the GPU with each controller once
  EXPECT_TRUE(r->targets_unknown.empty());
  EXPECT_THROW(check({"nvme0"}, true), UsageError);  // --nvme does not apply to mounts
}

TEST_F(PathTargets, UnknownMountTableIsUnknownNeverEmpty) {
  source_ = root_->source();
  CheckOptions options;
  options.mounted_targets = true;
  options.not_carried = {"not in a plan", {CheckArea::kStorage}};
  auto r = run_check(*source_, options);
  EXPECT_EQ(r->targets_unknown, "the mount table is not in a plan");
  EXPECT_TRUE(r->targets.empty());
  EXPECT_EQ(r->result, Result::kUnknown);
  options.mounted_targets = false;
  options.selection.nvme = {"/data"};
  try {
    run_check(*source_, options);
    ADD_FAILURE() << "a path on an input without mounts was resolved";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the mount table is not in a plan"), std::string::npos) << e.what();
  }
}

TEST(PathTarget, MountHoldingGoesByComponents) {
  std::vector<Mount> mounts = {{"/dev/a", "/", "ext4", ""}, {"/dev/b", "/data", "xfs", ""}};
  EXPECT_EQ(mount_holding(mounts, "/data2/x")->device, "/dev/a");
  EXPECT_EQ(mount_holding(mounts, "/data/x")->device, "/dev/b");
  EXPECT_EQ(mount_holding(mounts, "/data")->device, "/dev/b");
  mounts.push_back({"/dev/c", "/data", "xfs", ""});  // mounted over: the last one shows
  EXPECT_EQ(mount_holding(mounts, "/data/x")->device, "/dev/c");
  EXPECT_EQ(mount_holding({}, "/x"), nullptr);
}

TEST(PathTarget, UnescapesWhatTheKernelEscapes) {
  EXPECT_EQ(unescape_mount_path("/a\\040b\\011c\\012d\\134e"), "/a b\tc\nd\\e");
  EXPECT_EQ(unescape_mount_path("/x\\09y\\4"), "/x\\09y\\4");  // not octal, or cut short: as written
}

TEST(PathTarget, SelectorsThatArePaths) {
  EXPECT_TRUE(is_path_selector("/data"));
  EXPECT_TRUE(is_path_selector("./data"));
  EXPECT_TRUE(is_path_selector("."));
  EXPECT_TRUE(is_path_selector("/dev/md0"));
  EXPECT_FALSE(is_path_selector("/dev/nvme0n1p2"));
  EXPECT_FALSE(is_path_selector("nvme0"));
  EXPECT_FALSE(is_path_selector("0000:27:00.0"));
}

}  // namespace
}  // namespace p2pcheck
