// Fakes for `p2pcheck verify` tests: the live-only interfaces (VerifyIo, KernelLog, EngineProvider,
// the /dev/p2pprobe ioctl) with exactly the behaviour a test states, and real files underneath
// where the data path itself is under test.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/verify/verify.h"
#include "p2pcheck/verify/verify_io.h"
#include "p2pcheck/verify/verify_pattern.h"
#include "test_paths.h"
#include "test_tree.h"
#include "uapi/p2pprobe.h"

namespace p2pcheck::testing {

// Real I/O, except what a test overrides: stat() of chosen paths (so a temp directory can "sit on"
// a fixture's nvme1n1), O_DIRECT refusal, and failures of chosen calls.
class FakeIo : public VerifyIo {
 public:
  std::map<std::string, FileStat> stats;
  int o_direct_error = 0;  // returned by open() when O_DIRECT is asked for
  int fallocate_error = 0;
  std::function<long(int fd, std::uint64_t offset)> pread_error, pwrite_error;  // non-zero: fail with it
  std::map<std::string, std::string> redirect;  // open() of a path (a "/dev/nvme1n1") goes to a file
  std::vector<std::string> opened, unlinked;
  std::vector<int> open_flags;
  std::map<int, std::string> fd_paths;  // open fds -> the path asked for

  int open(const std::string& path_in, int flags, unsigned mode) override {
    opened.push_back(path_in);
    open_flags.push_back(flags);
    auto r = redirect.find(path_in);
    const std::string& path = r == redirect.end() ? path_in : r->second;
    if (o_direct_error && (flags & O_DIRECT)) {
      if (flags & O_CREAT) live_->open(path, flags & ~O_DIRECT, mode);  // the kernel creates it first
      return o_direct_error;
    }
    int fd = live_->open(path, flags, mode);
    if (fd >= 0) fd_paths[fd] = path_in;
    return fd;
  }
  int close(int fd) override {
    fd_paths.erase(fd);
    return live_->close(fd);
  }
  long pread(int fd, void* buf, std::size_t len, std::uint64_t off) override {
    if (pread_error)
      if (long e = pread_error(fd, off)) return e;
    return live_->pread(fd, buf, len, off);
  }
  long pwrite(int fd, const void* buf, std::size_t len, std::uint64_t off) override {
    if (pwrite_error)
      if (long e = pwrite_error(fd, off)) return e;
    return live_->pwrite(fd, buf, len, off);
  }
  int fsync(int fd) override { return live_->fsync(fd); }
  int fallocate(int fd, std::uint64_t off, std::uint64_t len) override {
    return fallocate_error ? fallocate_error : live_->fallocate(fd, off, len);
  }
  int unlink(const std::string& path) override {
    unlinked.push_back(path);
    return live_->unlink(path);
  }
  int stat(const std::string& path, FileStat& out) override {
    if (auto it = stats.find(path); it != stats.end()) {
      out = it->second;
      return 0;
    }
    return live_->stat(path, out);
  }
  // What stat() of the opened path says *now* for a faked node (a test may change stats between the
  // check and the open), and the faked st_dev of a faked directory for a file opened in it.
  int fstat(int fd, FileStat& out) override {
    if (int rc = live_->fstat(fd, out); rc < 0) return rc;
    auto p = fd_paths.find(fd);
    if (p == fd_paths.end()) return 0;
    if (auto it = stats.find(p->second); it != stats.end()) {
      out = it->second;
    } else if (auto d = stats.find(std::filesystem::path(p->second).parent_path().string());
               d != stats.end() && d->second.is_dir) {
      out.dev_major = d->second.dev_major;
      out.dev_minor = d->second.dev_minor;
    }
    return 0;
  }
  void* map_shared(int fd, std::size_t len, int& error) override { return live_->map_shared(fd, len, error); }
  int unmap(void* addr, std::size_t len) override { return live_->unmap(addr, len); }

