// Capture over every fixture tree, lab capture and import: each replays to the same check, and
// records exactly the reads read_check_inputs() makes (what the archive must hold).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sys/stat.h>

#include "p2pcheck/capture/capture.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/memory_source.h"
#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::TempDir;

nlohmann::ordered_json check_doc(Source& source) {
  auto j = check_document(*run_check(source, CheckOptions{}));
  j.erase("source");
  return j;
}

TEST(Capture, EveryFixtureRoundTripsAndStaysSmall) {
  int fixtures = 0;
  for (const auto& fixture : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    std::string root = (fixture.path() / "root").string();
    if (!std::filesystem::exists(root + "/sys")) continue;
    ++fixtures;
    TempDir out;
    auto src = open_tree_source(root);
    auto expected = check_doc(*src);
    auto recording = open_tree_source(root);
    std::string file = out.path() + "/cap.tar.zst";
    CaptureWritten w = write_capture(collect_capture(*recording, nullptr, false), {file, false});
    // An 8-GPU server: the brief says well under a few MB.
    EXPECT_LT(w.bytes, 1u << 20) << fixture.path();
    auto replay = open_dump_source(file);
    EXPECT_EQ(check_doc(*replay), expected) << fixture.path();
  }
  EXPECT_GE(fixtures, 5);
}

// Capture records read_check_inputs(), not run_check(): the same reads must reach the source, so
// the archive holds the same files as before capture stopped deciding the pairs. The check compared
// loads everything (Load::kEverything, as capture does): a check of its own skips what only topo
// prints (every function's BARs and NUMA node), and a capture keeps those for topo. Every answer the
// log keeps (what gather_entries stores) is compared, on every fixture tree, every lab capture
// replayed with the selection it was taken for, and the real imports.
void expect_same_log(const AccessLog& whole, const AccessLog& inputs, const std::string& what) {
  EXPECT_EQ(whole.file_reads, inputs.file_reads) << what;
  EXPECT_EQ(whole.dir_lists, inputs.dir_lists) << what;
  EXPECT_EQ(whole.links_followed, inputs.links_followed) << what;
  EXPECT_EQ(whole.found, inputs.found) << what;
  ASSERT_EQ(whole.contents.size(), inputs.contents.size()) << what;
  for (auto a = whole.contents.begin(), b = inputs.contents.begin(); a != whole.contents.end(); ++a, ++b) {
    ASSERT_EQ(a->first, b->first) << what;
    EXPECT_TRUE(a->second.status == b->second.status && a->second.bytes == b->second.bytes &&
                a->second.error == b->second.error)
        << what << ": " << a->first;
  }
  ASSERT_EQ(whole.listings.size(), inputs.listings.size()) << what;
  for (auto a = whole.listings.begin(), b = inputs.listings.begin(); a != whole.listings.end(); ++a, ++b) {
    ASSERT_EQ(a->first, b->first) << what;
    ASSERT_EQ(a->second.size(), b->second.size()) << what << ": " << a->first;
    for (auto x = a->second.begin(), y = b->second.begin(); x != a->second.end(); ++x, ++y)
      EXPECT_TRUE(x->first == y->first && x->second.kind == y->second.kind &&
                  x->second.link_target == y->second.link_target)
          << what << ": " << a->first << "/" << x->first;
  }
}

