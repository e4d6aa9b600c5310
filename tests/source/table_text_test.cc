#include "p2pcheck/source/table_text.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

TEST(TableText, SplitsLikeSplitLines) {
  EXPECT_EQ(split_table_lines("a b\nc d\n", "/proc/mounts"), (std::vector<std::string_view>{"a b", "c d"}));
  EXPECT_TRUE(split_table_lines("", "/proc/mounts").empty());
}

TEST(TableText, RefusesMoreLinesThanAnyMachineHas) {
  std::string at_limit;
  for (std::size_t i = 0; i < kMaxTableLines; ++i) at_limit += "x\n";
  EXPECT_EQ(split_table_lines(at_limit, "/proc/mounts").size(), kMaxTableLines);
  try {
    split_table_lines(at_limit + "x\n", "/proc/mounts");
    FAIL() << "no Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/proc/mounts");
    EXPECT_STREQ(e.what(), "/proc/mounts: 100001 lines; no machine's has more than 100000");
  }
}

}  // namespace
}  // namespace p2pcheck
