// The GPU checks over what read_gpu read: virtualization, NVIDIA, the amdgpu module, KFD, AIS and the
// HIP runtime and hipFile libraries; each AMD GPU's own findings are in gpu_device.cc.
#include "p2pcheck/checks/gpu.h"

#include <algorithm>
#include <cstdio>

#include "gpu_steps.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

using namespace gpu_steps;

namespace {

// Virtual-machine DMI strings, matched as prefixes of sys_vendor or product_name.
// Source: systemd src/basic/virt.c (detect_vm_dmi_vendor table).
struct DmiVm {
  const char* prefix;
  const char* hypervisor;
};
constexpr DmiVm kDmiVms[] = {
    {"KVM", "KVM"},
    {"OpenStack", "OpenStack"},
    {"KubeVirt", "KubeVirt"},
    {"Amazon EC2", "Amazon EC2"},
    {"QEMU", "QEMU"},
    {"VMware", "VMware"},
    {"VMW", "VMware"},
    {"innotek GmbH", "VirtualBox"},
    {"VirtualBox", "VirtualBox"},
    {"Xen", "Xen"},
    {"Bochs", "Bochs"},
    {"Parallels", "Parallels"},
    {"BHYVE", "bhyve"},
    {"Hyper-V", "Hyper-V"},
    {"Apple Virtualization", "Apple Virtualization"},
    {"Google Compute Engine", "Google Compute Engine"},
};

bool cmdline_has(const Machine& m, std::string_view word) {
  std::string_view rest = m.cmdline;
  for (std::string_view w = next_word(rest); !w.empty(); w = next_word(rest))
    if (w.substr(0, word.size()) == word && (w.size() == word.size() || w[word.size()] == '=')) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------

// The hypervisor DMI's sys_vendor and product_name name; "" for none (or an EC2 bare-metal host).
std::string dmi_hypervisor(const std::string& vendor, const std::string& product, bool cpu_hypervisor) {
  std::string dmi_vm;
  for (const auto& vm : kDmiVms)
    for (const std::string* field : {&vendor, &product})
      if (dmi_vm.empty() && field->rfind(vm.prefix, 0) == 0) dmi_vm = vm.hypervisor;
  // Hyper-V guests say "Microsoft Corporation" / "Virtual Machine"; EC2 bare-metal instances say
  // "Amazon EC2" with a "*.metal" product and have no hypervisor flag.
  if (dmi_vm.empty() && vendor.rfind("Microsoft Corporation", 0) == 0 && product == "Virtual Machine")
    dmi_vm = "Hyper-V";
  if (dmi_vm == "Amazon EC2" && product.size() > 6 && product.compare(product.size() - 6, 6, ".metal") == 0 &&
      !cpu_hypervisor)
    dmi_vm.clear();
  return dmi_vm;
}

// The addresses of the virtio functions: 1af4:1000-107f; other 1af4 IDs (ivshmem 1110) are not virtio.
std::vector<std::string> virtio_functions(const Topology& topo) {
  std::vector<std::string> virtio;
  for (const auto& [bdf, fn] : topo.functions)
    if (fn.vendor == kVendorVirtio && fn.device >= 0x1000 && fn.device <= 0x107f) virtio.push_back(bdf.str());
  return virtio;
}

Finding virtualization_finding(const GpuState& gpu, const Machine& machine, const Topology& topo) {
  const TextFile& vr = gpu.dmi_vendor;
  const TextFile& pr = gpu.dmi_product;
  const std::string& vendor = vr.text;
  const std::string& product = pr.text;
  std::vector<Evidence> ev;
  ev.push_back({"/sys/class/dmi/id/sys_vendor", vr.ok() ? vendor : why_unread(vr.status, vr.error)});
  ev.push_back({"/sys/class/dmi/id/product_name", pr.ok() ? product : why_unread(pr.status, pr.error)});
  std::string cpu_file = machine.cpu.evidence_file.empty() ? "/proc/cpuinfo" : machine.cpu.evidence_file;
  // Without a flags line (an x86 cpuinfo always has one; --cpu's assumed CPU has none) no flag is unknown.
  const bool flags_known = !machine.cpu.evidence_file.empty() && machine.cpu.flags_read;
  ev.push_back({cpu_file, machine.cpu.evidence_file.empty() ? "not read"
                          : !flags_known                    ? "no flags line"
                          : machine.cpu.hypervisor          ? "flags: hypervisor"
                                                            : "no hypervisor flag"});

  std::string dmi_vm = dmi_hypervisor(vendor, product, machine.cpu.hypervisor);
  std::vector<std::string> virtio = virtio_functions(topo);
  if (!virtio.empty())
    ev.push_back({"/sys/bus/pci/devices", "virtio (1af4:1000-107f) functions: " + join(virtio, " ")});

  std::vector<std::string> signs;
  if (machine.cpu.hypervisor) signs.push_back("the CPU has the hypervisor flag");
  if (!dmi_vm.empty()) signs.push_back("DMI names " + dmi_vm);
  if (!virtio.empty()) signs.push_back(std::to_string(virtio.size()) + " virtio PCI function(s)");

  Finding f;
  f.id = "gpu.virtualization";
  f.evidence = ev;
  if (machine.cpu.hypervisor || !dmi_vm.empty()) {
    f.level = Level::kWarn;
    f.message = "this is a virtual machine guest (" + join(signs, ", ") +
                "): the verdict then describes the guest's virtual PCI topology and CPU, not the physical path; on the "
                "host, switches, ACS, the IOMMU and the real root complex decide";
    f.fix = "run p2pcheck on the host as well; cost: none";
  } else if (!virtio.empty()) {
    f.level = Level::kInfo;
    f.message = "virtio PCI functions without other signs of a guest (" + join(signs, ", ") +
                "): a DPU can implement virtio in hardware; if this is a VM, the verdict describes the guest's virtual "
                "topology, not the physical path";
  } else if (!flags_known && !vr.ok() && !pr.ok()) {
    f.level = Level::kUnknown;
    f.message = "whether this is a virtual machine is unknown: neither /proc/cpuinfo nor DMI could be read";
    f.fix = "run p2pcheck where /proc/cpuinfo and /sys/class/dmi/id are readable";
    // A guest only warns; not knowing it for want of the data is no more than a note.
    if (vr.status == ReadStatus::kNotCarried) {
      f.level = Level::kInfo;
      f.not_carried = vr.error;
      f.message = "whether this is a virtual machine is unknown: DMI and the CPU flags are " + vr.error;
      f.fix = kNotCarriedFix;
    }
  } else {
    f.level = Level::kPass;
    f.message = std::string("no sign of virtualization (") +
                (flags_known ? "no hypervisor CPU flag" : "CPU flags not read") + ", " +
                (vr.ok() || pr.ok() ? "no virtual machine in DMI" : "no DMI") + ", no virtio devices)";
  }
  return f;
}

Finding nvidia_finding(const GpuState& gpu, const Machine& machine, const std::vector<Bdf>& gpus) {
  std::vector<std::string> names;
  for (const auto& b : gpus) names.push_back(b.str());
  Finding f = make("gpu.nvidia", Level::kInfo, join(names, " "), "");
  const TextFile& vr = gpu.nvidia_version;
  const TextFile& pr = gpu.nvidia_banner;
  const std::string& version = vr.text;
  const std::string& banner = pr.text;
  f.evidence.push_back({"/sys/module/nvidia/version", vr.ok() ? version : why_unread(vr.status, vr.error)});
  if (pr.ok()) {
    std::string_view rest = banner;
    f.evidence.push_back({"/proc/driver/nvidia/version", std::string(next_line(rest))});
  }
  bool open_module = banner.find("Open Kernel Module") != std::string::npos;
  bool nvidia_fs = machine.modules.count("nvidia_fs") > 0;
  if (nvidia_fs) f.evidence.push_back({"/proc/modules", "nvidia_fs loaded"});
  auto major = parse_u64(version.substr(0, version.find('.')));

  std::string base = "NVIDIA GPU(s) " + join(names, ", ") +
                     ": hipFile is AMD-only; for NVIDIA GPUDirect Storage this verdict holds only in GDS's P2PDMA mode "
                     "(open kernel module >= 565, use_pci_p2pdma in cufile.json), not on the nvidia-fs path";
  // Absent is a fact only where the input could show the driver: a dump without drivers says nothing.
  std::string state =
      vr.ok() ? "driver " + version +
                    (pr.ok() ? (open_module ? " (open kernel module)" : " (proprietary kernel module)") : "")
      : vr.status == ReadStatus::kMissing ? "no nvidia driver loaded"
                                          : "driver unknown (" + why_unread(vr.status, vr.error) + ")";
  if (vr.status == ReadStatus::kNotCarried) f.not_carried = vr.error;
  if (nvidia_fs) state += ", nvidia_fs loaded";
  f.message = base + "; " + state;
  if ((major && *major < 565) || (pr.ok() && !open_module && vr.ok())) {
    f.level = Level::kWarn;
    f.message += ": this driver has no P2PDMA mode, so GDS would use nvidia-fs, which this verdict does not describe";
    f.fix =
        "for GDS P2PDMA mode: NVIDIA open kernel module >= 565 with NVreg_RegistryDwords=\"RMForceStaticBar1=1;"
        "RmForceDisableIomapWC=1\" and use_pci_p2pdma in cufile.json; cost: a driver change and reboot";
  }
  return f;
}

Finding module_finding(const AmdgpuModule& m, const Machine& machine) {
  Finding f = make("gpu.amdgpu_module", Level::kPass, "", "");
  f.evidence.push_back({"/proc/modules", !machine.modules_known ? "not read"
                                                                : (machine.modules.count("amdgpu")
                                                                       ? "amdgpu " + machine.modules.at("amdgpu")
                                                                       : "no amdgpu line")});
  f.evidence.push_back({"/sys/module/amdgpu/version", m.version.empty() ? "absent" : m.version});
  std::string not_carried = machine.not_carried({"/proc/modules"});
  if (!m.known && !not_carried.empty()) {
    f.level = Level::kUnknown;
    f.not_carried = not_carried;
    f.message = "whether amdgpu is loaded is unknown: the loaded modules are " + not_carried;
    f.evidence.front().value = not_carried;
    f.fix = kNotCarriedFix;
  } else if (!m.known) {
    f.level = Level::kUnknown;
    f.message = "whether amdgpu is loaded is unknown: /proc/modules was not read and /sys/module/amdgpu is absent";
    f.fix = "run p2pcheck where /proc/modules is readable";
  } else if (!m.loaded) {
    f.level = Level::kFail;
    f.message = "amdgpu is not loaded: the AMD GPUs have no driver, and hipFile needs amdgpu with AIS";
    std::string hint;
    if (cmdline_has(machine, "nomodeset")) {
      hint = " (nomodeset is on the kernel command line and keeps amdgpu from loading)";
      f.evidence.push_back({"/proc/cmdline", "nomodeset"});
    }
    if (cmdline_has(machine, "modprobe.blacklist")) f.evidence.push_back({"/proc/cmdline", "modprobe.blacklist=..."});
    f.message += hint;
    f.fix =
        "load amdgpu (modprobe amdgpu; drop nomodeset or an amdgpu blacklist from the kernel command line), ideally "
        "ROCm's amdgpu-dkms; cost: a reboot if the command line changes";
  } else {
    std::string kind = m.builtin ? "built into the kernel" : "loaded";
    if (m.build)
      f.message =
          "amdgpu " + kind + ", version " + m.version + " (ROCm amdgpu-dkms build " + std::to_string(*m.build) + ")";
    else if (!m.version.empty())
      f.message = "amdgpu " + kind + ", version " + m.version;
    else
      f.message = "amdgpu " + kind + ", no module version: the kernel's in-tree driver (ROCm's DKMS driver has one)";
  }
  return f;
}

Finding kfd_finding(const KfdTopology& kfd, const Machine& machine) {
  Finding f = make("gpu.kfd", Level::kPass, "", "");
  if (!kfd.present && !kfd.not_carried.empty()) {
    f.level = Level::kUnknown;
    f.not_carried = kfd.not_carried;
    f.message =
        "whether KFD (ROCm's kernel interface) sees the AMD GPUs is unknown: the KFD topology is " + kfd.not_carried;
    f.evidence.push_back({"/sys/class/kfd/kfd/topology/nodes", kfd.not_carried});
    f.fix = kNotCarriedFix;
    return f;
  }
  if (!kfd.present) {
    f.level = Level::kFail;
    f.message = "no KFD topology (" + kfd.problem + "): ROCm, and so hipFile, cannot use the AMD GPUs";
    f.evidence.push_back({"/sys/class/kfd/kfd/topology/nodes", kfd.problem});
    auto it = machine.config.options.find("CONFIG_HSA_AMD");
    if (machine.config.known())
      f.evidence.push_back({machine.config.file, it == machine.config.options.end() ? "CONFIG_HSA_AMD is not set"
                                                                                    : "CONFIG_HSA_AMD=" + it->second});
    f.fix =
        "use a kernel with CONFIG_HSA_AMD=y or install ROCm's amdgpu-dkms; cost: a kernel or driver change and reboot";
    return f;
  }
  int gpus = 0;
  std::vector<std::string> where;
  for (const auto& n : kfd.nodes)
    if (n.is_gpu()) {
      ++gpus;
      where.push_back(n.bdf ? n.bdf->str() : "node " + std::to_string(n.id));
    }
  f.evidence.push_back({"/sys/class/kfd/kfd/topology/nodes", std::to_string(kfd.nodes.size()) + " nodes"});
  if (!kfd.problem.empty()) {
    f.level = Level::kUnknown;
    f.message = "KFD topology only partly readable: " + kfd.problem;
    f.fix = as_root_fix(machine.from_dump);
    return f;
  }
  if (gpus == 0) {
    f.level = Level::kFail;
    f.message = "KFD is present but has no GPU node (no node with a non-zero simd_count): ROCm sees no GPU";
    f.fix = "check dmesg for amdgpu/KFD initialization errors; the GPU may be unsupported by this driver";
    return f;
  }
  f.message = "KFD present with " + std::to_string(gpus) + " GPU node(s): " + join(where, ", ");
  return f;
}

Finding ais_finding(const Kallsyms& k, const AmdgpuModule& m, bool from_dump) {
  Finding f = make("gpu.ais", Level::kPass, "", "");
  bool interpretable = m.build && *m.build > kAisCapabilityMinBuild;
  std::string note =
      interpretable ? ""
                    : "; per-GPU AIS state (KFD capability bit 0x40) is not read: it means that only on amdgpu "
                      "DKMS builds newer than " +
                          std::to_string(kAisCapabilityMinBuild) + " (on other kernels the bit is HSA_CAP_VA_LIMIT)";
  if (k.status != ReadStatus::kOk || k.empty) {
    f.level = Level::kUnknown;
    std::string why = k.status == ReadStatus::kOk ? "empty" : why_unread(k.status, k.error);
    f.message = "whether amdgpu has AIS is unknown: /proc/kallsyms " + why + note;
    f.evidence.push_back({"/proc/kallsyms", why});
    f.fix = k.status == ReadStatus::kMissing      ? "capture /proc/kallsyms (or the kernel has no CONFIG_KALLSYMS)"
            : k.status == ReadStatus::kNotCarried ? kNotCarriedFix
                                                  : as_root_fix(from_dump);
    if (k.status == ReadStatus::kNotCarried) f.not_carried = k.error;
    return f;
  }
  const std::string& hit = k.ais_line;
  if (!hit.empty()) {
    f.evidence.push_back({"/proc/kallsyms", hit});
    f.message = "amdgpu has AIS (kfd_ais_rw_file in /proc/kallsyms)" + note;
    return f;
  }
  f.level = Level::kFail;
  f.evidence.push_back({"/proc/kallsyms", "no kfd_ais_rw_file"});
  f.evidence.push_back({"/sys/module/amdgpu/version", m.version.empty() ? "absent (in-tree driver)" : m.version});
  f.message = std::string("amdgpu has no AIS (no kfd_ais_rw_file in /proc/kallsyms)") +
              (m.loaded ? "" : "; amdgpu is not loaded") + ": hipFile falls back to POSIX I/O";
  f.fix =
      "install ROCm's amdgpu-dkms (hipFile docs: amdgpu-dkms 30.20.1 or newer, 31.40 or newer for NVMe); cost: an "
      "out-of-tree driver that DKMS rebuilds for every kernel update and that may lag new kernels";
  return f;
}

// hipFile and the HIP runtime: found or not, never a failure ("look for them; do not require them").
std::vector<Finding> library_findings(const LibraryScan& scan) {
  const std::vector<std::string>& hip = scan.hip;
  const std::vector<std::string>& hipfile = scan.hipfile;
  const std::vector<std::string>& looked = scan.looked;
  const std::vector<Evidence>& listed = scan.listed;
  std::vector<Finding> out;
  Finding h = make("gpu.hip_runtime", Level::kInfo, "", "");
  // Libraries are looked for, not required (INFO or WARN): where the source cannot show them, INFO.
  if (hip.empty() && !scan.not_carried.empty()) {
    h.not_carried = scan.not_carried;
    h.message = "whether a HIP runtime (libamdhip64.so*) is installed is " + scan.not_carried;
    h.evidence = listed;
    h.fix = kNotCarriedFix;
  } else if (!hip.empty()) {
    h.message = "HIP runtime found: " + join(hip, ", ") +
                "; whether it exports hipAmdFileRead/hipAmdFileWrite is checked at verify time (it needs dlopen)";
    h.evidence.push_back({hip.front(), "present"});
  } else {
    h.level = Level::kWarn;
    h.message =
        "no HIP runtime (libamdhip64.so*) in " + join(looked, ", ") +
        ": hipFile needs ROCm's HIP runtime with hipAmdFileRead/hipAmdFileWrite (it may live elsewhere, e.g. in "
        "a container or a Python wheel)";
    h.evidence = listed;
    h.fix =
        "install a ROCm release whose HIP runtime has hipAmdFileRead/hipAmdFileWrite (hipFile docs: ROCm 7.2 or newer; "
        "package hip-runtime-amd) where hipFile applications run; cost: a ROCm install";
  }
  out.push_back(std::move(h));
  Finding l = make("gpu.hipfile_library", Level::kInfo, "", "");
  if (hipfile.empty() && !scan.not_carried.empty()) {
    l.not_carried = scan.not_carried;
    l.message = "whether the hipFile library (libhipfile.so*) is installed is " + scan.not_carried;
    l.evidence = listed;
    l.fix = kNotCarriedFix;
  } else if (!hipfile.empty()) {
    l.message = "hipFile library found: " + join(hipfile, ", ");
    l.evidence.push_back({hipfile.front(), "present"});
  } else {
    l.message = "no hipFile library (libhipfile.so*) in the usual places; applications may bundle their own";
    l.evidence = listed;
    l.fix = "install hipFile from ROCm (or build it) where it is to be used; cost: none beyond the install";
  }
  out.push_back(std::move(l));
  return out;
}

Finding no_amd_gpu_finding() {
  Finding f = make("gpu.amd", Level::kInfo, "", "no AMD GPU: hipFile's GPU requirements do not apply");
  f.evidence.push_back({"/sys/bus/pci/devices", "no AMD (1002) display or accelerator function"});
  return f;
}

}  // namespace

Finding gpu_steps::make(const std::string& id, Level level, const std::string& subject, const std::string& message) {
  Finding f;
  f.id = id;
  f.level = level;
  f.subject = subject;
  f.message = message;
  // A finding about one GPU bears on the result only when that GPU is in a selected pair.
  if (auto bdf = Bdf::parse(subject)) f.devices.push_back(*bdf);
  return f;
}

AmdgpuModule gpu_steps::amdgpu_module(const Machine& machine, const std::vector<const Function*>& amd, bool in_sysfs,
                                      const std::string& version) {
  AmdgpuModule m;
  bool sys = in_sysfs;
  bool any_bound = std::any_of(amd.begin(), amd.end(), [](const Function* f) { return f->driver == "amdgpu"; });
  if (machine.modules_known && machine.modules.count("amdgpu")) {
    m.loaded = true;
  } else if (sys || any_bound) {
    m.loaded = true;
    m.builtin = machine.modules_known && sys;  // in /sys/module but not in /proc/modules: compiled in
  } else if (!machine.modules_known) {
    m.known = false;
  }
  m.version = version;
  m.build = amdgpu_dkms_build(m.version);
  return m;
}

GpusByVendor gpu_steps::gpus_by_vendor(const Topology& topo, const Inventory& inv) {
  GpusByVendor gpus;
  for (const Bdf& b : inv.gpus) {
    const Function* fn = topo.find(b);
    if (!fn) continue;
    if (fn->vendor == kVendorAmd) gpus.amd.push_back(fn);
    if (fn->vendor == kVendorNvidia) gpus.nvidia.push_back(b);
  }
  return gpus;
}

std::string gfx_name(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "gfx%llu%llx%llx", static_cast<unsigned long long>(v / 10000),
                static_cast<unsigned long long>((v / 100) % 100), static_cast<unsigned long long>(v % 100));
  return buf;
}

std::vector<Finding> check_gpu(const GpuState& gpu, const Machine& machine, const Topology& topo,
                               const Inventory& inv) {
  std::vector<Finding> out;
  out.push_back(virtualization_finding(gpu, machine, topo));
  GpusByVendor gpus = gpus_by_vendor(topo, inv);
  if (!gpus.nvidia.empty()) out.push_back(nvidia_finding(gpu, machine, gpus.nvidia));
  if (gpus.amd.empty()) {
    out.push_back(no_amd_gpu_finding());
    return out;
  }
  AmdgpuModule module = amdgpu_module(machine, gpus.amd, gpu.amdgpu_in_sysfs, gpu.amdgpu_version.text);
  out.push_back(module_finding(module, machine));
  if (module.loaded) {
    out.push_back(kfd_finding(gpu.kfd, machine));
    out.push_back(ais_finding(gpu.kallsyms, module, machine.from_dump));
  }
  for (const Function* fn : gpus.amd) add_amd_gpu_findings(gpu, *fn, module, machine.from_dump, out);
  for (auto& f : library_findings(gpu.libraries)) out.push_back(std::move(f));
  return merge_not_carried(std::move(out));
}

}  // namespace p2pcheck
