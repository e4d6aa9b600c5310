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
#include "p2pcheck/model/topology.h"
#include "p2pcheck/source/source.h"

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
  bool present = false;     // /sys/class/kfd/kfd/topology/nodes could be listed
  std::string problem;      // why not, or which file could not be read
  std::string not_carried;  // "not in this lspci output": the source's format has no KFD at all
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

// One small text attribute as a read step saw it: the trimmed text, or how the read failed. Kept
// with its path because the findings cite it either way.
struct TextFile {
  std::string path;
  ReadStatus status = ReadStatus::kMissing;
  std::string text;   // trimmed; empty unless read
  std::string error;  // kDenied / kFailed: what the OS said
  bool ok() const { return status == ReadStatus::kOk; }
};

// /proc/kallsyms, reduced to what the AIS probe needs (the file is megabytes).
struct Kallsyms {
  ReadStatus status = ReadStatus::kMissing;
  std::string error;
  bool empty = false;    // read, but nothing in it
  std::string ais_line;  // the line naming kfd_ais_rw_file; empty when none does
};

// The HIP runtime and hipFile libraries found in the usual directories.
struct LibraryScan {
  std::vector<std::string> looked;   // every directory looked in, in order
  std::vector<Evidence> listed;      // each with "absent" or "N entries"
  std::vector<std::string> hip;      // .../libamdhip64.so*
  std::vector<std::string> hipfile;  // .../libhipfile.so*
  std::string not_carried;           // the source's format holds no installed libraries ("not in this lspci output")
};

// What the GPU checks read. Each part is read only when the check will look at it, so a capture
// stores no more than the analysis needed.
struct GpuState {
  TextFile dmi_vendor, dmi_product;      // /sys/class/dmi/id/{sys_vendor,product_name}
  TextFile nvidia_version;               // with an NVIDIA GPU: /sys/module/nvidia/version
  TextFile nvidia_banner;                // and /proc/driver/nvidia/version
  bool amdgpu_in_sysfs = false;          // with an AMD GPU: /sys/module/amdgpu lists something
  TextFile amdgpu_version;               // and /sys/module/amdgpu/version
  KfdTopology kfd;                       // with amdgpu loaded
  Kallsyms kallsyms;                     // with amdgpu loaded
  std::map<Bdf, TextFile> vram_total;    // AMD GPUs the large-BAR check reaches: mem_info_vram_total
  std::map<Bdf, TextFile> vram_visible;  // and mem_info_vis_vram_total
  LibraryScan libraries;
};

// Reads DMI, the nvidia and amdgpu modules, KFD, /proc/kallsyms, the GPUs' VRAM sizes and the library
// directories, as far as the GPUs in `inv` make them matter.
GpuState read_gpu(Source& source, const Machine& machine, const Topology& topo, const Inventory& inv);

// Finding ids: gpu.virtualization, gpu.nvidia, gpu.amd (no AMD GPU), gpu.amdgpu_module, gpu.kfd,
// gpu.ais, and per AMD GPU (subject = BDF) gpu.driver, gpu.sriov_vf, gpu.apu, gpu.large_bar,
// gpu.ais_initialized; then gpu.hip_runtime and gpu.hipfile_library. Whether the HIP runtime exports
// hipAmdFileRead/hipAmdFileWrite needs dlopen and is left to verify time.
std::vector<Finding> check_gpu(const GpuState& gpu, const Machine& machine, const Topology& topo, const Inventory& inv);

}  // namespace p2pcheck
