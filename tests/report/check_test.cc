// check_text / result_line / check_json on a whole run_check over the small switch machine.
#include "p2pcheck/report/check.h"

#include <gtest/gtest.h>

#include "../small_machine.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/report/compact_json.h"

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
    root_.write("proc/sys/kernel/osrelease", "6.8.12-custom\n");  // names no distribution kernel
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
  // Its own code (SW? below a switch, RC? through the root complex), never the "?" of an unknown path.
  EXPECT_TRUE(contains(text, " SW?") || contains(text, " RC?")) << text;
  EXPECT_FALSE(contains(text, "  ?    unknown: the path cannot be decided")) << text;
  EXPECT_TRUE(contains(text, "; the kernel itself (CONFIG_PCI_P2PDMA) is unknown\n")) << text;
  auto j = check_document(*r);
  bool seen = false;
  for (const auto& p : j["decisions"])
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
  EXPECT_TRUE(contains(line, "— failing: gpu.driver (0000:03:00.0); 2 undecided of 2 GPU–NVMe pair(s)")) << line;
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

TEST(WrapLine, FoldsAtSpacesUnderTheIndentAndNeverBreaksAWord) {
  using report_detail::wrap_line;
  EXPECT_EQ(wrap_line("  FAIL    one two three four", 20, 10), "  FAIL    one two\n          three four");
  // A word longer than the line keeps a line of its own, whole.
  EXPECT_EQ(wrap_line("  fix: pci=disable_acs_redir=0000:03:09.0;0000:03:11.0 then", 30, 7),
            "  fix: pci=disable_acs_redir=0000:03:09.0;0000:03:11.0\n       then");
  // Colour takes no column, a UTF-8 character one; a short line is left as it was.
  EXPECT_EQ(wrap_line("\x1b[31mFAIL\x1b[0m — ab", 9, 2), "\x1b[31mFAIL\x1b[0m — ab");
  EXPECT_EQ(wrap_line("a  b", 80, 0), "a  b");
  EXPECT_EQ(wrap_line("", 80, 0), "");
}

// Each line hangs under the text after its own label; short lines and width 0 are left alone.
TEST(FoldToWidth, HangsEachLineUnderItsLabel) {
  using report_detail::fold_to_width;
  EXPECT_EQ(fold_to_width("  why   one two three\n  - four five six", 16),
            "  why   one two\n        three\n  - four five\n    six");
  EXPECT_EQ(fold_to_width("          evidence: a = b c", 24), "          evidence: a =\n                    b c");
  EXPECT_EQ(fold_to_width("GPU 0000:04:00.0 <-> nvme1: NOT SUPPORTED", 30),
            "GPU 0000:04:00.0 <-> nvme1:\n  NOT SUPPORTED");
  EXPECT_EQ(fold_to_width("  \x1b[31mFAIL    \x1b[0mone two", 14), "  \x1b[31mFAIL    \x1b[0mone\n          two");
  EXPECT_EQ(fold_to_width("   up    a b  <GPU>", 15), "   up    a b\n         <GPU>");
  EXPECT_EQ(fold_to_width("short\n\nlines\n", 10), "short\n\nlines\n");
  EXPECT_EQ(fold_to_width("a b c d e f", 0), "a b c d e f");
}

TEST_F(CheckText, FindingsFoldAtTheWrapWidthOnlyWhenGiven) {
  zen_without_kernel_config();
  auto r = check();
  std::string whole = check_text(*r, TextStyle{false, true}, true);
  TextStyle narrow{false, true};
  narrow.wrap = 60;
  std::string folded = check_text(*r, narrow, true);
  auto section = [](const std::string& text) {
    size_t from = text.find("Kernel and stack\n"), to = text.find("\n\n", from);
    return text.substr(from, to - from);
  };
  std::string a = section(whole), b = section(folded);
  std::size_t longest = 0, width = 0;
  for (size_t i = 0; i < a.size(); i = a.find('\n', i) + 1) {
    longest = std::max(longest, a.find('\n', i) == std::string::npos ? a.size() - i : a.find('\n', i) - i);
    if (a.find('\n', i) == std::string::npos) break;
  }
  ASSERT_GT(longest, 60u) << a;  // something to fold
  for (size_t i = 0; i < b.size(); i = b.find('\n', i) + 1) {
    size_t end = b.find('\n', i) == std::string::npos ? b.size() : b.find('\n', i);
    std::string line = b.substr(i, end - i);
    // Only a word longer than the room may pass the width, alone after its label ("evidence:").
    if (line.size() > 60) {
      std::string rest = line.substr(line.find_first_not_of(' '));
      if (rest.rfind("evidence: ", 0) == 0 || rest.rfind("fix: ", 0) == 0) rest = rest.substr(rest.find(' ') + 1);
      EXPECT_EQ(rest.find(' '), std::string::npos) << line;
    }
    width = std::max(width, line.size());
    if (end == b.size()) break;
  }
  // Folding only moves spaces: the same words in the same order.
  auto words = [](std::string s) {
    std::string out;
    for (char c : s) out += (c == '\n' || c == ' ') ? ' ' : c;
    std::string squeezed;
    for (char c : out)
      if (!(c == ' ' && !squeezed.empty() && squeezed.back() == ' ')) squeezed += c;
    return squeezed;
  };
  EXPECT_EQ(words(a), words(b));
  EXPECT_NE(a, b);
}

