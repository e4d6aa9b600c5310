// The GPU side of hipFile's fastpath: amdgpu with AIS, KFD, a large-BAR discrete GPU, the HIP
// runtime and hipFile libraries; plus NVIDIA GPUs and virtualization, which change what a verdict means.
//
// amdgpu's kfd_ais_init() registers VRAM (BAR0) as P2P memory only for a large-BAR dGPU that is not
// an APU, not an SR-IOV VF and not xGMI-connected to the CPU; ais-check probes kfd_ais_rw_file in
// /proc/kallsyms (facts §6).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/source.h"
#include "p2pcheck/model/topology.h"

namespace p2pcheck {

// One node of /sys/class/kfd/kfd/topology/nodes: a CPU (simd_count 0) or a GPU.
struct KfdNode {
  int id = -1;
  std::string dir;                                  // /sys/class/kfd/kfd/topology/nodes/1
  std::map<std::string, std::uint64_t> properties;  // the `properties` file, key -> value
  std::optional<Bdf> bdf;                           // GPU nodes: from `domain` and `location_id` (bus << 8 | devfn)
  std::optional<std::uint64_t> vram_bytes;          // sum of frame-buffer mem_banks' size_in_bytes
  std::optional<int> vram_heap_type;                // 1 FB_PUBLIC (all VRAM CPU-visible), 2 FB_PRIVATE
  std::string vram_file;                            // the mem_banks properties file the size came from
  bool xgmi_to_cpu = false;                         // an io_link of type xGMI (11) to a CPU node
  int mem_banks_read = 0;                           // mem_banks whose properties could be read

  std::uint64_t prop(const std::string& key) const;  // 0 when absent
  bool is_gpu() const { return prop("simd_count") != 0; }
};

struct KfdTopology {
  bool present = false;   // /sys/class/kfd/kfd/topology/nodes could be listed
  std::string problem;    // why not, or which file could not be read
  std::vector<KfdNode> nodes;
  const KfdNode* gpu_node(const Bdf& bdf) const;
};

KfdTopology read_kfd(Source& source);

// ROCm's amdgpu DKMS builds carry a build number after the first '-' of the module version:
// "6.16.13-2278356.24.04" -> 2278356. nullopt for anything else (in-tree modules have no version).
std::optional<std::uint64_t> amdgpu_dkms_build(const std::string& module_version);

// The KFD node `capability` bit 0x40 means "AIS initialized" only on amdgpu DKMS builds newer than
// this; on upstream kernels the same bit is HSA_CAP_VA_LIMIT and must not be read as AIS.
inline constexpr std::uint64_t kAisCapabilityMinBuild = 2327936;
inline constexpr std::uint64_t kKfdCapAisInitialized = 0x40;

// "gfx1103" from gfx_target_version 110003 (major*10000 + minor*100 + stepping; minor and stepping hex).
std::string gfx_name(std::uint64_t gfx_target_version);

// Finding ids: gpu.virtualization, gpu.nvidia, gpu.amd (no AMD GPU), gpu.amdgpu_module, gpu.kfd,
// gpu.ais, and per AMD GPU (subject = BDF) gpu.driver, gpu.sriov_vf, gpu.apu, gpu.large_bar,
// gpu.ais_initialized; then gpu.hip_runtime and gpu.hipfile_library. Whether the HIP runtime exports
// hipAmdFileRead/hipAmdFileWrite needs dlopen and is left to verify time.
std::vector<Finding> check_gpu_stack(Source& source, const Machine& machine, const Topology& topo, const Inventory& inv);

}  // namespace p2pcheck
