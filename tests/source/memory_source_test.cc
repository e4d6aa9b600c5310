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

TEST(MemoryTree, NormalizesOnlyWhatNeedsIt) {
  EXPECT_EQ(normalize_tree_path("a/b"), "/a/b");
  EXPECT_EQ(normalize_tree_path("/a/."), "/a");
  EXPECT_EQ(normalize_tree_path("//"), "");
  EXPECT_EQ(normalize_tree_path("/./"), "");
  EXPECT_EQ(normalize_tree_path("/a/.b/c"), "/a/.b/c");
  EXPECT_EQ(normalize_tree_path("/a/..b"), "/a/..b");
  MemoryTree tree;
  tree.add_file("sys//x/./y/", "1");
  EXPECT_EQ(tree.find("/sys/x/y")->data, "1");
  EXPECT_EQ(tree.children("/sys"), std::vector<std::string>{"x"});
}

// Entries are kept in byte order, where a directory's subtree can come after siblings that sort
// before '/' ("a-b", "a.x" after "a", before "a/b"): names that sort around '/' must neither be
// listed under "a" nor hide a's own entries.
TEST(MemoryTree, ChildrenAreTheDirectoryAloneSortedByteWise) {
  MemoryTree tree;
  for (const char* path : {"/a/b/c", "/a-b", "/a.x/y", "/a0", "/a/\xc3\xa9", "/a/!", "/a/b-c", "/a/B", "/ab/q"})
    tree.add_file(path, "");
  tree.add_dir("/a/empty");
  EXPECT_EQ(tree.children("/"), (std::vector<std::string>{"a", "a-b", "a.x", "a0", "ab"}));
  EXPECT_EQ(tree.children(""), tree.children("/"));
  EXPECT_EQ(tree.children("/a"), (std::vector<std::string>{"!", "B", "b", "b-c", "empty", "\xc3\xa9"}));
  EXPECT_EQ(tree.children("/a/b"), std::vector<std::string>{"c"});
  EXPECT_TRUE(tree.children("/a/empty").empty());
  EXPECT_TRUE(tree.children("/a/b/c").empty());  // a file
  EXPECT_TRUE(tree.children("/nothing").empty());
  EXPECT_TRUE(tree.children("a").empty());  // only absolute paths are names
  EXPECT_FALSE(tree.find("a"));
  EXPECT_EQ(tree.find("/")->kind, EntryKind::kDir);
  EXPECT_EQ(tree.find("")->kind, EntryKind::kDir);
  EXPECT_EQ(tree.find("/a/b")->kind, EntryKind::kDir);  // implied parent
  EXPECT_FALSE(tree.find("/a/b/"));                     // not normalized: not a name
  EXPECT_EQ(tree.size(), 15u);                          // the root, 9 files, a, a/b, a.x, ab, a/empty
}

// Listing a directory skips each child's subtree, wherever its siblings sort.
TEST(MemoryTree, ChildrenSkipTheSubtreesOfEveryChild) {
  MemoryTree tree;
  for (const char* path : {"/d/x/y/z", "/d/x-1/q", "/d/x.2", "/d/x/y-z", "/d/x0/r", "/d/y", "/d/x/\xff", "/d0"})
    tree.add_file(path, "");
  EXPECT_EQ(tree.children("/d"), (std::vector<std::string>{"x", "x-1", "x.2", "x0", "y"}));
  EXPECT_EQ(tree.children("/d/x"), (std::vector<std::string>{"y", "y-z", "\xff"}));
  EXPECT_EQ(tree.children("/"), (std::vector<std::string>{"d", "d0"}));
}

TEST(MemoryTree, AFileOverADirectoryKeepsItsEntriesUntilASubtreeMakesItADirectoryAgain) {
  MemoryTree tree;
  tree.add_file("/top/sys/d/f", "1");
  tree.add_file("/top/sys/d", "now a file");
  EXPECT_EQ(tree.find("/top/sys/d")->kind, EntryKind::kFile);
  EXPECT_EQ(tree.children("/top/sys/d"), std::vector<std::string>{"f"});
  // A later entry below the file turns it back into a directory, as tar extraction would.
  MemoryTree again = tree;
  again.add_file("/top/sys/d/g", "2");
  EXPECT_EQ(again.find("/top/sys/d")->kind, EntryKind::kDir);
  EXPECT_EQ(again.children("/top/sys/d"), (std::vector<std::string>{"f", "g"}));
  // The subtree is rebuilt as if entry by entry: a node with entries is a directory.
  MemoryTree sub = std::move(tree).subtree("/top");
  EXPECT_EQ(sub.find("/sys/d")->kind, EntryKind::kDir);
  EXPECT_EQ(sub.find("/sys/d")->data, "");
  EXPECT_EQ(sub.find("/sys/d/f")->data, "1");
}

