// Replays show what the captured machine said at capture time: its kernel's p2pprobe answers
// (live/kmod.json) beside our verdicts, and its last verify run (live/verify.json).
#include "p2pcheck/checks/recorded.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/error.h"
#include "test_tree.h"
#include "verify_fakes.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;
using nlohmann::json;

constexpr const char* kGpu = "0000:03:00.0";  // epyc-mi300x-8gpu: GPU and nvme0 under one switch
constexpr const char* kNvme = "0000:05:00.0";

struct Replay {
  FakeRoot root = FakeRoot::load(fixture_root("epyc-mi300x-8gpu"));
  std::unique_ptr<CheckReport> check() {
    auto source = root.source();
    CheckOptions o;
    o.selection = {{kGpu}, {kNvme}};
    return run_check(*source, o);
  }
  const Finding* finding(const CheckReport& r, const std::string& id) {
    for (const auto& f : r.findings)
      if (f.id == id) return &f;
    return nullptr;
  }
};

json kmod_doc(int distance, const char* map_type) {
  return {{"schema", "p2pcheck.kmod"},
          {"schema_version", 1},
          {"module", {{"api_version", 1}, {"module_version", "0.1"}, {"kernel_release", "6.12.9"}, {"p2pdma", true}}},
          {"verdicts", json::array({{{"provider", kGpu},
                                     {"client", kNvme},
                                     {"distance", distance},
                                     {"map_type", map_type},
                                     {"map_note", ""}}})},
          {"failures", json::array()}};
}

json verify_doc(const char* to_device, const char* to_storage) {
  return {
      {"schema", "p2pcheck.verify"},
      {"finished_at", "2026-11-30T09:00:00Z"},
      {"summary", "x"},
      {"pairs",
       json::array({{{"gpu", kGpu},
                     {"nvme", kNvme},
                     {"nvme_name", "nvme0"},
                     {"status", "ran"},
                     {"engine", "hipfile"},
                     {"directions",
                      json::array({{{"flow", "storage -> GPU"}, {"outcome", to_device}},
                                   {{"flow", "GPU -> storage"}, {"outcome", to_storage}, {"errno", "EREMOTEIO"}}})}},
                    {{"gpu", kGpu}, {"nvme", "0000:06:00.0"}, {"status", "skipped"}}})}};
}

TEST(Recorded, KernelAnswersOfTheCaptureAreComparedOnReplay) {
  Replay r;
  auto plain = r.check();
  ASSERT_EQ(plain->pairs.size(), 1u);
  EXPECT_FALSE(plain->pairs[0].kernel);
  EXPECT_FALSE(r.finding(*plain, "kmod.kernel_verdict"));  // replay without recorded answers: nothing claimed
  const PairDecision& ours = plain->pairs[0];

  r.root.write("live/kmod.json", kmod_doc(*ours.distance, to_string(ours.map_type)).dump());
  auto agreed = r.check();
  ASSERT_TRUE(agreed->pairs[0].kernel);
  EXPECT_EQ(agreed->pairs[0].kernel_agrees, Tri::kYes);
  const Finding* f = r.finding(*agreed, "kmod.kernel_verdict");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kPass);
  EXPECT_NE(f->message.find("captured machine's kernel"), std::string::npos) << f->message;
  ASSERT_EQ(f->evidence.size(), 1u);
  EXPECT_EQ(f->evidence[0].file, kRecordedKmodPath);
  EXPECT_NE(f->evidence[0].value.find("recorded at capture time"), std::string::npos);

  r.root.write("live/kmod.json", kmod_doc(-1, "NOT_SUPPORTED").dump());
  auto differ = r.check();
  f = r.finding(*differ, "kmod.kernel_verdict");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_EQ(differ->result, Result::kFail);
  EXPECT_EQ(differ->pairs[0].kernel_agrees, Tri::kNo);
}

