// Every row's token is one docs/json.md lists, and every token docs/json.md lists has its row: the
// rule_id and fix.kind tables, the blocked_by[] member, fleet's pair causes.
#include "p2pcheck/explain/vocabulary.h"

#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>

#include "test_paths.h"

namespace p2pcheck {
namespace {

std::string json_md() {
  std::ifstream in(std::string(P2PCHECK_SOURCE_DIR) + "/docs/json.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text from the line that starts with `from` up to the first blank line after it.
std::string block(const std::string& doc, const std::string& from) {
  std::size_t at = doc.find("\n" + from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return "";
  std::size_t end = doc.find("\n\n", doc.find('\n', at + 1) + 1);
  return doc.substr(at + 1, end - at - 1);
}

// The `tokens` of each table row's first cell, without the header and the rule line.
std::set<std::string> first_cells(const std::string& table) {
  std::set<std::string> out;
  std::istringstream lines(table);
  std::regex quoted("`([^`]+)`");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::string cell = line.substr(0, line.find('|', 1));
    for (std::sregex_iterator m(cell.begin(), cell.end(), quoted), end; m != end; ++m) out.insert((*m)[1]);
  }
  return out;
}

std::set<std::string> quoted_matching(const std::string& text, const std::regex& token) {
  std::set<std::string> out;
  std::regex quoted("`([^`]+)`");
  for (std::sregex_iterator m(text.begin(), text.end(), quoted), end; m != end; ++m)
    if (std::regex_match((*m)[1].str(), token)) out.insert((*m)[1]);
  return out;
}

template <typename Rows>
std::set<std::string> tokens(Rows rows) {
  std::set<std::string> out;
  for (const auto& r : rows)
    if (*r.token) out.insert(r.token);
  EXPECT_FALSE(out.empty());
  return out;
}

TEST(Vocabulary, RuleIdsAreTheDocumentedOnes) {
  std::string doc = json_md();
  EXPECT_EQ(tokens(rule_rows()), first_cells(block(doc, "`rule_id` values:\n\n| rule_id")));
}

TEST(Vocabulary, FixKindsAreTheDocumentedOnes) {
  std::string doc = json_md();
  EXPECT_EQ(tokens(fix_rows()), first_cells(block(doc, "`fix.kind` values:\n\n| kind")));
}

TEST(Vocabulary, BlockedByTokensAreTheDocumentedOnes) {
  std::string member = block(json_md(), "| `blocked_by[]` |");
  member = member.substr(0, member.find('\n'));
  EXPECT_EQ(tokens(blocker_rows()), quoted_matching(member, std::regex("[a-z0-9_]+")));
}

TEST(Vocabulary, PairCausesAreTheDocumentedOnes) {
  std::string causes = block(json_md(), "Pair causes (a refused or undecided pair");
  EXPECT_EQ(tokens(cause_rows()), quoted_matching(causes, std::regex("(pair|kernel)\\.[a-z0-9_]+")));
}

TEST(Vocabulary, TokensReadBack) {
  for (const BlockerRow& r : blocker_rows()) EXPECT_EQ(blocker_named(r.token), r.blocker);
  for (const FixRow& r : fix_rows())
    if (r.kind != FixKind::kNone) {
      EXPECT_EQ(fix_kind_named(r.token), r.kind);
    }
  EXPECT_FALSE(fix_kind_named(""));
  EXPECT_FALSE(blocker_named("pair.acs_redirect"));
}

TEST(Vocabulary, KernelCausesAreFindingsAndPathCausesArePairs) {
  for (const CauseRow& r : cause_rows())
    if (r.cause != Cause::kNone) {
      EXPECT_EQ(r.finding, std::string(r.token).rfind("kernel.", 0) == 0) << r.token;
    }
  // Each blocker's cause is a kernel finding's: the kernel, not the path, blocks the pair.
  for (const BlockerRow& r : blocker_rows()) EXPECT_TRUE(row(r.cause).finding) << r.token;
}

TEST(Vocabulary, FixWordsAreWrittenOnce) {
  // The one same_switch sentence: the host-bridge cause's fleet fix is that row's words.
  EXPECT_EQ(row(Cause::kHostBridge).fix, FixKind::kSameSwitch);
  EXPECT_EQ(row(Cause::kHostBridge).fix_words, nullptr);
  EXPECT_NE(std::string(row(FixKind::kSameSwitch).words).find("under one PCIe switch"), std::string::npos);
}

}  // namespace
}  // namespace p2pcheck