template <typename Open>
void expect_inputs_read_what_check_reads(Open open, const PairSelection& selection, const std::string& what) {
  CheckOptions options;
  options.selection = selection;
  auto whole = open();
  whole->set_recording(true);
  auto report = run_check(load_machine_state(*whole, Load::kEverything), *whole, options);
  auto inputs = open();
  inputs->set_recording(true);
  CheckInputs in = read_check_inputs(*inputs, options);
  expect_same_log(whole->access_log(), inputs->access_log(), what);
  // The pairs the live probes ask the kernel about are the pairs the check decided.
  ASSERT_EQ(in.pairs.size(), report->pairs.size()) << what;
  for (std::size_t i = 0; i < in.pairs.size(); ++i) {
    EXPECT_EQ(in.pairs[i].gpu, report->pairs[i].walk.pair().gpu) << what;
    EXPECT_EQ(in.pairs[i].nvme, report->pairs[i].walk.pair().nvme) << what;
  }
  EXPECT_EQ(in.state.topo.config_truncated, report->topo.config_truncated) << what;
  EXPECT_EQ(in.state.machine.kernel_release, report->machine.kernel_release) << what;

  // The check of its own (Load::kForCheck) reads nothing the capture lacks, so a replay answers it
  // as the machine did; of the functions' BARs and NUMA nodes it reads only the GPUs' BARs and the
  // pairs' ends' nodes.
  auto own = open();
  own->set_recording(true);
  auto own_report = run_check(*own, options);
  const std::map<std::string, FileRead>& captured_contents = inputs->access_log().contents;
  std::set<std::string> gpu_bars;
  for (const Bdf& gpu : own_report->inv.gpus) gpu_bars.insert(own_report->topo.at(gpu).sysfs_path + "/resource");
  std::set<std::string> pair_ends;  // each pair's locality reads its ends' NUMA nodes
  for (const Bdf& end : own_report->selected_devices)
    pair_ends.insert(own_report->topo.at(end).sysfs_path + "/numa_node");
  for (const auto& [path, read] : own->access_log().contents) {
    EXPECT_TRUE(captured_contents.count(path)) << what << ": " << path << " read by the check, not captured";
    if (path.ends_with("/numa_node") && !pair_ends.count(path))
      ADD_FAILURE() << what << ": the check read " << path << ", not a pair's end's";
    if (path.ends_with("/resource") && path.starts_with("/sys/devices/") && !gpu_bars.count(path))
      ADD_FAILURE() << what << ": the check read " << path << ", not a GPU's";
  }
  EXPECT_EQ(check_document(*own_report), check_document(*report)) << what;
}

TEST(Capture, RecordsEveryReadOfTheCheckWithoutDecidingThePairs) {
  namespace fs = std::filesystem;
  int inputs = 0;
  for (const auto& fixture : fs::directory_iterator(P2PCHECK_FIXTURES)) {
    std::string root = (fixture.path() / "root").string();
    if (!fs::exists(root + "/sys")) continue;
    ++inputs;
    expect_inputs_read_what_check_reads([&] { return open_tree_source(root); }, {}, root);
  }
  EXPECT_GE(inputs, 8);
  int lab = 0;
  for (const auto& entry : fs::directory_iterator(std::string(P2PCHECK_SOURCE_DIR) + "/fixtures/lab")) {
    std::string archive = (entry.path() / (entry.path().filename().string() + ".tar.zst")).string();
    if (!fs::exists(archive)) continue;
    ++lab;
    std::ifstream args(entry.path() / "args");
    PairSelection selection;
    for (std::string flag, value; args >> flag >> value;)
      for (std::size_t at = 0; at <= value.size();) {
        std::size_t comma = std::min(value.find(',', at), value.size());
        (flag == "--gpu" ? selection.gpu : selection.nvme).push_back(value.substr(at, comma - at));
        at = comma + 1;
      }
    expect_inputs_read_what_check_reads([&] { return open_dump_source(archive); }, selection, archive);
  }
  EXPECT_GE(lab, 10);
  for (const char* name : {"capture.tar.zst", "lspci-xxxx.txt.xz", "udev.txt.xz", "hwloc.xml", "sosreport.tar.xz"}) {
    std::string file = std::string(P2PCHECK_SOURCE_DIR) + "/tests/e2e/imports/real/" + name;
    expect_inputs_read_what_check_reads([&] { return open_dump_source(file); }, {}, file);
  }
  // A selector that matches nothing is refused as run_check refuses it.
  PairSelection missing;
  missing.gpu = {"0000:77:00.0"};
  auto src = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  CheckOptions options;
  options.selection = missing;
  EXPECT_THROW(read_check_inputs(*src, options), UsageError);
}

}  // namespace
}  // namespace p2pcheck