TEST(Recorded, AnswersForOtherPairsClaimNothing) {
  Replay r;
  json doc = kmod_doc(4, "BUS_ADDR");
  doc["verdicts"][0]["client"] = "0000:06:00.0";
  r.root.write("live/kmod.json", doc.dump());
  auto rep = r.check();
  EXPECT_FALSE(rep->pairs[0].kernel);
  const Finding* f = r.finding(*rep, "kmod.kernel_verdict");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kInfo);
  EXPECT_NE(f->message.find("cover none"), std::string::npos);
}

TEST(Recorded, VerifyRunShowsPerDirectionAndFailsWhenATransferFailed) {
  Replay r;
  r.root.write("live/verify.json", verify_doc("passed", "refused").dump());
  auto rep = r.check();
  const Finding* f = r.finding(*rep, "verify.recorded");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_NE(f->message.find("1 of 2 transfer direction(s) did not pass"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("2026-11-30T09:00:00Z"), std::string::npos);
  ASSERT_EQ(f->evidence.size(), 1u);  // the skipped pair is not among the checked ones
  EXPECT_EQ(f->evidence[0].value,
            "0000:03:00.0 -> 0000:05:00.0 (nvme0): storage -> GPU passed, GPU -> storage refused (EREMOTEIO); engine "
            "hipfile");

  r.root.write("live/verify.json", verify_doc("passed", "passed").dump());
  auto passed = r.check();  // kept alive: the finding points into its report
  f = r.finding(*passed, "verify.recorded");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kPass);
  EXPECT_NE(f->message.find("all 2 transfer direction(s) passed"), std::string::npos);
}

TEST(Recorded, BrokenRecordsNameTheFile) {
  Replay r;
  r.root.write("live/kmod.json", "{\"schema\": \"p2pcheck.kmod\", \"verdicts\": [{\"provider\": \"zz\"}]}");
  try {
    r.check();
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/live/kmod.json"), std::string::npos) << e.what();
  }
  Replay fresh;  // without the broken kmod.json
  fresh.root.write("live/verify.json", "not json");
  try {
    fresh.check();
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/live/verify.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("p2pcheck.verify"), std::string::npos) << e.what();
  }
}

// Members of the wrong type were nlohmann type_errors that escaped main (an abort, issue 15): now
// each is an Error naming the file, the member and what it should be.
std::string replay_error(const char* file, const json& doc) {
  Replay r;
  r.root.write(file, doc.dump());
  try {
    r.check();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Recorded, MembersOfTheWrongTypeNameTheMember) {
  json kmod = kmod_doc(2, "bus_addr");
  kmod["module"]["api_version"] = "1";
  EXPECT_EQ(replay_error("live/kmod.json", kmod),
            "/live/kmod.json: module.api_version: expected an integer from 0 to 4294967295, found a string \"1\"");
  kmod = kmod_doc(2, "bus_addr");
  kmod["module"]["p2pdma"] = 1;
  EXPECT_EQ(replay_error("live/kmod.json", kmod),
            "/live/kmod.json: module.p2pdma: expected true or false, found a number 1");
  kmod = kmod_doc(2, "bus_addr");
  kmod["verdicts"][0]["map_type"] = 7;
  EXPECT_EQ(replay_error("live/kmod.json", kmod),
            "/live/kmod.json: verdicts[0].map_type: expected a string, found a number 7");
  kmod = kmod_doc(2, "bus_addr");
  kmod["module"] = "x";
  EXPECT_EQ(replay_error("live/kmod.json", kmod), "/live/kmod.json: module: expected an object, found a string \"x\"");
  EXPECT_EQ(replay_error("live/kmod.json", {{"schema", 3}}),
            "/live/kmod.json: schema: expected a string, found a number 3");

  json verify = verify_doc("passed", "passed");
  verify["pairs"][0]["directions"][1]["errno"] = 121;
  EXPECT_EQ(replay_error("live/verify.json", verify),
            "/live/verify.json: pairs[0].directions[1].errno: expected a string, found a number 121");
  verify = verify_doc("passed", "passed");
  verify["pairs"][1] = 5;
  EXPECT_EQ(replay_error("live/verify.json", verify),
            "/live/verify.json: pairs[1]: expected an object, found a number 5");
}

}  // namespace
}  // namespace p2pcheck
