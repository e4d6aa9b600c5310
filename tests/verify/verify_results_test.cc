// What verify leaves behind: raw mode's warning and its one written range, the results file for
// capture (never through a symlink), sizes as typed, and the AER evidence it reports.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/verify/verify.h"
#include "p2pcheck/verify/verify_hipfile.h"
#include "p2pcheck/verify/verify_kmod.h"
#include "p2pcheck/verify/verify_p2pmem.h"
#include "p2pcheck/verify/verify_report.h"
#include "test_expect.h"
#include "test_paths.h"
#include "verify_fakes.h"
#include "verify_run.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

TEST(Verify, RawModeWarnsFirstAndWritesOnlyItsRange) {
  FakeRoot root = fixture_unmounting("epyc-mi300x-8gpu", "/dev/nvme1n1");
  VerifyRun r;
  r.source = root.source();
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.options.raw_devices = {"/dev/nvme1n1"};
  r.options.offset = 1 << 20;
  r.options.allow_destructive = true;
  r.io->block_device("/dev/nvme1n1", 259, 1);
  // The "namespace": a file of 0xee bytes; only [1 MiB, 2 MiB) may change.
  TempDir disk;
  std::string image = disk.path() + "/nvme1n1";
  std::ofstream(image) << std::string(3 << 20, '\xee');
  r.io->redirect["/dev/nvme1n1"] = image;
  r.engines.add(EngineKind::kP2pmem, honest_transfer);

  auto plan = r.plan();
  ASSERT_EQ(plan->warnings.size(), 2u);
  EXPECT_NE(plan->warnings[0].find("overwrites bytes 1048576 to 2097152 of /dev/nvme1n1"), std::string::npos)
      << plan->warnings[0];
  EXPECT_NE(plan->warnings[1].find(
                "io_timeout fires, 30 s (/sys/module/nvme_core/parameters/io_timeout), often with a controller reset"),
            std::string::npos)
      << plan->warnings[1];
  EXPECT_NE(verify_plan_text(*plan, TextStyle{false, false}).find("warning: a transfer the root complex drops"),
            std::string::npos);

  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  ASSERT_EQ(pr->directions.size(), 2u);  // both directions ran, so the loop below checks something
  for (const auto& d : pr->directions) EXPECT_EQ(d.outcome, Outcome::kPassed) << d.reason;
  EXPECT_EQ(r.io->open_flags.back() & (O_EXCL | O_DIRECT | O_CREAT), O_EXCL | O_DIRECT);
  EXPECT_TRUE(r.io->unlinked.empty());  // a raw device is never removed
  std::ifstream in(image, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 3u << 20);
  EXPECT_EQ(bytes.substr(0, 1 << 20), std::string(1 << 20, '\xee'));
  EXPECT_EQ(bytes.substr(2 << 20), std::string(1 << 20, '\xee'));
  EXPECT_NE(bytes.substr(1 << 20, 1 << 20), std::string(1 << 20, '\xee'));
  // Past the end of the device is a usage error before anything runs.
  r.options.offset = 1ull << 50;  // 1 PiB
  EXPECT_NE(usage_error([&] { r.plan(); }).find("runs past the end of the device"), std::string::npos);
}

TEST(Verify, ResultsFileForCapture) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.target_on(r.nvme1_dir, 259, 1);
  r.engines.add(EngineKind::kP2pmem, honest_transfer);
  VerifyReport report = r.run();
  auto json = verify_json(report);
  keep_for_schema_test(json, "passed.json");
  EXPECT_EQ(json["schema"], "p2pcheck.verify");
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["result"], "PASS");
  EXPECT_EQ(json["kernel"]["nvme_io_timeout_s"], 30);
  const auto& p = json["pairs"][0];
  EXPECT_EQ(p["status"], "ran");
  EXPECT_EQ(p["target"]["kind"], "file");
  EXPECT_EQ(p["target"]["removed"], true);
  EXPECT_EQ(p["directions"][0]["flow"], "storage -> CMB");
  EXPECT_EQ(p["directions"][0]["p2p"], "write");
  EXPECT_TRUE(p["aer"]["changes"].empty());
  TempDir out;
  std::string path = out.path() + "/run/p2pcheck/verify.json";
  save_verify_results(json, path);
  std::ifstream in(path);
  auto back = nlohmann::ordered_json::parse(in);
  EXPECT_EQ(back, json);
  EXPECT_EQ(std::string(kVerifyResultsPath), "/run/p2pcheck/verify.json");
}

