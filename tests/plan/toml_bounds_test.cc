#include "p2pcheck/plan/toml_bounds.h"

#include <gtest/gtest.h>

#include "p2pcheck/plan/plan.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

std::string error_of(std::string_view text) {
  try {
    check_toml_bounds(text, "p.toml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string dotted(std::size_t segments) {
  std::string key = "a";
  for (std::size_t i = 1; i < segments; ++i) key += ".a";
  return key;
}

// Issue 33: a header of ~50,000 dotted segments overflowed the stack inside toml++ (SIGSEGV).
TEST(TomlBounds, RefusesDeepDottedKeysWithTheirLine) {
  std::string deep = "[" + dotted(50000) + "]\n";
  EXPECT_EQ(error_of("description = \"x\"\n\n" + deep),
            "p.toml:3: a key of more than 16 dotted parts; a plan's keys have at most 3");
  EXPECT_EQ(error_of("x = 1\n" + dotted(17) + " = 1\n"),
            "p.toml:2: a key of more than 16 dotted parts; a plan's keys have at most 3");
  EXPECT_EQ(error_of("[[" + dotted(40) + "]]\n"),
            "p.toml:1: a key of more than 16 dotted parts; a plan's keys have at most 3");
  // Quoted segments are segments too; inside an inline table as well.
  EXPECT_NE(error_of("t = { " + std::string("\"q\".") + dotted(20) + " = 1 }\n"), "");
  EXPECT_EQ(error_of(dotted(16) + " = 1\n"), "");
  // Through parse_plan: the bound comes first, so toml++ never sees the header.
  try {
    parse_plan(deep, "p.toml");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "p.toml:1: a key of more than 16 dotted parts; a plan's keys have at most 3");
  }
}

TEST(TomlBounds, DotsInStringsCommentsAndNumbersAreNoKeys) {
  std::string many_dots(5000, '.');
  EXPECT_EQ(error_of("description = \"" + many_dots + "\"\n"), "");
  EXPECT_EQ(error_of("description = '" + many_dots + "'\n"), "");
  EXPECT_EQ(error_of("description = \"\"\"\n" + many_dots + "\n\\\"\"\"\n\"\"\"\"\nx = 1\n"), "");
  EXPECT_EQ(error_of("description = '''\n" + many_dots + "\n'''''\nx = 1\n"), "");
  EXPECT_EQ(error_of("# " + many_dots + "\nx = 1.5\n"), "");
  // After a multi-line string the count goes on, on the right line.
  EXPECT_EQ(error_of("d = \"\"\"\n\n\"\"\"\n" + dotted(30) + " = 1\n"),
            "p.toml:4: a key of more than 16 dotted parts; a plan's keys have at most 3");
}

TEST(TomlBounds, CapsTheNumberOfTables) {
  std::string many;
  for (std::size_t i = 0; i <= kMaxTomlTables; ++i) many += "{},";
  EXPECT_EQ(error_of("x = [" + many + "]\n"), "p.toml:1: more than 20000 tables; a plan has a few dozen");
  std::string headers;
  for (std::size_t i = 0; i <= kMaxTomlTables; ++i) headers += "[[gpu]]\n";
  EXPECT_EQ(error_of(headers), "p.toml:20001: more than 20000 tables; a plan has a few dozen");
  // Arrays inside a value are no table headers, even on a line of their own.
  std::string arrays = "x = [\n";
  for (std::size_t i = 0; i <= kMaxTomlTables; ++i) arrays += "  [1],\n";
  EXPECT_EQ(error_of(arrays + "]\n"), "");
}

}  // namespace
}  // namespace p2pcheck
