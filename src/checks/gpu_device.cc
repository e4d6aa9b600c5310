// Each AMD GPU's findings over what read_gpu read: its driver, then the first thing that rules it out
// (SR-IOV VF, APU or CPU-attached), else large BAR and whether amdgpu initialized AIS for it.
#include <cstdio>

#include "gpu_steps.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

using namespace gpu_steps;

namespace {

// APUs by gfx target (integrated GPUs share system memory; kfd_ais_init refuses AMD_IS_APU).
// Source: LLVM AMDGPUUsage "AMDGPU Processors" table, entries marked APU. gfx94x is left out:
// MI300A and MI300X share gfx942, and MI300A is caught by its xGMI link to the CPU instead.
struct ApuTarget {
  std::uint64_t gfx_target_version;
  const char* family;
};
constexpr ApuTarget kApuTargets[] = {
    {70000, "Kaveri"},
    {70003, "Kabini/Mullins"},
    {80001, "Carrizo"},
    {80100, "Stoney"},
    {90002, "Raven"},
    {90009, "Raven2"},
    {90012, "Renoir/Cezanne"},
    {100103, "Cyan Skillfish"},
    {100303, "Van Gogh"},
    {100305, "Rembrandt"},
    {100306, "Raphael"},
    {100307, "Mendocino"},
    {110003, "Phoenix"},
    {110500, "Strix Point"},
    {110501, "Strix Halo"},
    {110502, "Krackan"},
    {110503, "Strix (gfx1153)"},
};

// Whether all VRAM is CPU/peer visible (hipFile needs it: kfd_ais_init's is_large_bar), and on what
// it was decided: the first basis with its facts present wins, most direct first.
enum class BarBasis {
  kBarVsVram,       // the largest memory BAR against the VRAM size (KFD node or mem_info_vram_total)
  kVisibleVram,     // amdgpu's mem_info_vis_vram_total against mem_info_vram_total
  kResizableBar,    // VRAM size unknown: the Resizable BAR capability's current size against its largest
  kLegacyAperture,  // a BAR of 256 MiB or less: the legacy aperture, smaller than any discrete GPU's VRAM
  kNotCarried,      // the dump does not carry the sizes, and there is no Resizable BAR to read
  kUnknown,         // nothing read decides it (no KFD node, no amdgpu attributes, no capability)
};

struct LargeBarFacts {
  BarBasis basis = BarBasis::kUnknown;
  bool large = false;
  std::optional<Bar> bar;  // the largest memory BAR
  std::uint64_t vram = 0, visible = 0;
  const ResizableBar* rebar = nullptr;
  std::uint64_t rebar_largest = 0;
  std::vector<Evidence> evidence;
};

LargeBarFacts decide_large_bar(const GpuState& gpu, const Function& fn, const KfdNode* node) {
  LargeBarFacts facts;
  facts.bar = fn.largest_mem_bar();
  const std::optional<Bar>& bar = facts.bar;
  if (bar)
    facts.evidence.push_back(
        {fn.sysfs_path + "/resource", "BAR" + std::to_string(bar->index) + " " + format_size(bar->size)});
  std::optional<std::uint64_t> vram;
  if (node && node->vram_bytes) {
    vram = node->vram_bytes;
    facts.evidence.push_back(
        {node->vram_file, "size_in_bytes " + std::to_string(*node->vram_bytes) +
                              (node->vram_heap_type ? " heap_type " + std::to_string(*node->vram_heap_type) : "")});
  }
  const TextFile& total_file = gpu.vram_total.at(fn.bdf);
  const std::string& vis_text = gpu.vram_visible.at(fn.bdf).text;
  auto total = parse_u64(total_file.text), visible = parse_u64(vis_text);
  if (!vram && total) {
    vram = total;
    facts.evidence.push_back({fn.sysfs_path + "/mem_info_vram_total", total_file.text});
  }
  if (bar && vram) {
    facts.basis = BarBasis::kBarVsVram;
    facts.vram = *vram;
    // amdgpu itself reports FB_PRIVATE when part of VRAM is outside the BAR.
    facts.large = bar->size >= *vram && !(node && node->vram_heap_type == kHeapFbPrivate);
  } else if (visible && total) {
    facts.basis = BarBasis::kVisibleVram;
    facts.vram = *total;
    facts.visible = *visible;
    facts.large = *visible >= *total;
    facts.evidence.push_back({fn.sysfs_path + "/mem_info_vis_vram_total", vis_text});
  } else if (fn.rebar_presence == Presence::kPresent && !fn.rebar.empty()) {
    facts.basis = BarBasis::kResizableBar;
    facts.rebar = &fn.rebar.front();
    if (bar)
      for (const auto& r : fn.rebar)
        if (r.bar == bar->index) facts.rebar = &r;
    const ResizableBar& rb = *facts.rebar;
    facts.rebar_largest = rb.supported_sizes.empty() ? rb.current_size : rb.supported_sizes.back();
    facts.large = rb.current_size >= facts.rebar_largest;
    facts.evidence.push_back({fn.sysfs_path + "/config", "Resizable BAR" + std::to_string(rb.bar) + ": current " +
                                                             format_size(rb.current_size) + ", largest supported " +
                                                             format_size(facts.rebar_largest)});
  } else if (bar && bar->size <= kSmallBar) {
    facts.basis = BarBasis::kLegacyAperture;
  } else if (total_file.status == ReadStatus::kNotCarried && !bar) {
    facts.basis = BarBasis::kNotCarried;
    facts.evidence = {{fn.sysfs_path + "/mem_info_vram_total", total_file.error}};
  }
  return facts;
}

Finding large_bar_finding(const GpuState& gpu, const Function& fn, const KfdNode* node, bool from_dump) {
  LargeBarFacts facts = decide_large_bar(gpu, fn, node);
  Finding f = make("gpu.large_bar", Level::kPass, fn.bdf.str(), "");
  f.evidence = facts.evidence;
  std::string bar_name = facts.bar ? "BAR" + std::to_string(facts.bar->index) : "";
  std::string bar_size = facts.bar ? format_size(facts.bar->size) : "";
  std::string rebar_name = facts.rebar ? "Resizable BAR" + std::to_string(facts.rebar->bar) : "";
  switch (facts.basis) {
    case BarBasis::kBarVsVram:
      f.message =
          facts.large
              ? "large BAR: " + bar_name + " " + bar_size + " covers all " + format_size(facts.vram) + " of VRAM"
              : "small BAR: " + bar_name + " " + bar_size + " shows only part of " + format_size(facts.vram) +
                    " VRAM; amdgpu registers P2P memory (AIS) only on large-BAR GPUs";
      break;
    case BarBasis::kVisibleVram:
      f.message = facts.large ? "large BAR: all " + format_size(facts.vram) + " of VRAM is CPU-visible"
                              : "small BAR: only " + format_size(facts.visible) + " of " + format_size(facts.vram) +
                                    " VRAM is CPU-visible";
      break;
    case BarBasis::kResizableBar:
      f.message = facts.large
                      ? "VRAM size unknown; " + rebar_name + " is at its largest size, " +
                            format_size(facts.rebar->current_size)
                      : rebar_name + " is " + format_size(facts.rebar->current_size) + " though the GPU supports " +
                            format_size(facts.rebar_largest) + ": not all VRAM is visible";
      break;
    case BarBasis::kLegacyAperture:
      f.message = bar_name + " is " + bar_size + ", the legacy small aperture: a discrete GPU has more VRAM than that";
      break;
    case BarBasis::kNotCarried: {
      const std::string& not_carried = gpu.vram_total.at(fn.bdf).error;
      f.level = Level::kUnknown;
      f.not_carried = not_carried;
      f.message = "whether all VRAM is visible is unknown: BAR and VRAM sizes are " + not_carried +
                  " and there is no Resizable BAR capability to read";
      f.fix = kNotCarriedFix;
      return f;
    }
    case BarBasis::kUnknown:
      f.level = Level::kUnknown;
      f.message = std::string("whether all VRAM is visible is unknown: ") +
                  (facts.bar ? bar_name + " is " + bar_size : "no memory BAR read") +
                  ", no VRAM size (no KFD node or mem_info_vram_total) and no Resizable BAR capability" +
                  (fn.config_note.empty() ? "" : " (" + fn.config_note + ")");
      f.fix = as_root_fix(from_dump, "with amdgpu loaded");
      return f;
  }
  if (!facts.large) {
    f.level = Level::kFail;
    f.fix =
        "enable Resizable BAR / Above 4G decoding in firmware; cost: a firmware setting and a reboot (CSM/legacy "
        "boot may have to be off, and the platform must have 64-bit MMIO room for the BAR)";
  }
  return f;
}

Finding driver_finding(const Function& fn) {
  const std::string who = fn.bdf.str();
  Finding drv = make("gpu.driver", Level::kPass, who, "bound to amdgpu");
  if (!fn.driver_not_carried.empty()) {
    drv.level = Level::kUnknown;
    drv.not_carried = fn.driver_not_carried;
    drv.message = "which driver is bound is " + fn.driver_not_carried + ": hipFile needs amdgpu";
    drv.evidence.push_back({fn.sysfs_path + "/driver", fn.driver_not_carried});
    drv.fix = kNotCarriedFix;
    return drv;
  }
  drv.evidence.push_back({fn.sysfs_path + "/driver", fn.driver.empty() ? "no driver" : fn.driver});
  if (fn.driver != "amdgpu") {
    drv.level = Level::kFail;
    drv.message = fn.driver.empty() ? "no driver bound: hipFile needs amdgpu"
                                    : "bound to " + fn.driver + ", not amdgpu: hipFile needs amdgpu";
    drv.fix = fn.driver.empty()
                  ? "load amdgpu (modprobe amdgpu); cost: none"
                  : "unbind it from " + fn.driver + " (echo " + who + " > /sys/bus/pci/drivers/" + fn.driver +
                        "/unbind) and bind amdgpu; cost: whatever " + fn.driver + " provided" +
                        (fn.driver == "vfio-pci" ? " (the GPU leaves its virtual machine)" : "");
  }
  return drv;
}

Finding sriov_vf_finding(const Function& fn) {
  Finding f = make("gpu.sriov_vf", Level::kFail, fn.bdf.str(),
                   "SR-IOV virtual function of " + fn.physfn->str() +
                       ": hipFile needs the physical function "
                       "(amdgpu does not set up AIS on a VF)");
  f.evidence.push_back({fn.sysfs_path + "/physfn", fn.physfn->str()});
  f.fix = "run on the physical function (the host, with the PF bound to amdgpu); cost: gives up SR-IOV partitioning";
  return f;
}

Finding no_kfd_node_finding(const Function& fn) {
  const std::string who = fn.bdf.str();
  Finding f = make("gpu.kfd", Level::kWarn, who,
                   "no KFD node maps to this GPU: ROCm does not use it (unsupported by "
                   "KFD, or a display-only GPU)");
  f.evidence.push_back({"/sys/class/kfd/kfd/topology/nodes", "no node with domain/location_id of " + who});
  f.fix = "check that the GPU is supported by ROCm; cost: none";
  return f;
}

// Only amdgpu DKMS builds newer than kAisCapabilityMinBuild say "AIS initialized" in bit 0x40.
Finding ais_initialized_finding(const Function& fn, const KfdNode& node, const AmdgpuModule& module) {
  std::uint64_t cap = node.prop("capability");
  Finding f = make("gpu.ais_initialized", Level::kPass, fn.bdf.str(),
                   "amdgpu initialized AIS for this GPU (capability bit 0x40)");
  f.evidence.push_back({node.dir + "/properties", "capability 0x" + hex(cap)});
  f.evidence.push_back({"/sys/module/amdgpu/version", module.version});
  if (!(cap & kKfdCapAisInitialized)) {
    f.level = Level::kFail;
    f.message =
        "amdgpu did not initialize AIS for this GPU (capability bit 0x40 clear): it needs CONFIG_PCI_P2PDMA, "
        "a large-BAR dGPU that is not an SR-IOV VF nor xGMI-attached to the CPU";
    f.fix =
        "fix what the kernel, large-BAR and GPU findings report, then reload amdgpu or reboot; cost: per those "
        "findings";
  }
  return f;
}

// One AMD GPU: its driver, then the first thing that rules it out (VF, APU), else large BAR and AIS.
}  // namespace

