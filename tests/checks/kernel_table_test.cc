// Issue 31's table over every fixture: a release given as a what-if or supplied for an input that
// lacks one is judged like a real one. No pair "can use" P2P DMA under a kernel without P2PDMA, a
// known-bad kernel always FAILs, and a what-if never hides the danger of the kernel the machine runs.
#include <unistd.h>

#include <filesystem>
#include <gtest/gtest.h>
#include <string>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/source.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

namespace fs = std::filesystem;

struct Row {
  const char* release;
  bool has_p2pdma;  // built with CONFIG_PCI_P2PDMA as far as the release says (no config given)
  bool known_bad;
};

constexpr Row kRows[] = {
    {"3.10.0-1160.el7.x86_64", false, false},         {"4.10", false, false},
    {"4.18.0-553.166.1.el8_10.x86_64", false, false}, {"4.20", true, false},
    {"5.14.0-570.58.1.el9_6.x86_64", true, false},    {"5.14.0-687.49.1.el9_8.x86_64", true, true},
    {"6.12.0-211.58.1.el10_2.x86_64", true, true},    {"6.8", true, false},
};

const Finding* find(const CheckReport& r, const std::string& id) {
  for (const auto& f : r.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// What every row must give, whichever way the release came in.
void expect_judged(const CheckReport& r, const Row& row, Provenance release_state) {
  SCOPED_TRACE(row.release);
  const Finding* release = find(r, "kernel.release");
  ASSERT_NE(release, nullptr);
  EXPECT_EQ(release->state, release_state);
  std::size_t allowed = 0;
  for (std::size_t i = 0; i < r.pairs.size(); ++i) allowed += r.pairs.shared(i).verdict == Verdict::kSupported;
  if (!row.has_p2pdma) {
    EXPECT_EQ(allowed, 0u) << "a pair can use P2P DMA under a kernel without P2PDMA";
    if (!r.pairs.empty()) {
      EXPECT_EQ(r.result, Result::kFail);
    }
  }
  if (row.known_bad) {
    const Finding* bad = find(r, "kernel.known_bad");
    ASSERT_NE(bad, nullptr);
    EXPECT_EQ(bad->level, Level::kFail);
    EXPECT_EQ(allowed, 0u);
    if (!r.pairs.empty()) {
      EXPECT_EQ(r.result, Result::kFail);
    }
  }
  if (r.result == Result::kPass) {
    EXPECT_TRUE(row.has_p2pdma && !row.known_bad);
  }
}

class KernelTable : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() / ("p2pcheck-kernel-table-" + std::to_string(::getpid()));
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  fs::path scratch_;
};

TEST_F(KernelTable, WhatIfReleasesOnEveryFixture) {
  int fixtures = 0, known_bad_fixtures = 0;
  for (const auto& entry : fs::directory_iterator(P2PCHECK_FIXTURES)) {
    const fs::path root = entry.path() / "root";
    if (!fs::is_directory(root)) continue;
    ++fixtures;
    SCOPED_TRACE(entry.path().filename().string());
    auto running = open_tree_source(root.string());
    auto own = run_check(*running, {});
    const Finding* own_bad = find(*own, "kernel.known_bad");
    const bool runs_known_bad = own_bad && own_bad->level == Level::kFail;
    known_bad_fixtures += runs_known_bad;
    for (const Row& row : kRows) {
      auto source = open_tree_source(root.string());
      CheckOptions options;
      options.what_if_kernel = row.release;
      auto report = run_check(*source, options);
      expect_judged(*report, row, Provenance::kWhatIf);
      // The kernel the machine runs is still said to be dangerous, whatever the what-if.
      if (runs_known_bad) {
        const Finding* input_bad = find(*report, "kernel.input_known_bad");
        ASSERT_NE(input_bad, nullptr) << row.release;
        EXPECT_EQ(input_bad->level, Level::kWarn);
      }
    }
  }
  EXPECT_GE(fixtures, 10);
  EXPECT_GE(known_bad_fixtures, 1);  // the RHEL 9.8 machine
}

// The same releases supplied with --kernel-release to the fixture with its release (and so its
// config) taken away, as a udev database or an lspci dump would come.
TEST_F(KernelTable, SuppliedReleasesOnEveryFixtureWithoutItsOwn) {
  int fixtures = 0;
  for (const auto& entry : fs::directory_iterator(P2PCHECK_FIXTURES)) {
    if (!fs::is_directory(entry.path() / "root")) continue;
    ++fixtures;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const fs::path root = scratch_ / name;
    fs::copy(entry.path() / "root", root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::remove(root / "proc/sys/kernel/osrelease");
    fs::remove(root / "proc/version");  // "Linux version REL ..." names it too
    for (const Row& row : kRows) {
      auto source = open_tree_source(root.string());
      CheckOptions options;
      options.supplied.kernel_release = row.release;
      auto report = run_check(*source, options);
      expect_judged(*report, row, Provenance::kSupplied);
    }
    fs::remove_all(root);
  }
  EXPECT_GE(fixtures, 10);
}

}  // namespace
}  // namespace p2pcheck
