// SPDX-License-Identifier: GPL-2.0
// Userspace (C++20) checks of kmod/uapi/p2pprobe.h: the header shared with
// the p2pprobe kernel module. Build with -I<repo>/kmod.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <type_traits>
#include <vector>

#include "uapi/p2pprobe.h"

namespace {

constexpr std::uint64_t kSeed = 0x5eed'0000'1234'abcdULL;

std::vector<unsigned char> Filled(std::size_t len, std::uint64_t offset, std::uint64_t seed) {
  std::vector<unsigned char> buf(len);
  p2pprobe_pattern_fill(buf.data(), buf.size(), offset, seed);
  return buf;
}

TEST(UapiLayout, StructSizesAreFixed) {
  EXPECT_EQ(sizeof(p2pprobe_bdf), 8u);
  EXPECT_EQ(sizeof(p2pprobe_info), 160u);
  EXPECT_EQ(sizeof(p2pprobe_verdict), 160u);
  EXPECT_EQ(sizeof(p2pprobe_dir_result), 24u);
  EXPECT_EQ(sizeof(p2pprobe_mismatch), 24u);
  EXPECT_EQ(sizeof(p2pprobe_dma_test), 176u);
  // 64-bit fields sit at 8-byte offsets so i386 and x86-64 agree.
  EXPECT_EQ(offsetof(p2pprobe_dma_test, offset) % 8, 0u);
  EXPECT_EQ(offsetof(p2pprobe_dma_test, write) % 8, 0u);
  EXPECT_EQ(offsetof(p2pprobe_dma_test, mismatch) % 8, 0u);
  EXPECT_TRUE(std::is_standard_layout_v<p2pprobe_dma_test>);
  EXPECT_TRUE(std::is_trivially_copyable_v<p2pprobe_verdict>);
}

TEST(UapiLayout, IoctlNumbersEncodeTypeAndSize) {
  EXPECT_EQ(_IOC_TYPE(P2PPROBE_IOC_GET_INFO), P2PPROBE_IOC_MAGIC);
  EXPECT_EQ(_IOC_SIZE(P2PPROBE_IOC_GET_INFO), sizeof(p2pprobe_info));
  EXPECT_EQ(_IOC_SIZE(P2PPROBE_IOC_VERDICT), sizeof(p2pprobe_verdict));
  EXPECT_EQ(_IOC_SIZE(P2PPROBE_IOC_DMA_TEST), sizeof(p2pprobe_dma_test));
  EXPECT_EQ(_IOC_DIR(P2PPROBE_IOC_DMA_TEST), unsigned{_IOC_READ | _IOC_WRITE});
  EXPECT_NE(P2PPROBE_IOC_GET_INFO, P2PPROBE_IOC_VERDICT);
  EXPECT_NE(P2PPROBE_IOC_VERDICT, P2PPROBE_IOC_DMA_TEST);
}

TEST(Pattern, SameSeedAndBlockGiveSameData) { EXPECT_EQ(Filled(4096, 8192, kSeed), Filled(4096, 8192, kSeed)); }

TEST(Pattern, FillAtOffsetMatchesSliceOfLargerFill) {
  const auto whole = Filled(8192, 0, kSeed);
  const auto part = Filled(512, 1024, kSeed);
  EXPECT_EQ(0, std::memcmp(whole.data() + 1024, part.data(), part.size()));
}

TEST(Pattern, DifferentBlockGivesDifferentData) {
  const auto a = Filled(512, 0, kSeed);
  const auto b = Filled(512, 512, kSeed);
  EXPECT_NE(a, b);
  // Every word differs, not just some: a misdirected block never half-matches.
  for (std::size_t w = 0; w < 512 / 8; ++w)
    EXPECT_NE(0, std::memcmp(a.data() + 8 * w, b.data() + 8 * w, 8)) << "word " << w;
}

TEST(Pattern, DifferentSeedGivesDifferentData) {
  const auto a = Filled(512, 0, kSeed);
  const auto b = Filled(512, 0, kSeed + 1);
  for (std::size_t w = 0; w < 512 / 8; ++w)
    EXPECT_NE(0, std::memcmp(a.data() + 8 * w, b.data() + 8 * w, 8)) << "word " << w;
}

TEST(Pattern, WordsWithinABlockAreDistinct) {
  const auto a = Filled(512, 4096, kSeed);
  for (std::size_t i = 0; i < 64; ++i)
    for (std::size_t j = i + 1; j < 64; ++j) EXPECT_NE(0, std::memcmp(a.data() + 8 * i, a.data() + 8 * j, 8));
}

TEST(Pattern, ByteHelperAgreesWithFill) {
  const std::uint64_t off = 3 * 512;
  const auto a = Filled(1024, off, kSeed);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], p2pprobe_pattern_byte(kSeed, off + i)) << "byte " << i;
}

