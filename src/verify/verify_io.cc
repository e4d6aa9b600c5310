#include "p2pcheck/verify/verify_io.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace p2pcheck {
namespace {

template <typename F>
long retry_eintr(F f) {
  long rc;
  do rc = f();
  while (rc < 0 && errno == EINTR);
  return rc < 0 ? -errno : rc;
}

class LiveIo : public VerifyIo {
 public:
  int open(const std::string& path, int flags, unsigned mode) override {
    return static_cast<int>(retry_eintr([&] { return ::open(path.c_str(), flags | O_CLOEXEC, mode); }));
  }
  int close(int fd) override { return ::close(fd) < 0 ? -errno : 0; }
  long pread(int fd, void* buf, std::size_t len, std::uint64_t offset) override {
    return retry_eintr([&] { return ::pread(fd, buf, len, static_cast<off_t>(offset)); });
  }
  long pwrite(int fd, const void* buf, std::size_t len, std::uint64_t offset) override {
    return retry_eintr([&] { return ::pwrite(fd, buf, len, static_cast<off_t>(offset)); });
  }
  int fsync(int fd) override {
    return static_cast<int>(retry_eintr([&] { return ::fsync(fd); }));
  }
  int fallocate(int fd, std::uint64_t offset, std::uint64_t len) override {
    // posix_fallocate returns the error instead of setting errno.
    int rc = ::posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(len));
    return rc ? -rc : 0;
  }
  int unlink(const std::string& path) override { return ::unlink(path.c_str()) < 0 ? -errno : 0; }
  int stat(const std::string& path, FileStat& out) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) < 0) return -errno;
    fill(st, out);
    return 0;
  }
  int fstat(int fd, FileStat& out) override {
    struct stat st {};
    if (::fstat(fd, &st) < 0) return -errno;
    fill(st, out);
    return 0;
  }
  static void fill(const struct stat& st, FileStat& out) {
    out.is_dir = S_ISDIR(st.st_mode);
    out.is_regular = S_ISREG(st.st_mode);
    out.is_block = S_ISBLK(st.st_mode);
    out.dev_major = major(st.st_dev);
    out.dev_minor = minor(st.st_dev);
    out.rdev_major = major(st.st_rdev);
    out.rdev_minor = minor(st.st_rdev);
    out.size = static_cast<std::uint64_t>(st.st_size);
  }
  void* map_shared(int fd, std::size_t len, int& error) override {
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      error = -errno;
      return nullptr;
    }
    error = 0;
    return p;
  }
  int unmap(void* addr, std::size_t len) override { return ::munmap(addr, len) < 0 ? -errno : 0; }
};

class LiveLoader : public DynamicLoader {
 public:
  void* open(const std::string& name, std::string& error) override {
    // RTLD_LOCAL: a runtime's symbols must not satisfy another library's lookups by accident.
    void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      error = e ? e : "dlopen failed";
    }
    return h;
  }
  void* symbol(void* handle, const char* name) override {
    ::dlerror();
    return ::dlsym(handle, name);
  }
  std::string path_of(void* handle) override {
    struct link_map* map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) return "";
    return map->l_name;
  }
};

class LiveKernelLog : public KernelLog {
 public:
  ~LiveKernelLog() override {
    if (fd_ >= 0) ::close(fd_);
  }
  std::string start() override {
    if (fd_ < 0) {
      fd_ = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd_ < 0) {
        int err = errno;
        if (err == EPERM || err == EACCES)
          return "/dev/kmsg: permission denied (needs root or kernel.dmesg_restrict=0)";
        return std::string("/dev/kmsg: ") + std::strerror(err);
      }
    }
    // SEEK_END on /dev/kmsg moves past every record logged so far.
    if (::lseek(fd_, 0, SEEK_END) < 0) return std::string("/dev/kmsg: seek failed: ") + std::strerror(errno);
    return "";
  }
  std::vector<std::string> read_new() override {
    std::vector<std::string> out;
    if (fd_ < 0) return out;
    char buf[8192];
    for (;;) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      // EPIPE: records were overwritten before we read them; the read position moved on, keep going.
      if (n < 0 && errno == EPIPE) continue;
      if (n <= 0) break;  // EAGAIN: nothing new
      out.push_back(kmsg_text(std::string_view(buf, static_cast<size_t>(n))));
    }
    return out;
  }

 private:
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<VerifyIo> open_live_io() { return std::make_unique<LiveIo>(); }
std::unique_ptr<DynamicLoader> open_live_loader() { return std::make_unique<LiveLoader>(); }
std::unique_ptr<KernelLog> open_live_kernel_log() { return std::make_unique<LiveKernelLog>(); }

