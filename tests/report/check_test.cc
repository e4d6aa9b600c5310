// check_text / result_line / check_json on a whole run_check over the small switch machine.
#include "p2pcheck/report/check.h"

#include <gtest/gtest.h>

#include "../small_machine.h"
#include "p2pcheck/checks/check.h"

namespace p2pcheck::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class CheckText : public SmallMachine {
 protected:
  std::unique_ptr<CheckReport> check(const PairSelection& selection = {}) {
    source_ = root_.source();
    CheckOptions options;
    options.selection = selection;
    return run_check(*source_, options);
  }
  void zen_without_kernel_config() {
    root_.write("proc/cpuinfo", "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n");
    root_.write("proc/sys/kernel/osrelease", "6.8.0-142-generic\n");
  }
};

TEST_F(CheckText, PathAllowedKernelUnknownIsItsOwnCellAndJsonLevel) {
  zen_without_kernel_config();
  auto r = check();
  ASSERT_FALSE(r->pairs.empty());
  bool path_ok_kernel_unknown = false;
  for (const auto& d : r->pairs)
    path_ok_kernel_unknown |= d.path_verdict == Verdict::kSupported && d.verdict == Verdict::kUnknown;
  ASSERT_TRUE(path_ok_kernel_unknown);  // no kernel config: every allowed path waits on the kernel
  std::string text = check_text(*r, TextStyle{false, true});
  EXPECT_TRUE(contains(text, "ok? / ok?")) << text;
  EXPECT_TRUE(contains(text, "ok? = path allowed, kernel unknown"));
  auto j = check_json(*r);
  bool seen = false;
  for (const auto& p : j["pairs"])
    if (p["path"]["verdict"] == "supported" && p["verdict"] == "unknown") {
      seen = true;
      EXPECT_EQ(p["blocked_by"], nlohmann::ordered_json::array({"p2pdma_config_unknown"})) << p["blocked_by"].dump();
    }
  EXPECT_TRUE(seen);
}

TEST_F(CheckText, ResultWordIsTheSameInTextJsonAndQuiet) {
  zen_without_kernel_config();
  auto r = check();
  std::string line = result_line(*r, TextStyle{false, true});
  EXPECT_EQ(line.rfind(std::string("RESULT: ") + to_string(r->result) + " — ", 0), 0u) << line;
  EXPECT_TRUE(contains(check_text(*r, TextStyle{false, true}), line));
  EXPECT_EQ(check_json(*r)["result"], to_string(r->result));
  // No pair is refused; what fails is the GPU without a driver, and the line names it.
  EXPECT_EQ(r->result, Result::kFail);
  EXPECT_TRUE(contains(line, "0 of 3 GPU–NVMe pair(s) can use P2P DMA; failing: gpu.driver (0000:03:00.0)")) << line;
}

TEST_F(CheckText, ProblemsFirstAndPassOnlyWhenVerbose) {
  zen_without_kernel_config();
  auto r = check();
  std::string quiet = check_text(*r, TextStyle{false, true}, false);
  std::string verbose = check_text(*r, TextStyle{false, true}, true);
  EXPECT_FALSE(contains(quiet, "\n  PASS    ")) << quiet;
  EXPECT_TRUE(contains(quiet, "(-v lists them)"));
  EXPECT_TRUE(contains(verbose, "\n  PASS    ")) << verbose;
  // The first finding line is the worst one.
  size_t findings = quiet.find("Kernel and stack\n");
  ASSERT_NE(findings, std::string::npos);
  std::string first = quiet.substr(findings + 17, 10);
  EXPECT_TRUE(first.rfind("  FAIL", 0) == 0 || first.rfind("  UNKNOWN", 0) == 0) << first;
}

TEST(AsciiText, SpellsPunctuationAndReplacesTheRest) {
  EXPECT_EQ(ascii_text("a — b – c → d … ×"), "a - b - c -> d ... x");
  EXPECT_EQ(ascii_text("└─ x"), "`- x");
  EXPECT_EQ(ascii_text("caf\xc3\xa9 \xe6\x97\xa5"), "caf? ?");  // one ? per character
  EXPECT_EQ(ascii_text("\xc3"), "?");                           // a truncated sequence is one character
}

}  // namespace
}  // namespace p2pcheck::testing
