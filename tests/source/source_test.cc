#include "p2pcheck/source/source.h"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <sys/stat.h>

#include "p2pcheck/import/dump.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/memory_source.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::TempDir;

TEST(TreeSource, ReadsFilesAndFollowsRelativeLinksInsideTheRoot) {
  TempDir dir;
  dir.write("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x1002\n");
  dir.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  auto src = open_tree_source(dir.path());
  FileRead r = src->read("/sys/bus/pci/devices/0000:00:01.0/vendor");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.bytes, "0x1002\n");
  EXPECT_EQ(src->resolve("/sys/bus/pci/devices/0000:00:01.0"), "/sys/devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(src->link_target("/sys/bus/pci/devices/0000:00:01.0"), "../../../devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(src->list("/sys/bus/pci/devices"), std::vector<std::string>{"0000:00:01.0"});
}

TEST(TreeSource, ARecordedFailureIsAFileOfItsDirectoryWhetherOrNotTheTreeHoldsIt) {
  TempDir dir;
  dir.write("sys/class/nvme/nvme0/model", "M\n");
  dir.write("sys/class/nvme/nvme0/serial", "");  // a placeholder as schema 2 stored it
  auto src = open_tree_source(dir.path());
  const FileRead not_captured{ReadStatus::kFailed, "", "not in this capture"};
  src->set_recorded_failures({{"/sys/class/nvme/nvme0/cntlid", not_captured},
                              {"/sys/class/nvme/nvme0/serial", not_captured},
                              {"/sys/gone/dir/x", not_captured},  // its directory is not there
                              {"/sys/class/nvme/nvme0/..", not_captured}});
  EXPECT_EQ(src->list("/sys/class/nvme/nvme0"), (std::vector<std::string>{"cntlid", "model", "serial"}));
  EXPECT_TRUE(src->exists("/sys/class/nvme/nvme0/cntlid"));
  EXPECT_EQ(src->read("/sys/class/nvme/nvme0/cntlid").error, "not in this capture");
  EXPECT_EQ(src->read("/sys/class/nvme/nvme0/serial").error, "not in this capture");
  EXPECT_TRUE(src->read("/sys/class/nvme/nvme0/model").ok());
  EXPECT_EQ(src->read("/sys/gone/dir/x").status, ReadStatus::kMissing);
  EXPECT_EQ(src->list("/sys/class/nvme"), std::vector<std::string>{"nvme0"});
}

TEST(TreeSource, MissingIsAResultNotAnError) {
  TempDir dir;
  dir.mkdir("sys");
  auto src = open_tree_source(dir.path());
  EXPECT_EQ(src->read("/sys/nothing/here").status, ReadStatus::kMissing);
  EXPECT_TRUE(src->list("/sys/nothing").empty());
  EXPECT_FALSE(src->resolve("/proc/cmdline"));
  // A path no Linux file can have (built from a dump's text) is missing without being walked.
  std::string long_path = "/sys/" + std::string(kMaxPathBytes, 'a');
  EXPECT_EQ(src->read(long_path).status, ReadStatus::kMissing);
  EXPECT_FALSE(src->exists(long_path));
  EXPECT_TRUE(src->list(long_path).empty());
}

TEST(TreeSource, LinkLeavingTheRootIsAnErrorNamingIt) {
  TempDir dir;
  dir.mkdir("sys");
  dir.link("sys/evil", "../../../../etc");
  auto src = open_tree_source(dir.path());
  try {
    src->read("/sys/evil/passwd");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/sys/evil");
    EXPECT_NE(std::string(e.what()).find("leaves the root"), std::string::npos);
  }
}

TEST(TreeSource, AbsoluteLinksStayInsideTheRoot) {
  TempDir dir;
  dir.write("etc/os-release", "ID=debian\n");
  dir.link("sys/abs", "/etc/os-release");
  auto src = open_tree_source(dir.path());
  EXPECT_EQ(src->read("/sys/abs").bytes, "ID=debian\n");
}

TEST(TreeSource, LinkLoopIsAnError) {
  TempDir dir;
  dir.mkdir("sys");
  dir.link("sys/a", "b");
  dir.link("sys/b", "a");
  auto src = open_tree_source(dir.path());
  EXPECT_THROW(src->read("/sys/a"), Error);
}

