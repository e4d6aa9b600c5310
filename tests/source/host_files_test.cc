#include "p2pcheck/source/host_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>

#include "p2pcheck/source/error.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::TempDir;

// Both ways of opening beneath a root: openat2 (this kernel) and the O_NOFOLLOW walk (older ones).
class OpenBeneath : public ::testing::TestWithParam<bool> {};

TEST_P(OpenBeneath, OpensPlainPathsAndNoLinkOnTheWay) {
  TempDir dir, outside;
  dir.write("sys/a/file", "inside\n");
  outside.write("a/file", "outside\n");
  dir.link("sys/b", outside.path() + "/a");  // a link in the middle of a path
  dir.link("sys/c", "a");                    // even one that stays inside
  dir.link("sys/a/link", "file");            // and as the last component
  Fd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY));
  bool walk = GetParam();

  Fd ok = open_beneath(root.get(), "sys/a/file", O_RDONLY, walk);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(read_capped(ok.get(), 100, "file").bytes, "inside\n");
  EXPECT_FALSE(open_beneath(root.get(), "sys/b/file", O_RDONLY, walk).ok());
  EXPECT_FALSE(open_beneath(root.get(), "sys/c/file", O_RDONLY, walk).ok());
  EXPECT_FALSE(open_beneath(root.get(), "sys/a/link", O_RDONLY, walk).ok());
  EXPECT_EQ(errno, ELOOP);
  EXPECT_FALSE(open_beneath(root.get(), "sys/a/missing", O_RDONLY, walk).ok());
  EXPECT_EQ(errno, ENOENT);
  EXPECT_TRUE(open_beneath(root.get(), "", O_RDONLY | O_DIRECTORY, walk).ok());
}

INSTANTIATE_TEST_SUITE_P(OpenAt2AndWalk, OpenBeneath, ::testing::Values(false, true));

TEST(ReadCapped, RefusesFifosWithoutBlockingAndCapsTheSize) {
  TempDir dir;
  dir.write("big", std::string(3000, 'x'));
  ASSERT_EQ(mkfifo((dir.path() + "/fifo").c_str(), 0600), 0);
  Fd fifo(open((dir.path() + "/fifo").c_str(), O_RDONLY | O_NONBLOCK));
  ASSERT_TRUE(fifo.ok());
  FileRead r = read_capped(fifo.get(), 100, "fifo");
  EXPECT_EQ(r.status, ReadStatus::kFailed);
  EXPECT_EQ(r.error, "not a regular file");
  Fd big(open((dir.path() + "/big").c_str(), O_RDONLY));
  EXPECT_THROW(read_capped(big.get(), 1000, "big"), Error);
}

TEST(ReadCapped, ReadsWholeFilesAroundItsBufferSize) {
  // It stops at st_size without a read for the end of file: sizes at and around its 64 KiB buffer.
  TempDir dir;
  for (size_t size : {size_t{0}, size_t{1}, size_t{65535}, size_t{65536}, size_t{65537}, size_t{200000}}) {
    std::string bytes(size, 'a');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    dir.write("f", bytes);
    Fd f(open((dir.path() + "/f").c_str(), O_RDONLY));
    FileRead r = read_capped(f.get(), 1 << 20, "f");
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.bytes, bytes) << size;
  }
}

TEST(ReadKnownFile, ReadsWholeFilesAroundItsBufferSizeAndAPageWithoutFstat) {
  // A read shorter than asked and than a page ends the file; a page, or the whole buffer, reads on.
  TempDir dir;
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{65535}, size_t{65536},
                      size_t{65537}, size_t{200000}}) {
    std::string bytes(size, 'a');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    dir.write("f", bytes);
    for (bool short_read_ends : {true, false}) {
      Fd f(open((dir.path() + "/f").c_str(), O_RDONLY));
      FileRead r = read_known_file(f.get(), 1 << 20, "f", short_read_ends);
      EXPECT_TRUE(r.ok());
      EXPECT_EQ(r.bytes, bytes) << size;
      Fd sized(open((dir.path() + "/f").c_str(), O_RDONLY));  // with its st_size, as a tree's read has it
      FileRead s = read_known_file(sized.get(), 1 << 20, "f", short_read_ends, size);
      EXPECT_TRUE(s.ok());
      EXPECT_EQ(s.bytes, bytes) << size;
    }
  }
  dir.write("big", std::string(3000, 'x'));
  Fd big(open((dir.path() + "/big").c_str(), O_RDONLY));
  EXPECT_THROW(read_known_file(big.get(), 1000, "big", true), Error);
}

TEST(ReadKnownFile, StopsAtAKnownSizeWithoutAReadForTheEnd) {
  // A pipe whose writer stays: a read past its 4096 bytes finds nothing yet (EAGAIN), where a
  // file's read would find its end. With the size known, that read is not made.
  int ends[2];
  ASSERT_EQ(pipe2(ends, O_NONBLOCK), 0);
  Fd out(ends[0]), in(ends[1]);
  const std::string page(4096, 'p');
  ASSERT_EQ(write(in.get(), page.data(), page.size()), 4096);
  FileRead sized = read_known_file(out.get(), 1 << 20, "pipe", false, page.size());
  EXPECT_TRUE(sized.ok()) << sized.error;
  EXPECT_EQ(sized.bytes, page);
  ASSERT_EQ(write(in.get(), page.data(), page.size()), 4096);
  EXPECT_EQ(read_known_file(out.get(), 1 << 20, "pipe", false).status, ReadStatus::kFailed);
}