TEST(MemoryTree, SubtreeTakesOnlyWhatIsBelowThePrefixAndMovesTheBytes) {
  MemoryTree tree;
  std::string big(100000, 'x');
  tree.add_file("/top/sys/a", big);
  tree.add_file("/top/sys/deep/er/b", "2");
  tree.add_file("/top/c", "3");
  tree.add_file("/top-2/sys/no", "");
  tree.add_file("/top.d", "");
  tree.add_file("/topx/no", "");
  tree.add_dir("/top/sys/empty");
  tree.add_failure("/top/sys/denied", {ReadStatus::kDenied, "", "no"});
  tree.add_failure("/top-2/sys/no", {ReadStatus::kDenied, "", "no"});
  tree.set_not_carried({"lspci", "not in it", {"/proc/**"}});
  const char* bytes = tree.find("/top/sys/a")->data.data();
  MemoryTree copy = tree.subtree("/top/");
  MemoryTree sub = std::move(tree).subtree("/top");
  EXPECT_EQ(tree.size(), 1u);  // NOLINT(bugprone-use-after-move): emptied on purpose
  for (const MemoryTree* t : {&copy, &sub}) {
    EXPECT_EQ(t->children("/"), (std::vector<std::string>{"c", "sys"}));
    EXPECT_EQ(t->children("/sys"), (std::vector<std::string>{"a", "deep", "denied", "empty"}));
    EXPECT_EQ(t->children("/sys/deep/er"), std::vector<std::string>{"b"});
    EXPECT_EQ(t->find("/sys/a")->data, big);
    EXPECT_EQ(t->find("/sys/deep/er/b")->data, "2");
    EXPECT_EQ(t->find("/sys/empty")->kind, EntryKind::kDir);
    EXPECT_FALSE(t->find("/top/sys/a"));
    EXPECT_FALSE(t->find("/sys/no"));
    EXPECT_EQ(t->size(), 9u);  // "/", c, sys, sys/a, deep, deep/er, deep/er/b, empty, denied
    EXPECT_EQ(t->failures().size(), 1u);
    EXPECT_EQ(t->failures().at("/sys/denied").status, ReadStatus::kDenied);
    EXPECT_EQ(t->not_carried().format, "lspci");
  }
  EXPECT_EQ(sub.find("/sys/a")->data.data(), bytes);  // moved, not copied
  // The subtree takes entries as any tree does.
  sub.add_file("/sys/deep/new", "4");
  EXPECT_EQ(sub.children("/sys/deep"), (std::vector<std::string>{"er", "new"}));
  // A copy goes on in the directory its original went into last as a tree of its own: the entry
  // the original kept for that directory is not the copy's.
  MemoryTree twin = sub;
  twin.add_file("/sys/deep/twin", "5");
  sub.add_file("/sys/deep/only", "6");
  EXPECT_EQ(twin.children("/sys/deep"), (std::vector<std::string>{"er", "new", "twin"}));
  EXPECT_EQ(sub.children("/sys/deep"), (std::vector<std::string>{"er", "new", "only"}));
}

TEST(MemoryTree, ASourceOverATreeItOwnsReplaysItsFailures) {
  MemoryTree tree;
  tree.add_file("/sys/a", "placeholder");
  tree.add_failure("/sys/a", {ReadStatus::kDenied, "", "Permission denied"});
  tree.add_failure("/proc/cpuinfo", {ReadStatus::kFailed, "", "not captured"});
  auto src = open_memory_source(std::move(tree), "owned");
  EXPECT_EQ(src->describe(), "owned");
  EXPECT_EQ(src->read("/sys/a").status, ReadStatus::kDenied);
  EXPECT_EQ(src->read("/proc/cpuinfo").error, "not captured");
  EXPECT_EQ(src->list("/proc"), std::vector<std::string>{"cpuinfo"});
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
