// What gpu_read.cc and gpu.cc share. The read step reads only what the check will look at (a
// capture stores exactly what was read), so both ask the same questions through these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/checks/gpu.h"

namespace p2pcheck::gpu_steps {

constexpr std::uint16_t kVendorAmd = 0x1002, kVendorNvidia = 0x10de, kVendorVirtio = 0x1af4;
constexpr int kHeapFbPublic = 1, kHeapFbPrivate = 2;  // HSA_MEM_HEAP_TYPE_* (kfd_topology.h)
constexpr std::uint64_t kIoLinkXgmi = 11;             // HSA_IOLINK_TYPE_XGMI
constexpr std::uint64_t kSmallBar = 256ull << 20;     // the legacy aperture firmware gives without ReBAR

std::optional<std::uint64_t> parse_u64(std::string_view text);
// "not present", "not readable (...): needs root", "read failed (...)" for evidence.
std::string why_unread(ReadStatus status, const std::string& error);

struct GpusByVendor {
  std::vector<const Function*> amd;
  std::vector<Bdf> nvidia;
};
GpusByVendor gpus_by_vendor(const Topology& topo, const Inventory& inv);

struct AmdgpuModule {
  bool loaded = false;
  bool builtin = false;
  bool known = true;
  std::string version;  // /sys/module/amdgpu/version; empty for in-tree builds
  std::optional<std::uint64_t> build;
};
// Loaded per /proc/modules, /sys/module/amdgpu, or a GPU bound to it.
AmdgpuModule amdgpu_module(const Machine& machine, const std::vector<const Function*>& amd, bool in_sysfs,
                           const std::string& version);

Finding make(const std::string& id, Level level, const std::string& subject, const std::string& message);

// One AMD GPU's findings (gpu_device.cc): driver, VF, APU, large BAR, AIS initialized. `from_dump`:
// read from a capture or dump, so a fix asks the owner rather than telling us to run as root.
void add_amd_gpu_findings(const GpuState& gpu, const Function& fn, const AmdgpuModule& module, bool from_dump,
                          std::vector<Finding>& out);

// gpu.apu when the GPU is integrated or CPU-attached (kfd_ais_init refuses those); such a GPU gets
// no large-BAR check, so its VRAM files are not read.
std::optional<Finding> apu_finding(const Function& fn, const KfdNode* node);

}  // namespace p2pcheck::gpu_steps
