// The DMA test pattern (kmod/uapi/p2pprobe.h, defined once there) as p2pcheck verify uses it:
// filled into device memory or written to storage with ordinary host I/O, and checked after a
// transfer. The pattern is a function of the seed and the absolute file offset, so misdirected,
// stale and torn blocks never pass.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>

#include "p2pcheck/verify/verify_io.h"

namespace p2pcheck {

inline constexpr std::uint64_t kVerifyAlign = 4096;  // P2PPROBE_DMA_ALIGN; O_DIRECT needs it too
inline constexpr std::uint64_t kPatternBlock = 512;  // P2PPROBE_PATTERN_BLOCK

// The first byte that differs from the pattern, and how many do.
struct DataMismatch {
  std::uint64_t offset = 0;  // absolute file/device offset
  std::uint64_t count = 0;   // bad bytes in the range checked
  std::uint8_t expected = 0, found = 0;
};

void fill_pattern(void* buf, std::uint64_t len, std::uint64_t offset, std::uint64_t seed);
std::optional<DataMismatch> check_pattern(const void* buf, std::uint64_t len, std::uint64_t offset, std::uint64_t seed);
// Keeps the first mismatch and adds up the counts.
void merge_mismatch(std::optional<DataMismatch>& into, const std::optional<DataMismatch>& more);

// Page-aligned host memory, as O_DIRECT wants it.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(std::uint64_t size)
      : data_(std::aligned_alloc(kVerifyAlign, round_up(size)), &std::free), size_(size) {}
  void* data() const { return data_.get(); }
  std::uint64_t size() const { return size_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  static std::uint64_t round_up(std::uint64_t n) { return (n + kVerifyAlign - 1) / kVerifyAlign * kVerifyAlign; }
  std::unique_ptr<void, decltype(&std::free)> data_;
  std::uint64_t size_;
};

// Ordinary host I/O on the target, chunk by chunk: the half of each direction that is not P2P.
struct HostIoResult {
  int error = 0;  // 0 or the negative errno of the first failure (-ENODATA for a short transfer)
  std::uint64_t bytes = 0;
  std::optional<DataMismatch> mismatch;
};
HostIoResult write_pattern(VerifyIo& io, int fd, std::uint64_t offset, std::uint64_t size, std::uint64_t chunk,
                           std::uint64_t seed);
HostIoResult read_and_check(VerifyIo& io, int fd, std::uint64_t offset, std::uint64_t size, std::uint64_t chunk,
                            std::uint64_t seed);

}  // namespace p2pcheck