TEST(TreeSource, RemembersPathsButReadsFreshBytesAndLogsEveryLookup) {
  TempDir dir;
  const std::string target = "../../../devices/pci0000:00/0000:00:01.0";
  dir.write("sys/devices/pci0000:00/0000:00:01.0/aer_dev_fatal", "0\n");
  dir.link("sys/bus/pci/devices/0000:00:01.0", target);
  dir.link("sys/bus/pci/devices/0000:00:02.0", "../../../devices/pci0000:00/0000:00:01.0");
  auto src = open_tree_source(dir.path());
  const std::string counter = "/sys/bus/pci/devices/0000:00:01.0/aer_dev_fatal";
  EXPECT_EQ(src->read(counter).bytes, "0\n");
  dir.write("sys/devices/pci0000:00/0000:00:01.0/aer_dev_fatal", "3\n");  // a transfer later
  EXPECT_EQ(src->read(counter).bytes, "3\n");
  EXPECT_EQ(src->access_log().file_reads.at("/sys/devices/pci0000:00/0000:00:01.0/aer_dev_fatal"), 2);
  // A second link through an already resolved directory is still logged.
  EXPECT_EQ(src->read("/sys/bus/pci/devices/0000:00:02.0/aer_dev_fatal").bytes, "3\n");
  EXPECT_EQ(src->access_log().links_followed.size(), 2u);
  EXPECT_EQ(src->access_log().links_followed.at("/sys/bus/pci/devices/0000:00:01.0"), target);
  // Missing is never remembered: a counter may appear during a transfer.
  EXPECT_FALSE(src->resolve("/sys/devices/pci0000:00/0000:00:01.0/ais/bytes"));
  dir.write("sys/devices/pci0000:00/0000:00:01.0/ais/bytes", "4096\n");
  EXPECT_EQ(src->resolve("/sys/bus/pci/devices/0000:00:01.0/ais/bytes"),
            "/sys/devices/pci0000:00/0000:00:01.0/ais/bytes");
  EXPECT_EQ(src->list("/sys/bus/pci/devices/0000:00:01.0"), (std::vector<std::string>{"aer_dev_fatal", "ais"}));
}

TEST(TreeSource, LookupsExpectingADirectoryOrALinkAnswerAsAnyLookupWould) {
  // list() expects a directory, link_target() a link, every component before the last a
  // directory: each first lookup below meets something else, or nothing, where it expected one.
  TempDir dir;
  dir.write("sys/d/x", "x\n");
  dir.write("sys/f", "f\n");
  dir.link("sys/l", "d");
  dir.link("sys/ll", "f");
  auto fresh = [&] { return open_tree_source(dir.path()); };
  EXPECT_EQ(fresh()->link_target("/sys/l"), "d");
  EXPECT_EQ(fresh()->link_target("/sys/f"), std::nullopt);
  EXPECT_EQ(fresh()->link_target("/sys/d"), std::nullopt);
  EXPECT_EQ(fresh()->link_target("/sys/missing"), std::nullopt);
  EXPECT_EQ(fresh()->list("/sys/l"), std::vector<std::string>{"x"});
  EXPECT_EQ(fresh()->list("/sys/f"), std::vector<std::string>{});
  EXPECT_EQ(fresh()->list("/sys/ll"), std::vector<std::string>{});
  EXPECT_EQ(fresh()->list("/sys/missing"), std::vector<std::string>{});
  EXPECT_EQ(fresh()->read("/sys/l/x").bytes, "x\n");
  EXPECT_FALSE(fresh()->read("/sys/f/x").ok());
  EXPECT_EQ(fresh()->resolve("/sys/ll"), "/sys/f");
  // resolve_directory() answers as resolve() does, whatever the path is: a directory, a link to one
  // (the link is read in the call that finds it), a link to a file, a file, a link to nowhere, nothing.
  dir.link("sys/dangling", "nowhere");
  for (const char* path : {"/sys/d", "/sys/l", "/sys/ll", "/sys/f", "/sys/dangling", "/sys/missing", "/sys/l/x"}) {
    EXPECT_EQ(fresh()->resolve_directory(path), fresh()->resolve(path)) << path;
    auto both = fresh();
    EXPECT_EQ(both->resolve_directory(path), both->resolve(path)) << path;
    EXPECT_EQ(both->link_target(path), fresh()->link_target(path)) << path;
  }
  EXPECT_EQ(fresh()->resolve_directory("/sys/l"), "/sys/d");
  // The text read with the lookup is the link's text in the access log, and it is followed.
  auto src = fresh();
  EXPECT_EQ(src->link_target("/sys/l"), "d");
  EXPECT_EQ(src->access_log().links_followed.at("/sys/l"), "d");
  EXPECT_EQ(src->read("/sys/l/x").bytes, "x\n");
}

