// `p2pcheck mounts` as text and JSON on the storage-stacks fixture: one entry per file system on NVMe
// (its bind mounts with it), per GPU the pairs and what the stack makes of them, names escaped in
// text and kept in JSON.
#include "p2pcheck/report/mounts.h"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::FakeRoot;

class MountsReport : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FakeRoot::load(std::string(P2PCHECK_FIXTURES) + "/storage-stacks/root");
    run();
  }
  void run() {
    source_ = root_.source();
    CheckOptions options;
    options.mounted_targets = true;
    report_ = run_check(*source_, options);
    view_ = mounts_view(*report_);
  }
  const MountRow& row(const std::string& mountpoint) {
    for (const auto& r : view_.rows)
      if (r.target->mountpoint == mountpoint) return r;
    throw std::runtime_error("no row " + mountpoint);
  }

  FakeRoot root_;
  std::unique_ptr<Source> source_;
  std::unique_ptr<CheckReport> report_;
  MountsView view_;
};

TEST_F(MountsReport, AnswersPerGpuFoldThePairsAndTheStack) {
  EXPECT_EQ(view_.rows.size(), 8u);  // /mnt/fast lane and /mnt/odd\nname are one xfs file system
  EXPECT_EQ(view_.on_nvme, 9u);
  EXPECT_EQ(row("/").gpus.at(0).answer, MountAnswer::kP2p);
  EXPECT_EQ(row("/data").gpus.at(0).answer, MountAnswer::kStack);
  EXPECT_EQ(row("/data").gpus.at(0).pairs.size(), 2u);
  EXPECT_EQ(row("/home").gpus.at(0).answer, MountAnswer::kStack);
  EXPECT_EQ(row("/srv").gpus.at(0).answer, MountAnswer::kDepends);
  EXPECT_EQ(row("/boot/efi").gpus.at(0).answer, MountAnswer::kNotData);
  EXPECT_EQ(report_->result, Result::kFail);  // storage.stack fails, as `check` says
}

TEST_F(MountsReport, OtherMountsAreKeptWithWhatHoldsData) {
  EXPECT_EQ(view_.mounts, 15u);
  ASSERT_EQ(view_.others.size(), 6u);
  std::size_t data = 0;
  for (const auto& m : view_.others) data += m.data;
  EXPECT_EQ(data, 1u);  // fileserver:/export/home
}

TEST_F(MountsReport, TextEscapesNamesAndSaysWhyTheStackBlocks) {
  std::string text = mounts_text(*report_, view_, TextStyle{}, false);
  EXPECT_NE(text.find("\n  /mnt/odd\\nname "), std::string::npos) << text;
  EXPECT_EQ(text.find("/mnt/odd\nname"), std::string::npos);
  EXPECT_NE(text.find("md0 (md) → nvme0n1p4, nvme1n1p1"), std::string::npos) << text;
  EXPECT_NE(text.find("md RAID (md0) between the file system and the NVMe"), std::string::npos) << text;
  EXPECT_NE(text.find("/net/home"), std::string::npos);
  // The answer first, as check gives it; -q gives that line alone.
  EXPECT_LT(text.find("RESULT: FAIL"), text.find("MOUNT POINT")) << text;
  EXPECT_EQ(mounts_result_line(*report_, view_, TextStyle{}).rfind("RESULT: FAIL", 0), 0u);
}