TEST(Pattern, CheckAcceptsIntactData) {
  const auto a = Filled(4096, 65536, kSeed);
  p2pprobe_mismatch mm{};
  EXPECT_EQ(0u, p2pprobe_pattern_check(a.data(), a.size(), 65536, kSeed, &mm));
  EXPECT_EQ(P2PPROBE_NO_MISMATCH, mm.offset);
  EXPECT_EQ(0u, mm.count);
}

TEST(Pattern, CheckFindsFirstBadByte) {
  const std::uint64_t off = 1 << 20;
  auto a = Filled(4096, off, kSeed);
  a[1234] ^= 0x10;
  a[3000] ^= 0xff;
  p2pprobe_mismatch mm{};
  EXPECT_EQ(2u, p2pprobe_pattern_check(a.data(), a.size(), off, kSeed, &mm));
  EXPECT_EQ(off + 1234, mm.offset);
  EXPECT_EQ(p2pprobe_pattern_byte(kSeed, off + 1234), mm.expected);
  EXPECT_EQ(static_cast<unsigned char>(mm.expected ^ 0x10), mm.found);
  EXPECT_EQ(2u, mm.count);
}

TEST(Pattern, CheckWorksOnUnalignedBuffer) {
  std::vector<unsigned char> raw(4096 + 1);
  unsigned char* p = raw.data() + 1;
  p2pprobe_pattern_fill(p, 4096, 0, kSeed);
  p[77] ^= 1;
  p2pprobe_mismatch mm{};
  EXPECT_EQ(1u, p2pprobe_pattern_check(p, 4096, 0, kSeed, &mm));
  EXPECT_EQ(77u, mm.offset);
}

TEST(Pattern, TornBlockIsDetected) {
  // A 512-byte block whose second half still holds the previous write (other
  // seed) or another block's data: the first bad byte is where the tear is.
  const std::uint64_t off = 7 * 512;
  auto a = Filled(1024, off, kSeed);
  const auto stale = Filled(1024, off, kSeed ^ 1);
  std::memcpy(a.data() + 256, stale.data() + 256, 256);
  p2pprobe_mismatch mm{};
  EXPECT_GT(p2pprobe_pattern_check(a.data(), a.size(), off, kSeed, &mm), 0u);
  EXPECT_LE(mm.offset, off + 256 + 7);
  EXPECT_GE(mm.offset, off + 256);

  // Misdirected write: block 8's data landing in block 7.
  auto b = Filled(1024, off, kSeed);
  const auto other = Filled(512, off + 512, kSeed);
  std::memcpy(b.data(), other.data(), 512);
  EXPECT_GT(p2pprobe_pattern_check(b.data(), b.size(), off, kSeed, &mm), 0u);
  EXPECT_LT(mm.offset, off + 8);
}

TEST(Pattern, CheckReportsZeroedData) {
  std::vector<unsigned char> zeros(512, 0);
  p2pprobe_mismatch mm{};
  EXPECT_GT(p2pprobe_pattern_check(zeros.data(), zeros.size(), 0, kSeed, &mm), 400u);
  EXPECT_LT(mm.offset, 8u);
}

}  // namespace
