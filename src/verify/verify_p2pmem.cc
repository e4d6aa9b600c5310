#include "p2pcheck/verify/verify_p2pmem.h"

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace p2pcheck {
namespace {

class P2pmemEngine : public VerifyEngine {
 public:
  P2pmemEngine(std::shared_ptr<VerifyIo> io, std::string devices_dir)
      : io_(std::move(io)), devices_dir_(std::move(devices_dir)) {}
  EngineKind kind() const override { return EngineKind::kP2pmem; }

  TransferResult transfer(const TransferRequest& r) override {
    TransferResult out;
    const std::string allocate = devices_dir_ + "/" + r.provider.str() + "/p2pmem/allocate";
    int fd = io_->open(allocate, O_RDWR);
    if (fd < 0) {
      out.error = fd;
      out.error_text = "cannot open " + allocate;
      return out;
    }
    // Each mapping of `allocate` takes its pages from the provider's pool; they go back at munmap.
    int map_error = 0;
    void* mem = io_->map_shared(fd, r.chunk, map_error);
    if (!mem) {
      io_->close(fd);
      out.error = map_error;
      out.error_text = "mmap of " + allocate + " (" + format_size(r.chunk) + ") failed";
      return out;
    }
    out.notes.push_back("mapped " + format_size(r.chunk) + " of p2pmem from " + allocate);
    const bool to_device = r.direction == Direction::kToDevice;
    const std::uint64_t end = r.target.offset + r.target.size;
    for (std::uint64_t at = r.target.offset; at < end;) {
      std::uint64_t n = std::min(r.chunk, end - at);
      if (to_device) {
        // Poison first: a read that silently does nothing must not find an earlier run's data.
        std::memset(mem, 0xa5, n);
      } else {
        fill_pattern(mem, n, at, r.seed);
      }
      auto t0 = std::chrono::steady_clock::now();
      long rc = to_device ? io_->pread(r.target.fd, mem, n, at) : io_->pwrite(r.target.fd, mem, n, at);
      out.ns += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
      if (rc < 0) {
        out.error = static_cast<int>(rc);
        break;
      }
      out.bytes += static_cast<std::uint64_t>(rc);
      if (static_cast<std::uint64_t>(rc) != n) {
        out.error = -ENODATA;
        break;
      }
      if (to_device) merge_mismatch(out.mismatch, check_pattern(mem, n, at, r.seed));
      at += n;
    }
    io_->unmap(mem, r.chunk);
    io_->close(fd);
    return out;
  }

 private:
  std::shared_ptr<VerifyIo> io_;
  std::string devices_dir_;
};

}  // namespace

std::shared_ptr<VerifyEngine> make_p2pmem_engine(std::shared_ptr<VerifyIo> io, std::string devices_dir) {
  return std::make_shared<P2pmemEngine>(std::move(io), std::move(devices_dir));
}

}  // namespace p2pcheck
