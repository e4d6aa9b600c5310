#include "p2pcheck/verify/verify_engine.h"

#include <set>

namespace p2pcheck {

const char* to_string(EngineKind kind) {
  switch (kind) {
    case EngineKind::kHipfile: return "hipfile";
    case EngineKind::kKmod: return "kmod";
    case EngineKind::kP2pmem: return "p2pmem";
  }
  return "?";
}

std::optional<EngineKind> parse_engine_kind(std::string_view text) {
  if (text == "hipfile") return EngineKind::kHipfile;
  if (text == "kmod") return EngineKind::kKmod;
  if (text == "p2pmem") return EngineKind::kP2pmem;
  return std::nullopt;
}

const char* to_string(Direction d) { return d == Direction::kToDevice ? "to_device" : "to_storage"; }

std::optional<Direction> parse_direction(std::string_view text) {
  if (text == "to-device" || text == "to_device") return Direction::kToDevice;
  if (text == "to-storage" || text == "to_storage") return Direction::kToStorage;
  return std::nullopt;
}

const char* to_string(PathProof p) {
  switch (p) {
    case PathProof::kProven: return "proven";
    case PathProof::kFallback: return "fallback";
    case PathProof::kUnproven: return "unproven";
  }
  return "?";
}

bool is_gpu_driver(const std::string& driver) {
  // The drivers that register (or may register) their VRAM BAR as p2pmem or manage it themselves.
  static const std::set<std::string> gpu = {"amdgpu", "radeon", "nvidia", "nouveau", "i915", "xe", "habanalabs"};
  return gpu.count(driver) > 0;
}

namespace {

std::string bound_to(const Function& fn) { return fn.driver.empty() ? "bound to no driver" : "bound to " + fn.driver; }

// kmod and p2pmem: only memory that nothing else manages (facts §4).
std::string provider_memory_refusal(const Function& fn, EngineKind kind) {
  const std::string who = fn.bdf.str() + " is " + bound_to(fn);
  if (is_gpu_driver(fn.driver))
    return who + ": its P2P memory belongs to the GPU driver's memory manager, and handing it out through " +
           to_string(kind) + " corrupts GPU memory; " + to_string(kind) +
           " uses only NVMe CMBs (driver nvme) and devices bound to p2pprobe";
  if (fn.driver != "nvme" && fn.driver != "p2pprobe")
    return who + ": " + std::string(to_string(kind)) +
           " uses only NVMe CMBs (driver nvme) and devices bound to p2pprobe (kmod/README.md, \"Binding a provider\")";
  if (!fn.p2pmem)
    return who + " but registered no p2pmem (no p2pmem/ in sysfs): " +
           (fn.driver == "nvme" ? "the NVMe has no usable CMB (needs CMBSZ with WDS and RDS, 2 MiB aligned) or the "
                                  "kernel lacks CONFIG_PCI_P2PDMA"
                                : "the kernel lacks CONFIG_PCI_P2PDMA or the BAR could not be registered");
  if (kind == EngineKind::kP2pmem && !fn.p2pmem->has_allocate)
    return fn.bdf.str() +
           " has p2pmem but no p2pmem/allocate: userspace mapping needs kernel 6.2 or newer (use "
           "--engine kmod)";
  return "";
}

}  // namespace

EngineChoice choose_engine(const Function& provider, std::optional<EngineKind> requested) {
  const bool amd_gpu = provider.driver == "amdgpu";
  if (requested == EngineKind::kHipfile || (!requested && is_gpu_driver(provider.driver))) {
    if (amd_gpu) return {EngineKind::kHipfile, ""};
    if (is_gpu_driver(provider.driver))
      return {std::nullopt, provider.bdf.str() + " is " + bound_to(provider) +
                                ": p2pcheck verify drives AMD's hipFile only (NVIDIA GPUDirect Storage is not driven)"};
    return {std::nullopt,
            "hipfile needs an AMD GPU bound to amdgpu; " + provider.bdf.str() + " is " + bound_to(provider)};
  }
  if (requested) {
    std::string refusal = provider_memory_refusal(provider, *requested);
    if (!refusal.empty()) return {std::nullopt, refusal};
    return {*requested, ""};
  }
  // Auto for a CMB or p2pprobe provider: userspace p2pmem when the kernel can map it, else the module.
  std::string refusal = provider_memory_refusal(provider, EngineKind::kKmod);
  if (!refusal.empty()) return {std::nullopt, refusal};
  return {provider.p2pmem->has_allocate ? EngineKind::kP2pmem : EngineKind::kKmod, ""};
}

}  // namespace p2pcheck
