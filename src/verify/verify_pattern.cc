#include "p2pcheck/verify/verify_pattern.h"

#include <algorithm>
#include <cerrno>

#include "uapi/p2pprobe.h"

namespace p2pcheck {

static_assert(kVerifyAlign == P2PPROBE_DMA_ALIGN && kPatternBlock == P2PPROBE_PATTERN_BLOCK,
              "verify uses the uapi's geometry");

void fill_pattern(void* buf, std::uint64_t len, std::uint64_t offset, std::uint64_t seed) {
  p2pprobe_pattern_fill(buf, len, offset, seed);
}

std::optional<DataMismatch> check_pattern(const void* buf, std::uint64_t len, std::uint64_t offset,
                                          std::uint64_t seed) {
  p2pprobe_mismatch mm{};
  if (p2pprobe_pattern_check(buf, len, offset, seed, &mm) == 0) return std::nullopt;
  return DataMismatch{mm.offset, mm.count, mm.expected, mm.found};
}

void merge_mismatch(std::optional<DataMismatch>& into, const std::optional<DataMismatch>& more) {
  if (!more) return;
  if (!into) {
    into = more;
    return;
  }
  into->count += more->count;
}

namespace {

// One pass over [offset, offset + size) in chunk-sized pieces through one aligned buffer.
template <typename Step>
HostIoResult each_chunk(std::uint64_t offset, std::uint64_t size, std::uint64_t chunk, Step step) {
  HostIoResult out;
  AlignedBuffer buf(chunk);
  if (!buf) {
    out.error = -ENOMEM;
    return out;
  }
  for (std::uint64_t done = 0; done < size;) {
    std::uint64_t n = std::min(chunk, size - done);
    long rc = step(buf.data(), n, offset + done, out);
    if (rc < 0) {
      out.error = static_cast<int>(rc);
      break;
    }
    if (static_cast<std::uint64_t>(rc) != n) {
      out.error = -ENODATA;
      out.bytes += static_cast<std::uint64_t>(rc);
      break;
    }
    done += n;
    out.bytes += n;
  }
  return out;
}

}  // namespace

HostIoResult write_pattern(VerifyIo& io, int fd, std::uint64_t offset, std::uint64_t size, std::uint64_t chunk,
                           std::uint64_t seed) {
  HostIoResult out = each_chunk(offset, size, chunk, [&](void* buf, std::uint64_t n, std::uint64_t at, HostIoResult&) {
    fill_pattern(buf, n, at, seed);
    return io.pwrite(fd, buf, n, at);
  });
  // The P2P read that follows must see what reached the medium, not a cache.
  if (out.error == 0) out.error = io.fsync(fd);
  return out;
}

HostIoResult read_and_check(VerifyIo& io, int fd, std::uint64_t offset, std::uint64_t size, std::uint64_t chunk,
                            std::uint64_t seed) {
  return each_chunk(offset, size, chunk, [&](void* buf, std::uint64_t n, std::uint64_t at, HostIoResult& out) {
    long rc = io.pread(fd, buf, n, at);
    if (rc == static_cast<long>(n)) merge_mismatch(out.mismatch, check_pattern(buf, n, at, seed));
    return rc;
  });
}

}  // namespace p2pcheck
