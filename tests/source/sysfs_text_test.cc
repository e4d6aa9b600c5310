#include "p2pcheck/source/sysfs_text.h"

#include <array>
#include <cstdio>
#include <gtest/gtest.h>
#include <optional>

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

TEST(SysfsText, FirstWordsTakesAsManyAsFitAndCountsThem) {
  std::array<std::string_view, 3> w;
  EXPECT_EQ(first_words("  a\tbb  c d e", w), 3u);
  EXPECT_EQ(w[0], "a");
  EXPECT_EQ(w[1], "bb");
  EXPECT_EQ(w[2], "c");  // the rest is not looked at
  EXPECT_EQ(first_words("x y", w), 2u);
  EXPECT_EQ(w[1], "y");
  EXPECT_EQ(first_words(" \t ", w), 0u);
  EXPECT_EQ(first_words("", std::span<std::string_view>{}), 0u);
}

TEST(SysfsText, PathInJoinsADirectoryAndANameWithOneSlash) {
  EXPECT_EQ(path_in("/sys/devices/pci0000:00/0000:00:01.0", "config"), "/sys/devices/pci0000:00/0000:00:01.0/config");
  EXPECT_EQ(path_in("/sys/block/md0", "md/level"), "/sys/block/md0/md/level");
  EXPECT_EQ(path_in("", "sys"), "/sys");
}

TEST(SysfsText, TrimTakesSpacesTabsAndLineEndsFromBothEnds) {
  EXPECT_EQ(trim(" \t0x1002\r\n"), "0x1002");
  EXPECT_EQ(trim("a b"), "a b");
  EXPECT_EQ(trim(" \n\r\t"), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("\vx\f"), "\vx\f");  // sysfs prints only these four
}

TEST(SysfsText, HexWritesWhatPrintfWouldAtEveryWidth) {
  for (std::uint64_t value : {0ull, 1ull, 0xaull, 0x1002ull, 0xfb000000ull, 0x123456789abcdefull, ~0ull})
    for (int digits : {0, 1, 2, 4, 8, 16, 20}) {
      char expected[40];
      std::snprintf(expected, sizeof expected, "%0*llx", digits, static_cast<unsigned long long>(value));
      EXPECT_EQ(hex(value, digits), expected);
      std::string appended = "0x";
      append_hex(appended, value, digits);
      EXPECT_EQ(appended, std::string("0x") + expected);
    }
}

// sysfs prints hex with and without 0x, padded to 16 digits (resource), with a newline; anything
// else, or more than 64 bits, is no number.
TEST(SysfsText, ParseHexTakesSysfsNumbersUpTo64Bits) {
  EXPECT_EQ(parse_hex("0x1002\n"), std::uint64_t{0x1002});
  EXPECT_EQ(parse_hex("0X74A1"), std::uint64_t{0x74a1});
  EXPECT_EQ(parse_hex("  0x00000000fb000000 "), std::uint64_t{0xfb000000});
  EXPECT_EQ(parse_hex("deadBEEF"), std::uint64_t{0xdeadbeef});
  EXPECT_EQ(parse_hex("ffffffffffffffff"), std::uint64_t{0xffffffffffffffff});
  EXPECT_EQ(parse_hex("0x0000000000000000ffffffffffffffff"), std::uint64_t{0xffffffffffffffff});  // zeros first
  EXPECT_EQ(parse_hex("00000000000000000001"), std::uint64_t{1});
  for (std::string_view bad :
       {"0x10000000000000000", "1fffffffffffffffff", "0x", "", "0x-1", "-1", "+1", "0xg", "12 34", "0x0x1"})
    EXPECT_EQ(parse_hex(bad), std::nullopt) << '"' << bad << '"';
}

}  // namespace
}  // namespace p2pcheck