TEST(ReadKnownFile, ReadsALiveProcSeqFileToItsEnd) {
  // /proc/self/maps of a process with this many mappings is many pages, handed out a page or so per
  // read: reading on to a read of 0 gets all of it, as a plain stream read does.
  std::vector<void*> maps;
  for (int i = 0; i < 400; ++i) {
    // Alternate protections so the kernel cannot merge neighbours into one line.
    void* m = mmap(nullptr, 4096, i % 2 ? PROT_READ : PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    maps.push_back(m);
  }
  Fd f(open("/proc/self/maps", O_RDONLY));
  ASSERT_TRUE(f.ok());
  FileRead r = read_known_file(f.get(), 64 << 20, "/proc/self/maps", false);
  for (void* m : maps) munmap(m, 4096);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.bytes.size(), 16384u);
  // Whole lines to the last: a read stopped early would cut it, or end long before the stack.
  EXPECT_EQ(r.bytes.back(), '\n');
  EXPECT_NE(r.bytes.find("[stack]"), std::string::npos);
}

TEST(ListEntries, GivesEveryEntryOnceWithTheTypeLstatSees) {
  TempDir dir;
  dir.write("file", "x");
  dir.mkdir("sub");
  dir.link("link", "file");
  ASSERT_EQ(mkfifo((dir.path() + "/fifo").c_str(), 0600), 0);
  // Enough long names to take several getdents calls of its buffer.
  for (int i = 0; i < 1000; ++i) dir.write("many/" + std::string(100, 'n') + std::to_string(i), "");
  auto entries = list_entries(Fd(open(dir.path().c_str(), O_RDONLY | O_DIRECTORY)));
  ASSERT_TRUE(entries);
  std::map<std::string, unsigned char> got;
  for (const DirEntry& e : *entries) EXPECT_TRUE(got.emplace(e.name, e.type).second) << e.name;
  EXPECT_EQ(got.size(), 5u);  // no "." or ".."
  for (const auto& [name, type] : got) {
    struct stat st;
    ASSERT_EQ(lstat((dir.path() + "/" + name).c_str(), &st), 0);
    if (type == DT_UNKNOWN) continue;  // a file system without d_type: the caller looks it up
    EXPECT_EQ(DTTOIF(type), st.st_mode & S_IFMT) << name;
  }
  auto many = list_names(Fd(open((dir.path() + "/many").c_str(), O_RDONLY | O_DIRECTORY)));
  ASSERT_TRUE(many);
  EXPECT_EQ(std::set<std::string>(many->begin(), many->end()).size(), 1000u);
  EXPECT_FALSE(list_entries(Fd(open((dir.path() + "/file").c_str(), O_RDONLY))));
  EXPECT_EQ(errno, ENOTDIR);
  EXPECT_FALSE(list_entries(Fd()));
}

TEST(TreeSource, ADirectorySwappedForALinkAfterItWasSeenLeadsNowhere) {
  // The source remembers /sys/a as a directory; the swap comes after. Reading by host path would
  // now follow sys/a to the other tree; through the root descriptor the read fails instead.
  TempDir dir, outside;
  dir.write("sys/a/file", "inside\n");
  outside.write("file", "outside\n");
  auto src = open_tree_source(dir.path());
  ASSERT_EQ(src->read("/sys/a/file").bytes, "inside\n");
  std::filesystem::remove_all(dir.path() + "/sys/a");
  std::filesystem::create_directory_symlink(outside.path(), dir.path() + "/sys/a");
  FileRead again = src->read("/sys/a/file");
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(again.bytes, "");
  EXPECT_TRUE(src->list("/sys/a").empty());
}

TEST(TreeSource, AFifoInTheTreeIsUnreadableNotAHang) {
  TempDir dir;
  dir.mkdir("sys");
  ASSERT_EQ(mkfifo((dir.path() + "/sys/fifo").c_str(), 0600), 0);
  auto src = open_tree_source(dir.path());
  EXPECT_EQ(src->read("/sys/fifo").status, ReadStatus::kFailed);
}

TEST(LoadHostTree, KeepsLinksAsLinksSkipsFifosAndAsksBeforeOpening) {
  TempDir dir, outside;
  dir.write("proc/cpuinfo", "processor\t: 0\n");
  dir.write("proc/1234/status", "secret");
  dir.link("etc", outside.path());  // a link to the host, kept as a link, never followed
  outside.write("passwd", "root:x:0:0");
  ASSERT_EQ(mkfifo((dir.path() + "/proc/fifo").c_str(), 0600), 0);
  MemoryTree tree;
  load_host_tree(dir.path(), tree, [](const std::string& rel) { return rel.rfind("/proc/1234", 0) != 0; });
  ASSERT_TRUE(tree.find("/proc/cpuinfo"));
  EXPECT_EQ(tree.find("/proc/cpuinfo")->data, "processor\t: 0\n");
  EXPECT_FALSE(tree.find("/proc/1234"));
  EXPECT_FALSE(tree.find("/proc/fifo"));
  ASSERT_TRUE(tree.find("/etc"));
  EXPECT_EQ(tree.find("/etc")->kind, EntryKind::kLink);
  EXPECT_FALSE(tree.find("/etc/passwd"));
  EXPECT_THROW(load_host_tree(dir.path() + "/missing", tree, [](const std::string&) { return true; }), Error);
}

}  // namespace
}  // namespace p2pcheck
