#include "p2pcheck/source/memory_source.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

std::unique_ptr<Source> open(MemoryTree tree) {
  return open_memory_source(std::make_shared<const MemoryTree>(std::move(tree)), "memory test");
}

TEST(MemoryTree, ReadsListsAndFollowsLinksLikeATree) {
  MemoryTree tree;
  tree.add_file("/sys/devices/pci0000:00/0000:00:01.0/vendor", "0x1002\n");
  tree.add_link("/sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  auto src = open(std::move(tree));
  EXPECT_EQ(src->describe(), "memory test");
  EXPECT_EQ(src->read("/sys/bus/pci/devices/0000:00:01.0/vendor").bytes, "0x1002\n");
  EXPECT_EQ(src->list("/sys/bus/pci/devices"), std::vector<std::string>{"0000:00:01.0"});
  EXPECT_EQ(src->list("/sys/devices"), std::vector<std::string>{"pci0000:00"});  // parents are implied
  EXPECT_EQ(src->read("/sys/nothing").status, ReadStatus::kMissing);
}

TEST(MemoryTree, EscapingLinksAreErrorsAsInEveryBackend) {
  MemoryTree tree;
  tree.add_link("/sys/evil", "../../etc");
  auto src = open(std::move(tree));
  EXPECT_THROW(src->read("/sys/evil/passwd"), Error);
}

TEST(MemoryTree, FailuresReplayAsUnreadableNotAsEmpty) {
  MemoryTree tree;
  tree.add_file("/sys/a", "");
  tree.add_failure("/sys/a", {ReadStatus::kDenied, "", "Permission denied"});
  tree.add_failure("/proc/cpuinfo", {ReadStatus::kFailed, "", "not in lspci output"});
  auto src = open(std::move(tree));
  EXPECT_EQ(src->read("/sys/a").status, ReadStatus::kDenied);
  FileRead cpu = src->read("/proc/cpuinfo");
  EXPECT_EQ(cpu.status, ReadStatus::kFailed);
  EXPECT_EQ(cpu.error, "not in lspci output");
}

TEST(MemoryTree, LaterEntriesReplaceEarlierOnesAndDirectoriesMerge) {
  MemoryTree tree;
  tree.add_file("/x/a", "1");
  tree.add_file("/x/a", "2");
  tree.add_dir("/x");
  tree.add_file("/x/b", "3");
  EXPECT_EQ(tree.find("/x/a")->data, "2");
  EXPECT_EQ(tree.children("/x"), (std::vector<std::string>{"a", "b"}));
}

TEST(MemoryTree, SubtreeMovesTheRootAndItsFailures) {
  MemoryTree tree;
  tree.add_file("/top/sys/a", "1");
  tree.add_failure("/top/sys/b", {ReadStatus::kDenied, "", "no"});
  tree.add_file("/other", "2");
  MemoryTree sub = tree.subtree("/top");
  EXPECT_EQ(sub.find("/sys/a")->data, "1");
  EXPECT_FALSE(sub.find("/other"));
  EXPECT_EQ(sub.failures().at("/sys/b").status, ReadStatus::kDenied);
}

TEST(MemoryTree, NormalizesPaths) {
  EXPECT_EQ(normalize_tree_path("/a/./b//c/"), "/a/b/c");
  EXPECT_EQ(normalize_tree_path("/"), "");
}

TEST(Recording, KeepsWhatEachReadListingAndLookupAnswered) {
  MemoryTree tree;
  tree.add_file("/sys/d/f", "first");
  tree.add_file("/sys/d/g", "unread");
  tree.add_link("/sys/d/l", "f");
  tree.add_dir("/sys/d/sub");
  auto src = open(std::move(tree));
  src->set_recording(true);
  src->read("/sys/d/l");
  src->list("/sys/d");
  src->resolve("/sys/d/sub");
  const AccessLog& log = src->access_log();
  EXPECT_EQ(log.contents.at("/sys/d/f").bytes, "first");
  EXPECT_EQ(log.links_followed.at("/sys/d/l"), "f");
  const auto& listed = log.listings.at("/sys/d");
  EXPECT_EQ(listed.at("g").kind, EntryKind::kFile);
  EXPECT_EQ(listed.at("l").kind, EntryKind::kLink);
  EXPECT_EQ(listed.at("l").link_target, "f");
  EXPECT_EQ(listed.at("sub").kind, EntryKind::kDir);
  EXPECT_EQ(log.found.at("/sys/d/sub"), EntryKind::kDir);
  EXPECT_FALSE(log.contents.count("/sys/d/g"));
}

TEST(Recording, IsOffUnlessAsked) {
  MemoryTree tree;
  tree.add_file("/sys/f", "x");
  auto src = open(std::move(tree));
  src->read("/sys/f");
  src->list("/sys");
  EXPECT_TRUE(src->access_log().contents.empty());
  EXPECT_TRUE(src->access_log().listings.empty());
  EXPECT_EQ(src->access_log().file_reads.at("/sys/f"), 1);
}

}  // namespace
}  // namespace p2pcheck
