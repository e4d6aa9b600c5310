// The live-only actions of `p2pcheck verify`, each behind a small interface so that tests can fake
// them: file and block-device I/O (O_DIRECT, O_EXCL, mmap of p2pmem/allocate), loading shared
// libraries (dlopen), and the kernel log (/dev/kmsg). Reading machine state still goes through
// Source; these are only the things a Source cannot do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace p2pcheck {

struct FileStat {
  bool is_dir = false, is_regular = false, is_block = false;
  unsigned dev_major = 0, dev_minor = 0;    // the device holding the file (st_dev)
  unsigned rdev_major = 0, rdev_minor = 0;  // the device a block special file is (st_rdev)
  std::uint64_t size = 0;
};

// Every call returns 0 or a count on success and a negative errno on failure, never throws: the
// caller decides what an error means (EINVAL from O_DIRECT is "file system without direct I/O").
class VerifyIo {
 public:
  virtual ~VerifyIo() = default;
  virtual int open(const std::string& path, int flags, unsigned mode = 0) = 0;  // fd
  virtual int close(int fd) = 0;
  virtual long pread(int fd, void* buf, std::size_t len, std::uint64_t offset) = 0;
  virtual long pwrite(int fd, const void* buf, std::size_t len, std::uint64_t offset) = 0;
  virtual int fsync(int fd) = 0;
  virtual int fallocate(int fd, std::uint64_t offset, std::uint64_t len) = 0;
  virtual int unlink(const std::string& path) = 0;
  virtual int stat(const std::string& path, FileStat& out) = 0;
  // What an open fd is: compared with what stat() saw when the path was checked, so that a path
  // swapped between the check and the open is refused.
  virtual int fstat(int fd, FileStat& out) = 0;
  // mmap(NULL, len, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0): the only mapping p2pmem/allocate
  // accepts. Sets `error` (negative errno) and returns nullptr on failure.
  virtual void* map_shared(int fd, std::size_t len, int& error) = 0;
  virtual int unmap(void* addr, std::size_t len) = 0;
};
std::unique_ptr<VerifyIo> open_live_io();

// dlopen/dlsym. Libraries stay loaded for the life of the process: GPU runtimes do not survive
// being unloaded and reloaded.
class DynamicLoader {
 public:
  virtual ~DynamicLoader() = default;
  // A handle, or nullptr with dlerror()'s text in `error`.
  virtual void* open(const std::string& name_or_path, std::string& error) = 0;
  virtual void* symbol(void* handle, const char* name) = 0;
  // The file the dynamic loader picked for `handle` (dlinfo), for reports; empty when unknown.
  virtual std::string path_of(void* handle) = 0;
};
std::unique_ptr<DynamicLoader> open_live_loader();

// The kernel's message ring (/dev/kmsg): what the kernel said while a transfer ran (nvme timeouts
// and resets, AER, IOMMU faults, p2pdma refusals).
class KernelLog {
 public:
  virtual ~KernelLog() = default;
  // Remembers the current end of the log; read_new() then returns only later messages. Returns
  // why the log cannot be read (not root, dmesg_restrict) or "" when it can.
  virtual std::string start() = 0;
  virtual std::vector<std::string> read_new() = 0;
};
std::unique_ptr<KernelLog> open_live_kernel_log();

// "6,1234,5678901,-;nvme nvme0: I/O 12 QID 3 timeout" -> "nvme nvme0: I/O 12 QID 3 timeout"
// (continuation lines " KEY=value" dropped).
std::string kmsg_text(std::string_view record);
// Messages worth showing beside a DMA test: PCI, NVMe, AER, IOMMU, P2PDMA, amdgpu AIS, p2pprobe.
bool kmsg_relevant(std::string_view text);

// errno as its name ("EREMOTEIO") and what it means for a P2P DMA test.
std::string errno_name(int err);
std::string errno_meaning(int err);

}  // namespace p2pcheck