void gpu_steps::add_amd_gpu_findings(const GpuState& gpu, const Function& fn, const AmdgpuModule& module,
                                     bool from_dump, std::vector<Finding>& out) {
  out.push_back(driver_finding(fn));
  if (fn.is_virtfn()) {
    out.push_back(sriov_vf_finding(fn));
    return;
  }
  const KfdNode* node = gpu.kfd.present ? gpu.kfd.gpu_node(fn.bdf) : nullptr;
  if (gpu.kfd.present && !node && fn.driver == "amdgpu") out.push_back(no_kfd_node_finding(fn));
  if (auto apu = apu_finding(fn, node)) {
    out.push_back(std::move(*apu));
    return;
  }
  out.push_back(large_bar_finding(gpu, fn, node, from_dump));
  if (node && module.build && *module.build > kAisCapabilityMinBuild)
    out.push_back(ais_initialized_finding(fn, *node, module));
}

// Integrated GPUs and CPU-attached ones: kfd_ais_init refuses AMD_IS_APU and xgmi.connected_to_cpu.
std::optional<Finding> gpu_steps::apu_finding(const Function& fn, const KfdNode* node) {
  std::string why;
  std::vector<Evidence> ev;
  if (node) {
    auto gfx = node->prop("gfx_target_version");
    if (node->prop("cpu_cores_count") > 0) {
      why = "its KFD node also holds CPU cores (a combined APU node)";
      ev.push_back({node->dir + "/properties", "cpu_cores_count " + std::to_string(node->prop("cpu_cores_count"))});
    } else if (node->xgmi_to_cpu) {
      why = "its memory is attached to the CPU over xGMI (an APU such as MI300A, or a CPU-attached GPU)";
      ev.push_back({node->dir + "/io_links", "xGMI (type 11) link to a CPU node"});
    } else if (node->mem_banks_read > 0 && (!node->vram_bytes || *node->vram_bytes == 0)) {
      // Only banks that were read and hold no frame buffer say "no VRAM"; no banks at all says nothing.
      why = "its KFD node has no dedicated VRAM";
      ev.push_back({node->dir + "/mem_banks", "no frame-buffer bank"});
    } else {
      for (const auto& t : kApuTargets)
        if (t.gfx_target_version == gfx) {
          why = gfx_name(gfx) + " is an APU (" + t.family + ")";
          ev.push_back({node->dir + "/properties", "gfx_target_version " + std::to_string(gfx)});
        }
    }
  }
  auto bar = fn.largest_mem_bar();
  if (why.empty() && fn.port_type == PortType::kRcIntegratedEndpoint) {
    why = "it is a root-complex integrated endpoint";
    ev.push_back({fn.sysfs_path + "/config", "PCIe port type: root complex integrated endpoint"});
  } else if (why.empty() && !fn.parent && bar && bar->size <= 2 * kSmallBar) {
    why = "it sits on the root bus with a " + format_size(bar->size) + " BAR";
    ev.push_back({fn.sysfs_path, "on root bus " + fn.host_bridge});
    ev.push_back({fn.sysfs_path + "/resource", "BAR" + std::to_string(bar->index) + " " + format_size(bar->size)});
  }
  if (why.empty()) return std::nullopt;
  Finding f = make("gpu.apu", Level::kFail, fn.bdf.str(), "integrated GPU: " + why + "; hipFile needs a dGPU");
  f.evidence = ev;
  f.fix = "use a discrete AMD GPU with large BAR; cost: hardware";
  return f;
}

}  // namespace p2pcheck
