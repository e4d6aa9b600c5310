#include "p2pcheck/verify/verify_kmod.h"

#include <algorithm>
#include <cerrno>

#include "uapi/p2pprobe.h"

namespace p2pcheck {
namespace {

class KmodEngine : public VerifyEngine {
 public:
  explicit KmodEngine(std::shared_ptr<P2pprobeClient> client) : client_(std::move(client)) {}
  EngineKind kind() const override { return EngineKind::kKmod; }

  TransferResult transfer(const TransferRequest& r) override {
    TransferResult out;
    const bool to_device = r.direction == Direction::kToDevice;
    const std::uint64_t end = r.target.offset + r.target.size;
    for (std::uint64_t at = r.target.offset; at < end;) {
      // One ioctl moves at most P2PPROBE_DMA_MAX_LENGTH; the module chunks inside it.
      std::uint64_t n = std::min<std::uint64_t>(P2PPROBE_DMA_MAX_LENGTH, end - at);
      DmaTestRequest req;
      req.provider = r.provider;
      req.fd = r.target.fd;
      // Each direction alone: the other half is ordinary host I/O done by the runner.
      req.no_write = to_device;
      req.no_read = !to_device;
      req.offset = at;
      req.length = n;
      req.seed = r.seed;
      req.chunk_size = static_cast<std::uint32_t>(std::min<std::uint64_t>(r.chunk, P2PPROBE_DMA_MAX_CHUNK));
      DmaTestResult res = client_->dma_test(req);
      if (res.ioctl_error < 0) {
        out.error = res.ioctl_error;
        out.error_text = "DMA_TEST ioctl on " + client_->path() + " failed";
        return out;
      }
      if (at == r.target.offset) describe_target(res, r, out);
      const DmaDirection& d = to_device ? res.read : res.write;
      out.bytes += d.bytes;
      out.ns += d.ns;
      if (to_device) merge_mismatch(out.mismatch, mismatch_of(res));
      if (!d.ran) {
        out.error = -EINVAL;
        out.error_text = "the module skipped the transfer";
        return out;
      }
      if (d.error < 0) {
        out.error = d.error;
        return out;
      }
      at += n;
    }
    return out;
  }

 private:
  static std::optional<DataMismatch> mismatch_of(const DmaTestResult& res) {
    if (!res.mismatch) return std::nullopt;
    return DataMismatch{res.mismatch->offset, res.mismatch->count, res.mismatch->expected, res.mismatch->found};
  }

  // What the module saw of the target: the PCI function under it and the kernel's distance to it.
  static void describe_target(const DmaTestResult& res, const TransferRequest& r, TransferResult& out) {
    if (res.chunk_used) out.notes.push_back("module p2pmem buffers: 2 x " + format_size(res.chunk_used));
    if (!res.target_pci) return;
    std::string line = "the kernel finds " + res.target_pci->str() + " under the target; distance " +
                       std::to_string(res.target_distance) + (res.target_distance < 0 ? " (not supported)" : "") +
                       "; its queue " + (res.target_queue_p2pdma ? "accepts" : "does not accept") + " P2P pages";
    if (*res.target_pci != r.client) line += " (expected " + r.client.str() + ")";
    out.notes.push_back(line);
  }

  std::shared_ptr<P2pprobeClient> client_;
};

}  // namespace

std::shared_ptr<VerifyEngine> make_kmod_engine(std::shared_ptr<P2pprobeClient> client) {
  return std::make_shared<KmodEngine>(std::move(client));
}

}  // namespace p2pcheck
