#include "p2pcheck/live/p2pprobe_client.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sys/ioctl.h>

#include "p2pcheck/source/error.h"
#include "uapi/p2pprobe.h"

namespace p2pcheck {
namespace {

class DevIoctl : public IoctlDevice {
 public:
  DevIoctl(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~DevIoctl() override { close(fd_); }
  int ioctl(unsigned long request, void* arg) override {
    int rc;
    do rc = ::ioctl(fd_, request, arg);
    while (rc < 0 && errno == EINTR);
    return rc < 0 ? -errno : 0;
  }
  std::string path() const override { return path_; }

 private:
  int fd_;
  std::string path_;
};

p2pprobe_bdf to_uapi(const Bdf& bdf) {
  p2pprobe_bdf out{};
  out.domain = bdf.domain;
  out.bus = bdf.bus;
  out.devfn = bdf.devfn();
  return out;
}

std::string cstr(const char* text, size_t size) { return std::string(text, strnlen(text, size)); }

std::string errno_text(int negative_errno) { return std::strerror(-negative_errno); }

}  // namespace

std::unique_ptr<IoctlDevice> open_ioctl_device(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) throw Error(path, "not present: the p2pprobe module is not loaded (p2pcheck kmod load)");
    if (err == EACCES || err == EPERM) throw Error(path, "permission denied: the kernel module answers root only");
    throw Error(path, std::string("cannot open: ") + std::strerror(err));
  }
  return std::make_unique<DevIoctl>(fd, path);
}

ModuleInfo P2pprobeClient::info() {
  p2pprobe_info req{};
  req.size = sizeof req;
  req.version = P2PPROBE_API_VERSION;
  int rc = device_->ioctl(P2PPROBE_IOC_GET_INFO, &req);
  if (rc == -ENOTTY)
    throw Error(device_->path(), "GET_INFO not understood: not a p2pprobe device, or an incompatible module");
  if (rc < 0) throw Error(device_->path(), "GET_INFO failed: " + errno_text(rc));
  if (req.api_version != P2PPROBE_API_VERSION)
    throw Error(device_->path(), "module speaks p2pprobe API " + std::to_string(req.api_version) +
                                     ", p2pcheck speaks " + std::to_string(P2PPROBE_API_VERSION) +
                                     ": rebuild and reload kmod/");
  ModuleInfo info;
  info.api_version = req.api_version;
  info.p2pdma = req.flags & P2PPROBE_INFO_P2PDMA;
  info.provider_driver = req.flags & P2PPROBE_INFO_PROVIDER;
  info.module_version = cstr(req.module_version, sizeof req.module_version);
  info.kernel_release = cstr(req.kernel_release, sizeof req.kernel_release);
  return info;
}

KernelVerdict P2pprobeClient::verdict(const Bdf& provider, const Bdf& client) {
  p2pprobe_verdict req{};
  req.size = sizeof req;
  req.version = P2PPROBE_API_VERSION;
  req.provider = to_uapi(provider);
  req.client = to_uapi(client);
  req.client_bdev_fd = -1;
  int rc = device_->ioctl(P2PPROBE_IOC_VERDICT, &req);
  if (rc < 0)
    throw Error(device_->path(), "VERDICT " + provider.str() + " -> " + client.str() + " failed: " + errno_text(rc));
  KernelVerdict v;
  v.distance = req.distance;
  switch (req.map_type) {
    case P2PPROBE_MAP_BUS_ADDR: v.map_type = MapType::kBusAddr; break;
    case P2PPROBE_MAP_THRU_HOST_BRIDGE: v.map_type = MapType::kThruHostBridge; break;
    case P2PPROBE_MAP_NOT_SUPPORTED: v.map_type = MapType::kNotSupported; break;
    default: v.map_type = MapType::kUnknown; break;
  }
  switch (req.map_reason) {
    case P2PPROBE_MAP_REASON_PROBED: break;
    case P2PPROBE_MAP_REASON_NOT_REQUESTED: v.map_note = "not requested"; break;
    case P2PPROBE_MAP_REASON_NO_P2PDMA: v.map_note = "kernel without CONFIG_PCI_P2PDMA"; break;
    case P2PPROBE_MAP_REASON_NO_P2PMEM: v.map_note = "the provider registered no p2pmem"; break;
    case P2PPROBE_MAP_REASON_NOT_ALLOWED:
      v.map_note = "the provider's memory belongs to another driver (never touched)";
      break;
    case P2PPROBE_MAP_REASON_ALLOC_FAILED: v.map_note = "the provider's p2pmem pool is exhausted"; break;
    default: v.map_note = "mapping failed: " + errno_text(req.map_errno); break;
  }
  v.provider_has_p2pmem = req.provider_flags & P2PPROBE_PROV_HAS_P2PMEM;
  v.provider_driver = cstr(req.provider_driver, sizeof req.provider_driver);
  v.client_driver = cstr(req.client_driver, sizeof req.client_driver);
  return v;
}

DmaTestResult P2pprobeClient::dma_test(const DmaTestRequest& r) {
  p2pprobe_dma_test req{};
  req.size = sizeof req;
  req.version = P2PPROBE_API_VERSION;
  req.provider = to_uapi(r.provider);
  req.fd = r.fd;
  req.flags = (r.bio ? P2PPROBE_DMA_F_BIO : 0u) | (r.no_write ? P2PPROBE_DMA_F_NO_WRITE : 0u) |
              (r.no_read ? P2PPROBE_DMA_F_NO_READ : 0u);
  req.offset = r.offset;
  req.length = r.length;
  req.seed = r.seed;
  req.chunk_size = r.chunk_size;
  DmaTestResult out;
  out.ioctl_error = device_->ioctl(P2PPROBE_IOC_DMA_TEST, &req);
  if (out.ioctl_error < 0) return out;
  out.chunk_used = req.chunk_used;
  out.target_has_pci = req.target_flags & P2PPROBE_TARGET_HAS_PCI;
  out.target_queue_p2pdma = req.target_flags & P2PPROBE_TARGET_QUEUE_P2PDMA;
  out.target_distance = req.target_distance;
  if (out.target_has_pci)
    out.target_pci =
        Bdf{req.target_pci.domain, req.target_pci.bus, static_cast<std::uint8_t>(req.target_pci.devfn >> 3),
            static_cast<std::uint8_t>(req.target_pci.devfn & 7)};
  auto dir = [](const p2pprobe_dir_result& d) { return DmaDirection{d.ran != 0, d.error, d.bytes, d.ns}; };
  out.write = dir(req.write);
  out.read = dir(req.read);
  if (req.mismatch.offset != P2PPROBE_NO_MISMATCH)
    out.mismatch = DmaMismatch{req.mismatch.offset, req.mismatch.count, req.mismatch.expected, req.mismatch.found};
  return out;
}

ModuleAnswers ask_kernel_module(P2pprobeClient* module, const std::string& problem, const PairList& pairs) {
  ModuleAnswers answers;
  answers.not_asked_why = problem;
  if (!module) return answers;
  answers.asked = true;
  answers.device = module->path();
  try {
    answers.info = module->info();
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const DevicePair& pair = pairs.pair(i);
      answers.verdicts[{pair.gpu, pair.nvme}] = module->verdict(pair.gpu, pair.nvme);
    }
  } catch (const Error& e) {
    answers.error = e.what();
  }
  return answers;
}

}  // namespace p2pcheck
