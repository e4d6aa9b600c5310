// The archive backend of Source (`--dump FILE.tar*`): links resolved inside the archive, hostile
// members refused by name, broken input a clear error.
#include <archive.h>
#include <archive_entry.h>

#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "p2pcheck/import/dump.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/source.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::TempDir;

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