TEST(TreeSource, AFileReadAtItsLookedUpSizeIsWholeAndALaterReadOfItGrownIsToo) {
  // The first read of a file stops at the size its lookup's lstat gave; later reads (no lookup)
  // read to the end, so a file that grew since is read whole.
  TempDir dir;
  const std::string page(4096, 'c');
  dir.write("sys/devices/pci0000:00/0000:00:01.0/config", page);
  dir.write("sys/devices/pci0000:00/0000:00:01.0/rom", std::string(70000, 'r'));
  auto src = open_tree_source(dir.path());
  EXPECT_EQ(src->read("/sys/devices/pci0000:00/0000:00:01.0/config").bytes, page);
  EXPECT_EQ(src->read("/sys/devices/pci0000:00/0000:00:01.0/rom").bytes, std::string(70000, 'r'));
  dir.write("sys/devices/pci0000:00/0000:00:01.0/config", page + page);
  EXPECT_EQ(src->read("/sys/devices/pci0000:00/0000:00:01.0/config").bytes, page + page);
}
TEST(TreeSource, LinkErrorsRepeatOnceTheLinksAreKnown) {
  TempDir dir;
  dir.mkdir("sys");
  dir.link("sys/a", "b");
  dir.link("sys/b", "a");
  dir.link("sys/evil", "../../../../etc");
  auto src = open_tree_source(dir.path());
  for (int i = 0; i < 2; ++i) {
    EXPECT_THROW(src->read("/sys/a"), Error);
    try {
      src->read("/sys/evil/passwd");
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "/sys/evil");
    }
  }
}

TEST(TreeSource, AttributesOfOneDirectoryShareItsResolutionAndPlainWalksStillNameThePathAsked) {
  TempDir dir;
  dir.write("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x1002\n");
  dir.write("sys/devices/pci0000:00/0000:00:01.0/device", "0x74a1\n");
  dir.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  auto src = open_tree_source(dir.path());
  const std::string fn = "/sys/bus/pci/devices/0000:00:01.0";
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(src->read(fn + "/vendor").bytes, "0x1002\n");
    EXPECT_EQ(src->read(fn + "/device").bytes, "0x74a1\n");
    EXPECT_EQ(src->read(fn + "/p2pmem/size").status, ReadStatus::kMissing);
    EXPECT_EQ(src->read(fn + "/../0000:00:01.0/vendor").bytes, "0x1002\n");
  }
  const AccessLog& log = src->access_log();
  EXPECT_EQ(log.file_reads.at("/sys/devices/pci0000:00/0000:00:01.0/vendor"), 4);
  EXPECT_EQ(log.file_reads.at("/sys/devices/pci0000:00/0000:00:01.0/device"), 2);
  EXPECT_EQ(log.links_followed.at(fn), "../../../devices/pci0000:00/0000:00:01.0");
  try {
    src->read("/../sys/bus/pci/devices/0000:00:01.0/vendor");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/../sys/bus/pci/devices/0000:00:01.0/vendor");
  }
}

TEST(TreeSource, CountsEveryRead) {
  TempDir dir;
  dir.write("sys/x", "1");
  auto src = open_tree_source(dir.path());
  src->read("/sys/x");
  src->read("/sys/x");
  EXPECT_EQ(src->access_log().file_reads.at("/sys/x"), 2);
}