// Issue 15: the results file is written as root into a shared directory. A symlink planted at the
// target, at the directory, or at the old predictable PATH.tmp.<pid> must never be written through.
TEST(Verify, ResultsAreNeverWrittenThroughASymlink) {
  namespace fs = std::filesystem;
  const nlohmann::ordered_json doc = {{"schema", "p2pcheck.verify"}, {"result", "PASS"}};
  TempDir d;
  const std::string victim = d.path() + "/victim";
  std::ofstream(victim) << "precious\n";
  auto victim_text = [&] {
    std::ifstream in(victim);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  fs::create_directories(d.path() + "/run/p2pcheck");
  const std::string path = d.path() + "/run/p2pcheck/verify.json";
  auto error_text = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };

  // The old temporary name, planted: ignored (an unpredictable name, created O_EXCL).
  const std::string planted = path + ".tmp." + std::to_string(getpid());
  fs::create_symlink(victim, planted);
  save_verify_results(doc, path);
  EXPECT_EQ(victim_text(), "precious\n");
  EXPECT_TRUE(fs::is_symlink(planted));
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::ordered_json::parse(in), doc);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(d.path() + "/run/p2pcheck")) entries += !e.path().empty();
  EXPECT_EQ(entries, 2);  // verify.json and the planted link: no temporary file left

  // The results file itself a symlink: refused, the link and its target untouched.
  fs::remove(path);
  fs::create_symlink(victim, path);
  std::string err = error_text([&] { save_verify_results(doc, path); });
  EXPECT_NE(err.find("not a regular file (a symbolic link?)"), std::string::npos) << err;
  EXPECT_EQ(victim_text(), "precious\n");
  EXPECT_TRUE(fs::is_symlink(path));

  // The directory a symlink to another place: refused.
  fs::create_directories(d.path() + "/elsewhere");
  fs::create_directory_symlink(d.path() + "/elsewhere", d.path() + "/run/linked");
  err = error_text([&] { save_verify_results(doc, d.path() + "/run/linked/verify.json"); });
  EXPECT_NE(err.find("is not a directory (a symbolic link?)"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(d.path() + "/elsewhere"));
}

TEST(Verify, SizesParse) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("64M"), 64u << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("512k"), 512u << 10);
  EXPECT_THROW(parse_size("lots"), UsageError);
  EXPECT_THROW(parse_size("5T"), UsageError);
  EXPECT_THROW(parse_size("-1"), UsageError);
  EXPECT_THROW(parse_size("99999999999999G"), UsageError);
  try {
    parse_size("8Q", "--offset");
    ADD_FAILURE() << "8Q parsed";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--offset 8Q"), std::string::npos) << e.what();
  }
}

TEST(VerifyEvidence, AerCountersThatMoveAreReported) {
  FakeRoot root;  // the source sees the counters written after it was opened: the tree is shared
  const std::string dev = "sys/bus/pci/devices/0000:00:01.1/";
  root.write(dev + "aer_dev_correctable", "RxErr 0\nBadTLP 0\nTOTAL_ERR_COR 0\n");
  root.write(dev + "aer_dev_fatal", "TOTAL_ERR_FATAL 0\n");
  root.write(dev + "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL 0\n");
  root.mkdir("sys/bus/pci/devices/0000:01:00.0");
  auto source = root.source();
  std::vector<Bdf> devs{*Bdf::parse("0000:00:01.1"), *Bdf::parse("0000:01:00.0")};
  AerSnapshot before = read_aer(*source, devs);
  root.write(dev + "aer_dev_correctable", "RxErr 0\nBadTLP 3\nTOTAL_ERR_COR 3\n");
  AerSnapshot after = read_aer(*source, devs);
  auto changes = aer_changes(before, after);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].counter, "aer_dev_correctable:BadTLP");
  EXPECT_EQ(changes[0].after, 3u);
  ASSERT_EQ(after.not_reported.size(), 1u);
  EXPECT_EQ(after.not_reported[0].str(), "0000:01:00.0");
}

}  // namespace
}  // namespace p2pcheck
