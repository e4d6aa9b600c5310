#include "p2pcheck/import/input_kind.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "import_fixture.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

using testing::small_lspci;

const char* kPlan = R"(# a planned server
description = "test"

[cpu]
vendor = "AuthenticAMD"
family = 0x19

[[host_bridge]]
name = "hb0"
bus = 0x40
device = "1022:14a4"
)";

// A scratch directory with files written into it; removed with the test.
class InputKindFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/p2pcheck-input-kind-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string dir_;
};

TEST(InputKind, EachKindByItsHead) {
  EXPECT_EQ(identify_head(small_lspci()), InputKind::kLspci);                                   // -xxxx
  EXPECT_EQ(identify_head("00:00.0 Host bridge: Intel\n\tSubsystem: x\n"), InputKind::kLspci);  // -vvv
  EXPECT_EQ(identify_head("00:00.0 Host bridge: Intel\n00:01.0 VGA compatible controller: AMD\n"),
            InputKind::kLspci);  // plain: the import refuses it, by what it is
  EXPECT_EQ(identify_head("-[0000:00]-+-00.0\n           \\-01.0\n"), InputKind::kLspciTree);
  EXPECT_EQ(identify_head("P: /devices/pci0000:00/0000:00:00.0\nM: x\nE: DEVPATH=/devices/pci0000:00\n"),
            InputKind::kUdevDb);
  EXPECT_EQ(identify_head("<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology>"),
            InputKind::kHwlocXml);
  EXPECT_EQ(identify_head("____\nStart of NVIDIA bug report log file.  Please include this file\n"),
            InputKind::kNvidiaBugReport);
  EXPECT_EQ(identify_head("processor\t: 0\nvendor_id\t: AuthenticAMD\n"), InputKind::kCpuinfo);
  EXPECT_EQ(identify_head(kPlan), InputKind::kPlan);
  EXPECT_EQ(identify_head("[ cpu ]  # spaces and a comment\nvendor = \"GenuineIntel\"\n"), InputKind::kPlan);
  EXPECT_EQ(identify_head("[[gpu]]\nname = \"g\"\n"), InputKind::kPlan);
  EXPECT_EQ(identify_head("\n  {\"schema_version\": 2, \"result\": \"PASS\"}\n"), InputKind::kCheckJson);
  // Archives by their magic: gzip, xz, zstd, bzip2, and a tar's ustar at 257.
  EXPECT_EQ(identify_head(std::string("\x1f\x8b\x08\x00", 4)), InputKind::kArchive);
  EXPECT_EQ(identify_head(std::string("\xfd"
                                      "7zXZ\0\0",
                                      7)),
            InputKind::kArchive);
  EXPECT_EQ(identify_head(std::string("\x28\xb5\x2f\xfd\x00", 5)), InputKind::kArchive);
  EXPECT_EQ(identify_head("BZh91AY&SY"), InputKind::kArchive);
  std::string tar(512, '\0');
  tar.replace(0, 4, "sys/");
  tar.replace(257, 5, "ustar");
  EXPECT_EQ(identify_head(tar), InputKind::kArchive);
}

TEST(InputKind, NothingRecognisableIsUnknownOrEmpty) {
  EXPECT_EQ(identify_head(""), InputKind::kEmpty);
  EXPECT_EQ(identify_head("hello world\n"), InputKind::kUnknown);
  EXPECT_EQ(identify_head("# README\n\nCaptures of the lab's hosts.\n"), InputKind::kUnknown);
  // Binary: NUL bytes are no text format, and a '{' before them is no saved report.
  EXPECT_EQ(identify_head(std::string("\x7f"
                                      "ELF\x02\x01\x01\0\0\0",
                                      10)),
            InputKind::kUnknown);
  EXPECT_EQ(identify_head(std::string("{\x01\x02\0binary", 10)), InputKind::kUnknown);
  EXPECT_EQ(identify_head(std::string("[cpu]\n\0\0\0", 9)), InputKind::kUnknown);
  // A TOML table a plan does not have, and a plan cut inside its first table's name.
  EXPECT_EQ(identify_head("[server]\nname = \"x\"\n"), InputKind::kUnknown);
  EXPECT_EQ(identify_head("[cpu\n"), InputKind::kUnknown);
}

TEST(InputKind, ATruncatedHeadIsJudgedByWhatItHolds) {
  // Cut in the middle of its first hex row, an lspci dump still shows a device line.
  const std::string lspci = small_lspci();
  EXPECT_EQ(identify_head(lspci.substr(0, lspci.find('\n') + 10)), InputKind::kLspci);
  // A plan cut before its first table has no table to show.
  const std::string plan = kPlan;
  EXPECT_EQ(identify_head(plan.substr(0, plan.find("[cpu]"))), InputKind::kUnknown);
  EXPECT_EQ(identify_head(plan.substr(0, plan.find("[cpu]") + 5)), InputKind::kPlan);
  // A gzip stream cut after its magic is still an archive; the open that follows says it is broken.
  EXPECT_EQ(identify_head(std::string("\x1f\x8b", 2)), InputKind::kArchive);
  EXPECT_EQ(identify_head(std::string("\x1f", 1)), InputKind::kUnknown);
}

TEST_F(InputKindFiles, FilesAreReadOnceUpToTheHead) {
  EXPECT_EQ(identify_input(write("lspci.txt", small_lspci())).kind, InputKind::kLspci);
  EXPECT_EQ(identify_input(write("server.toml", kPlan)).kind, InputKind::kPlan);
  IdentifiedInput empty = identify_input(write("empty", ""));
  EXPECT_EQ(empty.kind, InputKind::kEmpty);
  EXPECT_EQ(empty.head, "");
  EXPECT_EQ(identify_input(write("random.bin", std::string("\x00\xff\x13\x37\x00\x42", 6))).kind, InputKind::kUnknown);
  // Only the head is read: a plan's table past it is not seen, and the head is what was read.
  IdentifiedInput late = identify_input(write("late.toml", std::string(kInputHeadBytes, '\n') + kPlan));
  EXPECT_EQ(late.kind, InputKind::kUnknown);
  EXPECT_EQ(late.head.size(), kInputHeadBytes);
  EXPECT_EQ(identify_input(dir_).kind, InputKind::kDirectory);
  EXPECT_EQ(identify_input(dir_ + "/missing").kind, InputKind::kUnknown);
  // A FIFO is not opened (a read would block): unknown, for the open that follows to refuse by name.
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  IdentifiedInput pipe = identify_input(fifo);
  EXPECT_EQ(pipe.kind, InputKind::kUnknown);
  EXPECT_EQ(pipe.head, "");
}

TEST_F(InputKindFiles, EveryFixturePlanIsAPlan) {
  for (const char* name : {"epyc-mi300x-8gpu", "xeon-2socket-hostbridges", "xeon-broadwell-switch-acs"})
    EXPECT_EQ(identify_input(std::string(P2PCHECK_SOURCE_DIR) + "/fixtures/plans/" + name + ".toml").kind,
              InputKind::kPlan)
        << name;
}

}  // namespace
}  // namespace p2pcheck
