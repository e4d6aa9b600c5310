#include "p2pcheck/source/source.h"

#include <archive.h>
#include <archive_entry.h>

#include <gtest/gtest.h>

#include "p2pcheck/import/dump.h"
#include "p2pcheck/source/error.h"
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

TEST(TreeSource, MissingIsAResultNotAnError) {
  TempDir dir;
  dir.mkdir("sys");
  auto src = open_tree_source(dir.path());
  EXPECT_EQ(src->read("/sys/nothing/here").status, ReadStatus::kMissing);
  EXPECT_TRUE(src->list("/sys/nothing").empty());
  EXPECT_FALSE(src->resolve("/proc/cmdline"));
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

TEST(TreeSource, RootWithoutSysIsRejected) {
  TempDir dir;
  dir.write("etc/os-release", "ID=debian\n");
  EXPECT_THROW(open_tree_source(dir.path()), Error);
  EXPECT_THROW(open_tree_source(dir.path() + "/does-not-exist"), Error);
}

TEST(LiveSource, ReadsThisMachine) {
  auto src = open_live_source();
  EXPECT_TRUE(src->is_live());
  EXPECT_EQ(src->describe(), "live /");
  EXPECT_TRUE(src->read("/proc/sys/kernel/osrelease").ok());
}

// Writes a tar(.gz) with the given members; a member whose name ends in '@' is a symlink to `data`.
struct Member {
  std::string name;
  std::string data;
  unsigned type = AE_IFREG;
};

std::string make_tar(const TempDir& dir, const std::string& name, const std::vector<Member>& members, bool gzip) {
  std::string path = dir.path() + "/" + name;
  archive* ar = archive_write_new();
  archive_write_set_format_pax_restricted(ar);
  if (gzip) archive_write_add_filter_gzip(ar);
  archive_write_open_filename(ar, path.c_str());
  for (const Member& m : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.name.c_str());
    archive_entry_set_filetype(e, m.type);
    archive_entry_set_perm(e, 0644);
    if (m.type == AE_IFLNK) archive_entry_set_symlink(e, m.data.c_str());
    if (m.type == AE_IFREG) archive_entry_set_size(e, static_cast<la_int64_t>(m.data.size()));
    archive_write_header(ar, e);
    if (m.type == AE_IFREG) archive_write_data(ar, m.data.data(), m.data.size());
    archive_entry_free(e);
  }
  archive_write_close(ar);
  archive_write_free(ar);
  return path;
}

TEST(ArchiveSource, ReadsATreeWithLinksFromACompressedTar) {
  TempDir dir;
  std::string tar =
      make_tar(dir, "dump.tar.gz",
               {{"capture/sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n"},
                {"capture/sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0", AE_IFLNK},
                {"capture/proc/cmdline", "quiet\n"}},
               true);
  auto src = open_dump_source(tar);
  EXPECT_EQ(src->describe(), "archive " + tar);
  EXPECT_EQ(src->read("/sys/bus/pci/devices/0000:00:01.0/vendor").bytes, "0x10de\n");
  EXPECT_EQ(src->read("/proc/cmdline").bytes, "quiet\n");
  EXPECT_EQ(src->list("/sys/devices/pci0000:00"), std::vector<std::string>{"0000:00:01.0"});
}

void expect_error_naming(const std::string& file, const std::string& needle) {
  try {
    open_dump_source(file);
    FAIL() << "expected an error for " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ArchiveSource, HostileMembersAreRefusedByName) {
  TempDir dir;
  expect_error_naming(make_tar(dir, "abs.tar", {{"/etc/passwd", "x"}}, false), "/etc/passwd");
  expect_error_naming(make_tar(dir, "dotdot.tar", {{"sys/../../x", "x"}}, false), "sys/../../x");
  expect_error_naming(make_tar(dir, "fifo.tar", {{"sys/fifo", "", AE_IFIFO}}, false), "sys/fifo");
  expect_error_naming(make_tar(dir, "nosys.tar", {{"etc/os-release", "x"}}, false), "no sys/");
}

TEST(ArchiveSource, EscapingLinkInsideAnArchiveIsAnError) {
  TempDir dir;
  auto src = open_dump_source(make_tar(dir, "esc.tar", {{"sys/x", "y"}, {"sys/evil", "../../etc", AE_IFLNK}}, false));
  EXPECT_THROW(src->read("/sys/evil/passwd"), Error);
}

TEST(ArchiveSource, TruncatedAndGarbageInputGiveClearErrors) {
  TempDir dir;
  std::string good = make_tar(dir, "good.tar.gz", {{"sys/a", std::string(100000, 'a')}}, true);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  dir.write("cut.tar.gz", bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(open_dump_source(dir.path() + "/cut.tar.gz"), Error);
  dir.write("garbage.bin", "this is not a dump at all");
  expect_error_naming(dir.path() + "/garbage.bin", "not a recognised dump");
  expect_error_naming(dir.path() + "/missing.tar", "cannot open dump");
}

}  // namespace
}  // namespace p2pcheck