  // A directory whose file system "is" block device major:minor.
  void dir_on(const std::string& path, unsigned major, unsigned minor) {
    FileStat st;
    st.is_dir = true;
    st.dev_major = major;
    st.dev_minor = minor;
    stats[path] = st;
  }
  void block_device(const std::string& path, unsigned major, unsigned minor) {
    FileStat st;
    st.is_block = true;
    st.rdev_major = major;
    st.rdev_minor = minor;
    stats[path] = st;
  }

 private:
  std::unique_ptr<VerifyIo> live_ = open_live_io();
};

class FakeKernelLog : public KernelLog {
 public:
  std::string problem;
  std::vector<std::string> lines;  // what read_new() returns once
  int starts = 0;
  std::string start() override {
    ++starts;
    return problem;
  }
  std::vector<std::string> read_new() override { return std::exchange(lines, {}); }
};

// An engine whose every transfer is the test's function.
class FakeEngine : public VerifyEngine {
 public:
  EngineKind engine_kind = EngineKind::kKmod;
  std::function<TransferResult(const TransferRequest&)> on_transfer;
  std::vector<TransferRequest> requests;
  EngineKind kind() const override { return engine_kind; }
  TransferResult transfer(const TransferRequest& r) override {
    requests.push_back(r);
    return on_transfer(r);
  }
};

// Does what a working P2P path would: moves the pattern between "device memory" and the target
// with ordinary I/O, so the runner's own checks see real data.
inline TransferResult honest_transfer(const TransferRequest& r) {
  TransferResult out;
  auto io = open_live_io();
  if (r.direction == Direction::kToDevice) {
    HostIoResult h = read_and_check(*io, r.target.fd, r.target.offset, r.target.size, r.chunk, r.seed);
    out.error = h.error;
    out.bytes = h.bytes;
    out.mismatch = h.mismatch;
  } else {
    HostIoResult h = write_pattern(*io, r.target.fd, r.target.offset, r.target.size, r.chunk, r.seed);
    out.error = h.error;
    out.bytes = h.bytes;
  }
  out.ns = 1000000;
  return out;
}

class FakeEngines : public EngineProvider {
 public:
  std::map<EngineKind, EngineAvailability> engines;
  std::vector<EngineKind> asked;
  EngineAvailability get(EngineKind kind) override {
    asked.push_back(kind);
    if (auto it = engines.find(kind); it != engines.end()) return it->second;
    return {nullptr, {std::string(to_string(kind)) + " not available in this test"}, {}};
  }
  std::shared_ptr<FakeEngine> add(EngineKind kind, std::function<TransferResult(const TransferRequest&)> fn) {
    auto e = std::make_shared<FakeEngine>();
    e->engine_kind = kind;
    e->on_transfer = std::move(fn);
    engines[kind] = {e, {}, {"fake " + std::string(to_string(kind))}};
    return e;
  }
};

// /dev/p2pprobe as the module answers DMA_TEST: it checks the request like p2pprobe.c, then moves
// the pattern with ordinary I/O on the fd (standing in for the p2pmem pages) and compares.
class FakeDmaModule : public IoctlDevice {
 public:
  int ioctl_error = 0;                  // the ioctl itself fails (-EPERM, -EOPNOTSUPP)
  int write_error = 0, read_error = 0;  // a direction fails after `fail_after` bytes
  std::uint64_t fail_after = 0;
  std::optional<std::uint64_t> corrupt_at;  // flips the byte read back at this absolute offset
  std::vector<p2pprobe_dma_test> requests;