// The matrix fits the width it is given: more columns per block when wide, one when narrow.
TEST_F(CheckText, MatrixFitsTheWidth) {
  zen_without_kernel_config();
  auto r = check();
  auto matrix_lines = [&](std::size_t width) {
    TextStyle style{false, true, width};
    std::string text = check_text(*r, style);
    size_t at = text.find("Pairs (storage -> GPU and GPU -> storage)\n");
    EXPECT_NE(at, std::string::npos) << text;
    std::vector<std::string> lines;
    for (size_t i = at; i < text.size();) {
      size_t end = text.find('\n', i);
      std::string line = text.substr(i, end - i);
      if (line.empty()) break;
      lines.push_back(line);
      i = end + 1;
    }
    return lines;
  };
  auto wide = matrix_lines(200), narrow = matrix_lines(30);
  EXPECT_LT(wide.size(), narrow.size());  // narrow: one NVMe per block, so more blocks
  for (const auto& line : narrow)
    if (line.rfind("  GPU ", 0) == 0) {
      EXPECT_LE(line.size(), 30u) << line;
    }
}

// One fix per cause, structured: ACS redirect gives the kernel parameter and the ports (in a
// decisions row, the pair's listed ports: its records' port_lists).
TEST_F(CheckText, PairsCarryRuleIdAndAStructuredFix) {
  zen_without_kernel_config();
  root_.write("boot/config-6.8.0-142-generic", "CONFIG_PCI_P2PDMA=y\n");
  auto r = check();
  auto j = check_document(*r);
  ASSERT_FALSE(j["decisions"].empty());
  for (const auto& p : j["decisions"]) {
    EXPECT_TRUE(p["rule_id"].is_string());
    if (p["verdict"] == "supported") {
      EXPECT_TRUE(p["fix"].is_null()) << p["fix"].dump();
    }
    if (p["fix"].is_object()) {
      EXPECT_FALSE(p["fix"]["text"].get<std::string>().empty());
      if (p["fix"]["kind"] == "disable_acs_redir") {
        EXPECT_TRUE(p["fix"]["kernel_cmdline"].is_null());
        EXPECT_TRUE(p["fix"]["devices"].empty());
      }
    }
  }
  for (const auto& record : j["pairs"]) {  // [gpu, nvme, decision, distance, gpu_ports, nvme_ports]
    const auto& fix = j["decisions"][record[2].get<std::size_t>()]["fix"];
    const bool ports = !j["port_lists"][record[4].get<std::size_t>()].empty() ||
                       !j["port_lists"][record[5].get<std::size_t>()].empty();
    if (fix.is_object() && fix["kind"] == "disable_acs_redir") {
      EXPECT_TRUE(ports) << record.dump();
    }
  }
  EXPECT_TRUE(j["identity"].is_object());
  EXPECT_EQ(j["identity"]["redacted"], false);
  // A tree shows or fails to show: observed, or unreadable where a fact is UNKNOWN.
  for (const auto& f : j["findings"])
    EXPECT_EQ(f["state"], f["level"] == "UNKNOWN" ? "unreadable" : "observed") << f["id"];
}

TEST(AsciiText, SpellsPunctuationAndReplacesTheRest) {
  EXPECT_EQ(ascii_text("a — b – c → d … ×"), "a - b - c -> d ... x");
  EXPECT_EQ(ascii_text("└─ x"), "`- x");
  EXPECT_EQ(ascii_text("caf\xc3\xa9 \xe6\x97\xa5"), "caf? ?");  // one ? per character
  EXPECT_EQ(ascii_text("\xc3"), "?");                           // a truncated sequence is one character
}

}  // namespace
}  // namespace p2pcheck::testing
