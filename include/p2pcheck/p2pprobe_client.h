// The userspace side of kmod/p2pprobe: asks the running kernel itself (pci_p2pdma_distance_many,
// dma_map_sgtable) through /dev/p2pprobe. A live-only action, so it sits behind its own small
// ioctl interface that tests fake; replay sources never reach it.
#pragma once

#include <memory>
#include <string>

#include "p2pcheck/pci.h"
#include "p2pcheck/verdict.h"

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

struct ModuleInfo {
  unsigned api_version = 0;
  bool p2pdma = false;        // the module's kernel has CONFIG_PCI_P2PDMA
  bool provider_driver = false;
  std::string module_version, kernel_release;
};

class P2pprobeClient {
 public:
  explicit P2pprobeClient(std::unique_ptr<IoctlDevice> device) : device_(std::move(device)) {}
  // GET_INFO; throws Error when the module does not answer or speaks another API version.
  ModuleInfo info();
  // VERDICT for the pair; throws Error on an ioctl failure (a missing device is -ENODEV).
  KernelVerdict verdict(const Bdf& provider, const Bdf& client);
  std::string path() const { return device_->path(); }

 private:
  std::unique_ptr<IoctlDevice> device_;
};

// "Agree" as the kmod issue defines it: same distance, same supported-or-not, and the same map
// type where the module could observe it.
bool agrees(const PairDecision& ours, const KernelVerdict& kernel);

}  // namespace p2pcheck
