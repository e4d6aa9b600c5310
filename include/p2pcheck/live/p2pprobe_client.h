// The userspace side of kmod/p2pprobe: asks the running kernel itself (pci_p2pdma_distance_many,
// dma_map_sgtable) through /dev/p2pprobe. A live-only action, so it sits behind its own small
// ioctl interface that tests fake; replay sources never reach it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "p2pcheck/model/pci.h"
#include "p2pcheck/rules/kernel_answers.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// The one system call the client makes. Returns 0 or a negative errno.
class IoctlDevice {
 public:
  virtual ~IoctlDevice() = default;
  virtual int ioctl(unsigned long request, void* arg) = 0;
  virtual std::string path() const = 0;
};

// Opens /dev/p2pprobe (or `path`). Throws Error naming the device and why (absent, needs root).
std::unique_ptr<IoctlDevice> open_ioctl_device(const std::string& path);

// DMA_TEST (kmod/uapi/p2pprobe.h): the module moves data between p2pmem of `provider` and `fd`.
struct DmaTestRequest {
  Bdf provider;              // an NVMe CMB (driver nvme) or a p2pprobe-bound device; others get -EPERM
  int fd = -1;               // regular file opened O_DIRECT, or a block device opened O_EXCL
  bool bio = false;          // submit_bio_wait() path (block devices only) instead of vfs_iocb_iter_*
  bool no_write = false;     // skip p2pmem -> storage: verify data userspace wrote with an ordinary write
  bool no_read = false;      // skip storage -> p2pmem: userspace verifies what the module wrote
  std::uint64_t offset = 0;  // P2PPROBE_DMA_ALIGN multiples; length at most P2PPROBE_DMA_MAX_LENGTH
  std::uint64_t length = 0;
  std::uint64_t seed = 0;
  std::uint32_t chunk_size = 0;  // 0 = the module picks
};

struct DmaDirection {
  bool ran = false;
  int error = 0;  // 0, or the negative errno of the first failure (-EREMOTEIO: the kernel refused the pair)
  std::uint64_t bytes = 0, ns = 0;
};

struct DmaMismatch {
  std::uint64_t offset = 0;  // absolute file/device offset of the first bad byte
  std::uint64_t count = 0;   // bad bytes
  std::uint8_t expected = 0, found = 0;
};

struct DmaTestResult {
  int ioctl_error = 0;  // the ioctl's own failure (-EPERM, -EOPNOTSUPP, -EINVAL, -ENODEV), 0 when the test ran
  std::uint32_t chunk_used = 0;
  bool target_has_pci = false, target_queue_p2pdma = false;
  int target_distance = -1;  // kernel distance provider <-> the PCI function under the target
  std::optional<Bdf> target_pci;
  DmaDirection write;  // p2pmem -> storage: the storage device reads the provider's BAR (a P2P read)
  DmaDirection read;   // storage -> p2pmem: the storage device writes the provider's BAR (a P2P write)
  std::optional<DmaMismatch> mismatch;
};

class P2pprobeClient {
 public:
  explicit P2pprobeClient(std::unique_ptr<IoctlDevice> device) : device_(std::move(device)) {}
  // GET_INFO; throws Error when the module does not answer or speaks another API version.
  ModuleInfo info();
  // VERDICT for the pair; throws Error on an ioctl failure (a missing device is -ENODEV).
  KernelVerdict verdict(const Bdf& provider, const Bdf& client);
  // DMA_TEST. Never throws for the test's own outcome: ioctl and I/O errors are in the result.
  DmaTestResult dma_test(const DmaTestRequest& request);
  std::string path() const { return device_->path(); }

 private:
  std::unique_ptr<IoctlDevice> device_;
};

// Asks `module` (null when absent; `problem` says why) for its info and each pair's verdict: what
// the CLI hands run_check (CheckOptions::ask_kernel_module) on a live machine.
ModuleAnswers ask_kernel_module(P2pprobeClient* module, const std::string& problem, const PairList& pairs);

}  // namespace p2pcheck
