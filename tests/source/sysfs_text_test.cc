#include "p2pcheck/source/sysfs_text.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

TEST(NvmeName, EachKindAndItsNamespace) {
  auto ctrl = parse_nvme_name("nvme0");
  ASSERT_TRUE(ctrl);
  EXPECT_EQ(ctrl->kind, NvmeName::Kind::kController);
  auto ns = parse_nvme_name("nvme12n3");
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->kind, NvmeName::Kind::kNamespace);
  EXPECT_EQ(ns->ns, "nvme12n3");
  auto path = parse_nvme_name("nvme1c2n3");
  ASSERT_TRUE(path);
  EXPECT_EQ(path->kind, NvmeName::Kind::kPathNode);
  EXPECT_EQ(path->ns, "nvme1n3");
  auto part = parse_nvme_name("nvme0n1p2");
  ASSERT_TRUE(part);
  EXPECT_EQ(part->kind, NvmeName::Kind::kPartition);
  EXPECT_EQ(part->ns, "nvme0n1");
  for (const char* bad : {"nvme", "nvmen1", "nvme0n", "nvme0c1", "nvme0c1n1p1", "nvme0n1p", "nvme0x", "sda", "nvme-0"})
    EXPECT_FALSE(parse_nvme_name(bad)) << bad;
}

TEST(NvmeName, AHugeNameIsJustNotOne) {
  // std::regex recursed once per digit here; a directory entry of 200,000 digits overflowed the stack.
  EXPECT_FALSE(parse_nvme_name("nvme0n" + std::string(200000, '1') + "x"));
  auto ns = parse_nvme_name("nvme0n" + std::string(200000, '1'));
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->kind, NvmeName::Kind::kNamespace);
}

TEST(Digits, HexAndDecimal) {
  EXPECT_TRUE(is_hex_digits("09afAF"));
  EXPECT_FALSE(is_hex_digits(""));
  EXPECT_FALSE(is_hex_digits("0x1"));
  EXPECT_TRUE(is_dec_digits("0123"));
  EXPECT_FALSE(is_dec_digits("12a"));
  EXPECT_FALSE(is_dec_digits(""));
}

TEST(SysfsText, NextLineAndNextWordWalkTheTextAsSplitDoes) {
  std::string_view text = "a b\n\n\tc  d \nlast";
  EXPECT_EQ(next_line(text), "a b");
  EXPECT_EQ(next_line(text), "");
  std::string_view line = next_line(text);
  EXPECT_EQ(next_word(line), "c");
  EXPECT_EQ(next_word(line), "d");
  EXPECT_EQ(next_word(line), "");
  EXPECT_EQ(next_line(text), "last");
  EXPECT_TRUE(text.empty());
  EXPECT_EQ(split_lines("a\n\nb\n"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split_words(" x\ty\n z "), (std::vector<std::string>{"x", "y", "z"}));
}

}  // namespace
}  // namespace p2pcheck