// A container host: kubelet volumes bind-mount one file system thousands of times. They are one
// file system with one stack and one answer: three rows and a count, each mount with -v and in JSON.
TEST_F(MountsReport, BindMountsOfOneFileSystemAreCountedNotRepeated) {
  std::ifstream in(std::string(P2PCHECK_FIXTURES) + "/storage-stacks/root/proc/mounts");
  std::string mounts(std::istreambuf_iterator<char>(in), {});
  for (int i = 0; i < 5000; ++i)
    mounts += "/dev/nvme1n1p3 /var/lib/kubelet/pods/" + std::to_string(i) + "/vol xfs rw,relatime 0 0\n";
  root_.write("proc/mounts", mounts);
  run();
  ASSERT_EQ(view_.rows.size(), 8u);
  EXPECT_EQ(view_.on_nvme, 5009u);
  const MountRow& xfs = row("/mnt/fast lane");
  EXPECT_EQ(xfs.target->more_mounts.size(), 5001u);
  std::string text = mounts_text(*report_, view_, TextStyle{}, false);
  EXPECT_NE(text.find("… and 4999 more mount(s) of /dev/nvme1n1p3"), std::string::npos) << text;
  EXPECT_LT(text.size(), 6000u) << text;
  std::string all = mounts_text(*report_, view_, TextStyle{}, true);
  EXPECT_NE(all.find("/var/lib/kubelet/pods/4999/vol"), std::string::npos);
  auto j = mounts_json(*report_, view_);
  EXPECT_EQ(j["counts"]["on_nvme"], 5009);
  EXPECT_EQ(j["counts"]["file_systems"], 8);
  EXPECT_EQ(j["file_systems"][7]["mounts"].size(), 5002u);
  EXPECT_EQ(j["file_systems"][7]["mounts"][5001]["mount_point"], "/var/lib/kubelet/pods/4999/vol");
}

TEST_F(MountsReport, JsonCarriesTheSameModel) {
  auto j = mounts_json(*report_, view_);
  EXPECT_EQ(j["schema"], "p2pcheck.mounts");
  EXPECT_EQ(j["result"], "FAIL");
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_EQ(j["counts"]["on_nvme"], 9);
  EXPECT_EQ(j["counts"]["file_systems"], 8);
  const auto& data = j["file_systems"][3];
  EXPECT_EQ(data["mount"]["mount_point"], "/data");
  EXPECT_EQ(data["controllers"].size(), 2u);
  EXPECT_EQ(data["fastpath_blocked_by"][0]["device"], "md0");
  EXPECT_EQ(data["stack_finding"]["level"], "FAIL");
  EXPECT_EQ(data["gpus"][0]["answer"], "stack");
  EXPECT_EQ(data["gpus"][0]["pairs"][0]["verdict"], "supported");
  EXPECT_EQ(j["file_systems"][7]["mount"]["mount_point"], "/mnt/fast lane");
  EXPECT_EQ(j["file_systems"][7]["mounts"][1]["mount_point"], "/mnt/odd\nname");
}

// The 8-GPU EPYC: nine file systems, every GPU with the same answer on each: a table a person scans
// in one screen (20 lines), the RESULT on line 5 as in check, no line per GPU.
TEST(MountsReportEpyc, OneRowPerMountAndTheResultFirst) {
  FakeRoot root = FakeRoot::load(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  auto source = root.source();
  CheckOptions options;
  options.mounted_targets = true;
  auto report = run_check(*source, options);
  MountsView view = mounts_view(*report);
  std::string text = mounts_text(*report, view, TextStyle{}, false);
  EXPECT_LE(std::count(text.begin(), text.end(), '\n'), 20) << text;
  EXPECT_EQ(text.find("RESULT: "), text.find("\n\n") + 2) << text;
  EXPECT_EQ(text.find("GPU 0000:"), std::string::npos) << text;
  EXPECT_NE(text.find("md0 (md) → nvme6n1, nvme7n1"), std::string::npos) << text;
}

TEST(MountsReportUnknown, SaysWhyInsteadOfAnEmptyList) {
  CheckReport report;
  report.targets_unknown = "the mount table is not in this lspci output";
  report.result = Result::kUnknown;
  MountsView view = mounts_view(report);
  std::string text = mounts_text(report, view, TextStyle{}, false);
  EXPECT_NE(text.find("mounts: unknown: the mount table is not in this lspci output"), std::string::npos) << text;
  EXPECT_NE(text.find("RESULT: UNKNOWN"), std::string::npos);
  EXPECT_EQ(mounts_json(report, view)["unknown"], "the mount table is not in this lspci output");
}

}  // namespace
}  // namespace p2pcheck