// The sources keep the directory and node they answered last (canonical_parent, the tree's open
// directory, the memory tree's node): reads that jump between directories, spellings of one
// directory and link and file lookups must each still get their own path's answer.
TEST(Source, ReadsThatAlternateBetweenDirectoriesGetTheirOwnPathsAnswer) {
  TempDir dir;
  MemoryTree tree;
  auto both = [&](const std::string& path, const std::string& bytes) {
    dir.write(path.substr(1), bytes);
    tree.add_file(path, bytes);
  };
  both("/sys/devices/pci0000:00/0000:00:01.0/vendor", "0x1002\n");
  both("/sys/devices/pci0000:00/0000:00:01.0/device", "0x740f\n");
  both("/sys/devices/pci0000:00/0000:00:02.0/vendor", "0x144d\n");
  both("/sys/devices/pci0000:00/0000:00:02.0/device", "0xa80a\n");
  dir.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  tree.add_link("/sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  dir.link("sys/devices/pci0000:00/0000:00:02.0/driver", "../../../bus/pci/drivers/nvme");
  tree.add_link("/sys/devices/pci0000:00/0000:00:02.0/driver", "../../../bus/pci/drivers/nvme");
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(open_tree_source(dir.path()));
  sources.push_back(open_memory_source(tree, "memory"));
  for (auto& src : sources) {
    SCOPED_TRACE(src->describe());
    const std::string one = "/sys/devices/pci0000:00/0000:00:01.0", two = "/sys/devices/pci0000:00/0000:00:02.0";
    EXPECT_EQ(src->read(one + "/vendor").bytes, "0x1002\n");
    EXPECT_EQ(src->read(two + "/vendor").bytes, "0x144d\n");
    EXPECT_EQ(src->read("/sys/bus/pci/devices/0000:00:01.0/device").bytes, "0x740f\n");  // the same directory, linked
    EXPECT_EQ(src->read(two + "/device").bytes, "0xa80a\n");
    EXPECT_TRUE(src->exists(one + "/vendor"));
    EXPECT_EQ(src->link_target(two + "/driver"), "../../../bus/pci/drivers/nvme");
    EXPECT_EQ(src->read(one + "/vendor").bytes, "0x1002\n");
    EXPECT_EQ(src->read(two + "/driver").status, ReadStatus::kMissing);  // the link leads nowhere here
    EXPECT_EQ(src->read(one + "/nothing").status, ReadStatus::kMissing);
    EXPECT_EQ(src->read("/sys/bus/pci/devices/0000:00:01.0/vendor").bytes, "0x1002\n");
  }
  // The tree's bytes are read fresh each time, whichever directory was asked last.
  auto src = open_tree_source(dir.path());
  EXPECT_EQ(src->read("/sys/devices/pci0000:00/0000:00:01.0/vendor").bytes, "0x1002\n");
  dir.write("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x1022\n");
  EXPECT_EQ(src->read("/sys/devices/pci0000:00/0000:00:01.0/vendor").bytes, "0x1022\n");
}

TEST(TreeSource, RootWithoutSysIsRejected) {
  TempDir dir;
  dir.write("etc/os-release", "ID=debian\n");
  EXPECT_THROW(open_tree_source(dir.path()), Error);
  EXPECT_THROW(open_tree_source(dir.path() + "/does-not-exist"), Error);
}

// A backend that counts what it is asked: the Source's caches must spare exactly the lookups they
// promise, and no more (missing paths are asked again).
class CountingSource : public Source {
 public:
  explicit CountingSource(bool typed) : typed_(typed) {}
  std::string describe() const override { return "counting"; }
  std::map<std::string, NodeType> nodes = {{"/", NodeType::kDir},          {"/d", NodeType::kDir},
                                           {"/d/file", NodeType::kFile},   {"/d/sub", NodeType::kDir},
                                           {"/d/sub/x", NodeType::kFile},  {"/d/link", NodeType::kLink},
                                           {"/d/untyped", NodeType::kFile}};
  std::map<std::string, int> asked;  // node_type calls per path
  void add_file(const std::string& path) { nodes[path] = NodeType::kFile; }

 protected:
  NodeType node_type(const std::string& path) override {
    ++asked[path];
    auto it = nodes.find(path);
    return it == nodes.end() ? NodeType::kMissing : it->second;
  }
  std::string node_link(const std::string&) override { return "sub"; }
  FileRead node_read(const std::string& path) override { return {ReadStatus::kOk, path, ""}; }
  std::vector<std::string> node_list(const std::string& path) override {
    std::vector<std::string> names;
    for (const auto& [node, type] : nodes)
      if (node.size() > path.size() && node.rfind(path + "/", 0) == 0 &&
          node.find('/', path.size() + 1) == std::string::npos)
        names.push_back(node.substr(path.size() + 1));
    return names;
  }
  std::vector<ListedEntry> node_list_typed(const std::string& path) override {
    if (!typed_) return Source::node_list_typed(path);
    std::vector<ListedEntry> entries;
    for (std::string& name : node_list(path)) {
      // One entry the "file system" does not type (DT_UNKNOWN): it is looked up as before.
      std::optional<NodeType> type;
      if (name != "untyped") type = nodes.at(path + "/" + name);
      entries.push_back({std::move(name), type});
    }
    return entries;
  }

 private:
  bool typed_;
};

TEST(Source, AListingThatSaysEachEntrysTypeSparesItsLookups) {
  for (bool typed : {false, true}) {
    CountingSource src(typed);
    EXPECT_EQ(src.list("/d"), (std::vector<std::string>{"file", "link", "sub", "untyped"}));
    EXPECT_EQ(src.read("/d/file").bytes, "/d/file");
    EXPECT_EQ(src.read("/d/untyped").bytes, "/d/untyped");
    EXPECT_EQ(src.read("/d/link/x").bytes, "/d/sub/x");
    EXPECT_EQ(src.resolve("/d/sub"), "/d/sub");
    EXPECT_EQ(src.link_target("/d/link"), "sub");
    // Without types each entry is asked once (then cached); with them, none but the untyped one.
    int once = typed ? 0 : 1;
    EXPECT_EQ(src.asked["/d/file"], once);
    EXPECT_EQ(src.asked["/d/sub"], once);
    EXPECT_EQ(src.asked["/d/link"], once);
    EXPECT_EQ(src.asked["/d/untyped"], 1);
    // The log is the same either way: one listing, the link followed, each file read once.
    EXPECT_EQ(src.access_log().dir_lists.at("/d"), 1);
    EXPECT_EQ(src.access_log().links_followed.at("/d/link"), "sub");
    EXPECT_EQ(src.access_log().file_reads.size(), 3u);
    // A path the listing did not have is asked each time: it may appear later.
    EXPECT_FALSE(src.resolve("/d/later"));
    src.add_file("/d/later");
    EXPECT_EQ(src.resolve("/d/later"), "/d/later");
    EXPECT_EQ(src.asked["/d/later"], 2);
  }
}

TEST(TreeSource, TypesFromAListingAgreeWithLookingEachUp) {
  TempDir dir;
  dir.write("sys/d/file", "1\n");
  dir.mkdir("sys/d/sub");
  dir.write("sys/d/sub/x", "2\n");
  dir.link("sys/d/link", "sub");
  dir.link("sys/d/dangling", "nowhere");
  ASSERT_EQ(mkfifo((dir.path() + "/sys/d/fifo").c_str(), 0600), 0);
  const std::vector<std::string> names = {"dangling", "fifo", "file", "link", "sub"};
  // What each entry reads as, resolves to and links to, asked with and without a listing first,
  // while recording (capture stores each entry's kind from the listing).
  auto answers = [&](bool list_first) {
    auto src = open_tree_source(dir.path());
    src->set_recording(true);
    if (list_first) {
      EXPECT_EQ(src->list("/sys/d"), names);
    }
    std::vector<std::string> out;
    for (const std::string& name : names) {
      const std::string path = "/sys/d/" + name;
      FileRead r = src->read(path);
      out.push_back(name + " " + std::to_string(static_cast<int>(r.status)) + " " + r.bytes + " " + r.error + " " +
                    src->resolve(path).value_or("-") + " " + src->link_target(path).value_or("-") + " " +
                    (src->list(path).empty() ? "" : src->list(path).front()));
    }
    if (!list_first) {
      EXPECT_EQ(src->list("/sys/d"), names);
    }
    const AccessLog& log = src->access_log();
    for (const auto& [path, kind] : log.found) out.push_back("found " + path + " " + std::to_string(int(kind)));
    for (const auto& [name, entry] : log.listings.at("/sys/d"))
      out.push_back("entry " + name + " " + std::to_string(int(entry.kind)) + " " + entry.link_target);
    return out;
  };
  std::vector<std::string> looked_up = answers(false);
  EXPECT_EQ(answers(true), looked_up);
  EXPECT_NE(std::find(looked_up.begin(), looked_up.end(), "entry fifo 3 "), looked_up.end());
  EXPECT_NE(std::find(looked_up.begin(), looked_up.end(), "entry link 2 sub"), looked_up.end());
}

TEST(TreeSource, AFileThatAppearsAfterItsDirectoryWasListedIsFound) {
  TempDir dir;
  dir.write("sys/d/a", "1\n");
  auto src = open_tree_source(dir.path());
  EXPECT_EQ(src->list("/sys/d"), std::vector<std::string>{"a"});
  EXPECT_EQ(src->read("/sys/d/b").status, ReadStatus::kMissing);
  dir.write("sys/d/b", "2\n");
  EXPECT_EQ(src->read("/sys/d/b").bytes, "2\n");
  EXPECT_EQ(src->list("/sys/d"), (std::vector<std::string>{"a", "b"}));
}

// Descriptors this process holds.
size_t open_fds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

TEST(TreeSource, KeepsBoundedlyManyDirectoriesOpenAndReadsThemAll) {
  TempDir dir;
  const int kDirs = 200;  // far more than it keeps open
  for (int i = 0; i < kDirs; ++i) dir.write("sys/devices/d" + std::to_string(i) + "/sub/value", std::to_string(i));
  auto src = open_tree_source(dir.path());
  size_t before = open_fds();
  size_t most = before;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kDirs; ++i) {
      const std::string d = "/sys/devices/d" + std::to_string(i);
      EXPECT_EQ(src->read(d + "/sub/value").bytes, std::to_string(i));
      EXPECT_EQ(src->list(d), std::vector<std::string>{"sub"});
      most = std::max(most, open_fds());
    }
  }
  EXPECT_LE(most, before + 32);
  src.reset();
  EXPECT_LT(open_fds(), before);  // and all of them (and the root's) closed with the source
}