std::string kmsg_text(std::string_view record) {
  // Documentation/ABI/testing/dev-kmsg: "prefix;message\n" then optional " KEY=value" lines.
  size_t semi = record.find(';');
  std::string_view text = semi == std::string_view::npos ? record : record.substr(semi + 1);
  size_t nl = text.find('\n');
  if (nl != std::string_view::npos) text = text.substr(0, nl);
  // The kernel escapes a message's own line breaks and other unprintables as \xNN.
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x' &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 3]))) {
      int c = std::stoi(std::string(text.substr(i + 2, 2)), nullptr, 16);
      out += c == '\n' ? std::string(" / ") : std::isprint(c) ? std::string(1, static_cast<char>(c)) : std::string(" ");
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool kmsg_relevant(std::string_view text) {
  static const char* const needles[] = {
      "p2p",       "P2P",     "nvme",  "NVMe", "AER",    "pcieport", "PCIe Bus Error", "DMAR",
      "AMD-Vi",    "iommu",   "IOMMU", "AIS",  "amdgpu", "kfd",      "p2pprobe",       "blk_update_request",
      "I/O error", "timeout", "reset"};
  for (const char* n : needles)
    if (text.find(n) != std::string_view::npos) return true;
  return false;
}

std::string errno_name(int err) {
  if (err < 0) err = -err;
  if (const char* name = strerrorname_np(err)) return name;
  return "errno " + std::to_string(err);
}

std::string errno_meaning(int err) {
  if (err < 0) err = -err;
  switch (err) {
    case EREMOTEIO:
      return "the kernel refused the peer-to-peer mapping (pci_p2pdma_distance() says the pair cannot do P2P), or a "
             "stacked block device (md, dm, loop) does not take P2P pages";
    case EOPNOTSUPP:
      return "P2PDMA is not available here: a kernel without CONFIG_PCI_P2PDMA, or a block queue that does not take "
             "P2P pages";
    case EPERM:
      return "not allowed: the provider's memory may not be used (only NVMe CMBs and p2pprobe-bound devices), or "
             "not root";
    case EACCES: return "permission denied (run as root)";
    case EINVAL:
      return "invalid request: misaligned offset or size, a range too long, or a file system without O_DIRECT";
    case EIO:
      return "I/O error: the device failed the command or the controller was reset (a P2P transfer the root "
             "complex drops ends this way when nvme_core's io_timeout fires)";
    case ENODEV:
      return "no such device; in amdgpu's AIS path: the storage device is not P2P-reachable from the GPU "
             "(pci_p2pdma_distance() < 0) or has no PCI device";
    case ENOMEM: return "out of memory: the provider's p2pmem pool is exhausted";
    case ENOSPC: return "no space left on the file system";
    case ENODATA: return "short read: the file ended before the range did";
    case EINTR: return "interrupted by a signal";
    case ETIMEDOUT: return "timed out";
    case EFAULT:
      return "the buffer's pages could not be pinned for direct I/O (P2P pages refused by this kernel or file system)";
    case EBUSY: return "busy: the device is mounted, held by another driver or opened exclusively";
    case EBADF: return "bad file descriptor";
    default: return std::strerror(err);
  }
}

}  // namespace p2pcheck
