// `p2pcheck mounts` as text and JSON on the storage-stacks fixture: one row per file system on NVMe,
// per GPU the pairs and what the stack makes of them, names escaped in text and kept in JSON.
#include "p2pcheck/report/mounts.h"

#include <gtest/gtest.h>

#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::FakeRoot;

class MountsReport : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FakeRoot::load(std::string(P2PCHECK_FIXTURES) + "/storage-stacks/root");
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
  EXPECT_EQ(view_.rows.size(), 9u);
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
  std::string text = mounts_text(*report_, view_, TextStyle{});
  EXPECT_NE(text.find("/mnt/odd\\nname  xfs on /dev/nvme1n1p3"), std::string::npos) << text;
  EXPECT_EQ(text.find("/mnt/odd\nname"), std::string::npos);
  EXPECT_NE(text.find("hipFile/GDS will not go peer-to-peer through md0 (md)"), std::string::npos) << text;
  EXPECT_NE(text.find("/net/home"), std::string::npos);
  EXPECT_NE(text.find("RESULT: FAIL"), std::string::npos);
}

TEST_F(MountsReport, JsonCarriesTheSameModel) {
  auto j = mounts_json(*report_, view_);
  EXPECT_EQ(j["schema"], "p2pcheck.mounts");
  EXPECT_EQ(j["result"], "FAIL");
  EXPECT_EQ(j["counts"]["on_nvme"], 9);
  const auto& data = j["file_systems"][3];
  EXPECT_EQ(data["mount"]["mount_point"], "/data");
  EXPECT_EQ(data["controllers"].size(), 2u);
  EXPECT_EQ(data["fastpath_blocked_by"][0]["device"], "md0");
  EXPECT_EQ(data["stack_finding"]["level"], "FAIL");
  EXPECT_EQ(data["gpus"][0]["answer"], "stack");
  EXPECT_EQ(data["gpus"][0]["pairs"][0]["verdict"], "supported");
  EXPECT_EQ(j["file_systems"][8]["mount"]["mount_point"], "/mnt/odd\nname");
}

TEST(MountsReportUnknown, SaysWhyInsteadOfAnEmptyList) {
  CheckReport report;
  report.targets_unknown = "the mount table is not in this lspci output";
  report.result = Result::kUnknown;
  MountsView view = mounts_view(report);
  std::string text = mounts_text(report, view, TextStyle{});
  EXPECT_NE(text.find("mounts: unknown: the mount table is not in this lspci output"), std::string::npos) << text;
  EXPECT_NE(text.find("RESULT: UNKNOWN"), std::string::npos);
  EXPECT_EQ(mounts_json(report, view)["unknown"], "the mount table is not in this lspci output");
}

}  // namespace
}  // namespace p2pcheck