TEST(TreeSource, ADirectoryMovedAwayAndReplacedByALinkLeadsNowhereOutside) {
  // Unlike a removed directory, a moved one lives on: a descriptor kept of it reaches its old
  // entries, never what the link now points at.
  TempDir dir, outside;
  dir.write("sys/a/file", "inside\n");
  dir.write("sys/a/deep/file", "inside deep\n");
  outside.write("file", "outside\n");
  outside.write("new", "outside\n");
  outside.write("deep/file", "outside\n");
  auto src = open_tree_source(dir.path());
  ASSERT_EQ(src->read("/sys/a/file").bytes, "inside\n");
  std::filesystem::rename(dir.path() + "/sys/a", dir.path() + "/moved");
  std::filesystem::create_directory_symlink(outside.path(), dir.path() + "/sys/a");
  for (const char* path : {"/sys/a/file", "/sys/a/new", "/sys/a/deep/file"}) {
    FileRead r = src->read(path);
    EXPECT_EQ(r.bytes.find("outside"), std::string::npos) << path;
  }
  for (const std::string& name : src->list("/sys/a")) EXPECT_NE(name, "new");
  // A source opened after the swap follows the link inside the root, where its target is not.
  EXPECT_EQ(open_tree_source(dir.path())->read("/sys/a/file").status, ReadStatus::kMissing);
}

TEST(LiveSource, ReadsThisMachine) {
  auto src = open_live_source();
  EXPECT_TRUE(src->is_live());
  EXPECT_EQ(src->describe(), "live /");
  EXPECT_TRUE(src->read("/proc/sys/kernel/osrelease").ok());
}

}  // namespace
}  // namespace p2pcheck