  int ioctl(unsigned long request, void* arg) override {
    if (request == P2PPROBE_IOC_GET_INFO) {
      auto* info = static_cast<p2pprobe_info*>(arg);
      info->api_version = P2PPROBE_API_VERSION;
      info->flags = P2PPROBE_INFO_P2PDMA | P2PPROBE_INFO_PROVIDER;
      std::strcpy(info->module_version, "1.0.0");
      std::strcpy(info->kernel_release, "6.12.117");
      return 0;
    }
    if (request != P2PPROBE_IOC_DMA_TEST) return -ENOTTY;
    auto* t = static_cast<p2pprobe_dma_test*>(arg);
    requests.push_back(*t);
    if (t->size != sizeof *t || t->version != P2PPROBE_API_VERSION || (t->flags & ~P2PPROBE_DMA_F_ALL)) return -EINVAL;
    for (auto r : t->reserved)
      if (r) return -EINVAL;
    if (t->offset % P2PPROBE_DMA_ALIGN || t->length % P2PPROBE_DMA_ALIGN || t->length > P2PPROBE_DMA_MAX_LENGTH ||
        t->chunk_size > P2PPROBE_DMA_MAX_CHUNK)
      return -EINVAL;
    if (ioctl_error) return ioctl_error;
    t->chunk_used = t->chunk_size ? t->chunk_size : P2PPROBE_DMA_MAX_CHUNK;
    t->target_flags =
        P2PPROBE_TARGET_REGULAR | P2PPROBE_TARGET_HAS_BDEV | P2PPROBE_TARGET_QUEUE_P2PDMA | P2PPROBE_TARGET_HAS_PCI;
    t->target_distance = 4;
    t->target_pci = target_pci;
    t->mismatch.offset = P2PPROBE_NO_MISMATCH;
    AlignedBuffer mem(t->length);  // the "p2pmem"; aligned because targets are opened O_DIRECT
    char* buf = static_cast<char*>(mem.data());
    if (!(t->flags & P2PPROBE_DMA_F_NO_WRITE)) {
      t->write.ran = 1;
      p2pprobe_pattern_fill(buf, t->length, t->offset, t->seed);
      move(
          t->write, write_error, [&](std::uint64_t n) { return ::pwrite(t->fd, buf, n, t->offset); }, t->length);
    }
    if (!(t->flags & P2PPROBE_DMA_F_NO_READ)) {
      t->read.ran = 1;
      move(
          t->read, read_error, [&](std::uint64_t n) { return ::pread(t->fd, buf, n, t->offset); }, t->length);
      if (t->read.error == 0) {
        if (corrupt_at && *corrupt_at >= t->offset && *corrupt_at < t->offset + t->length)
          buf[*corrupt_at - t->offset] ^= 0x5a;
        p2pprobe_pattern_check(buf, t->length, t->offset, t->seed, &t->mismatch);
      }
    }
    return 0;
  }
  std::string path() const override { return "/dev/p2pprobe"; }
  p2pprobe_bdf target_pci{0, 0x06, 0, {0, 0}};

 private:
  template <typename Io>
  void move(p2pprobe_dir_result& d, int error, Io io, std::uint64_t length) {
    if (error) {
      d.error = error;
      d.bytes = std::min(fail_after, length);
      return;
    }
    long n = io(length);
    if (n < 0) {
      d.error = -errno;
      return;
    }
    d.bytes = static_cast<std::uint64_t>(n);
    d.ns = 1000000;
  }
};

// Sets environment variables for one test and puts the old values back.
class ScopedEnv {
 public:
  void set(const std::string& name, const std::string& value) {
    remember(name);
    setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    remember(name);
    unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : old_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  void remember(const std::string& name) {
    if (old_.count(name)) return;
    const char* v = getenv(name.c_str());
    old_[name] = v ? std::optional<std::string>(v) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> old_;
};

inline std::string fixture_root(const std::string& name) {
  return std::string(P2PCHECK_FIXTURES) + "/" + name + "/root";
}

// A fixture's root loaded into memory (not copied) with the /proc/mounts lines of `device`
// ("/dev/nvme1n1") gone. Throws when no line named it, so a test cannot pass on a fixture that changed.
inline FakeRoot fixture_unmounting(const std::string& name, const std::string& device) {
  FakeRoot root = FakeRoot::load(fixture_root(name));
  std::istringstream in(root.source()->read("/proc/mounts").bytes);
  std::string mounts, line;
  bool dropped = false;
  while (std::getline(in, line)) {
    if (line.rfind(device + " ", 0) == 0)
      dropped = true;
    else
      mounts += line + "\n";
  }
  if (!dropped) throw std::runtime_error(fixture_root(name) + "/proc/mounts does not mount " + device);
  root.write("proc/mounts", mounts);
  return root;
}

}  // namespace p2pcheck::testing
