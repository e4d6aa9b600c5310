// The GPU read step: DMI, the nvidia and amdgpu modules, KFD topology, /proc/kallsyms, each AMD
// GPU's VRAM size and the library directories, each read only when the GPU checks will use it.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <set>

#include "gpu_steps.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/source/table_text.h"

namespace p2pcheck {
namespace gpu_steps {

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  text = trim(text);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string why_unread(ReadStatus status, const std::string& error) {
  return p2pcheck::why_unread(FileRead{status, "", error});
}

}  // namespace gpu_steps

using namespace gpu_steps;

namespace {

// Where the HIP runtime and hipFile usually live (ROCm install docs; Debian multiarch; RPM lib64).
constexpr const char* kLibDirs[] = {"/opt/rocm/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"};

// KFD's topology properties, "name value" per line (~40 of them), bounded as a table: each is a map entry.
std::map<std::string, std::uint64_t> parse_properties(std::string_view text, const std::string& file) {
  std::map<std::string, std::uint64_t> out;
  for (std::string_view line : split_table_lines(text, file)) {
    std::array<std::string_view, 3> w;  // a third word makes it no property
    if (first_words(line, w) == 2)
      if (auto v = parse_u64(w[1])) out[std::string(w[0])] = *v;
  }
  return out;
}

TextFile read_text_file(Source& src, const std::string& path) {
  TextFile file;
  file.path = path;
  FileRead raw;
  file.text = read_text(src, path, &raw);
  file.status = raw.status;
  file.error = raw.error;
  return file;
}

// ais-check's probe: a line naming kfd_ais_rw_file. Non-root readers see zero addresses, but names still show.
Kallsyms read_kallsyms(Source& src) {
  Kallsyms k;
  FileRead r = src.read("/proc/kallsyms");
  k.status = r.status;
  k.error = r.error;
  if (!r.ok()) return k;
  k.empty = trim(r.bytes).empty();
  for (std::string_view rest = r.bytes; !rest.empty();) {
    std::string_view line = next_line(rest);
    std::array<std::string_view, 3> w;  // address type name [module]
    if (first_words(line, w) == 3 && w[2] == "kfd_ais_rw_file") {
      k.ais_line = line;
      break;
    }
  }
  return k;
}

// hipFile and the HIP runtime in the usual places and every /opt/rocm-*/lib.
LibraryScan scan_libraries(Source& src) {
  LibraryScan scan;
  std::vector<std::string> dirs;
  for (const std::string& entry : src.list("/opt"))
    if (entry.rfind("rocm-", 0) == 0) dirs.push_back("/opt/" + entry + "/lib");
  dirs.insert(dirs.begin(), std::begin(kLibDirs), std::end(kLibDirs));
  std::set<std::string> seen_dirs;
  for (const auto& dir : dirs) {
    auto canonical = src.resolve_directory(dir);
    scan.looked.push_back(dir);
    if (!canonical) {
      auto why = src.not_carried(dir);
      if (why) scan.not_carried = *why;
      scan.listed.push_back({dir, why ? *why : "absent"});
      continue;
    }
    if (!seen_dirs.insert(*canonical).second) continue;
    std::vector<std::string> names = src.list(dir);
    scan.listed.push_back({dir, std::to_string(names.size()) + " entries"});
    for (const auto& name : names) {
      if (name.rfind("libamdhip64.so", 0) == 0) scan.hip.push_back(dir + "/" + name);
      if (name.rfind("libhipfile.so", 0) == 0) scan.hipfile.push_back(dir + "/" + name);
    }
  }
  return scan;
}

// mem_info_vram_total and mem_info_vis_vram_total of each AMD GPU the large-BAR check reaches:
// not a virtual function, not an APU.
void read_vram_sizes(Source& src, const std::vector<const Function*>& amd, GpuState& gpu) {
  for (const Function* fn : amd) {
    if (fn->is_virtfn()) continue;
    const KfdNode* node = gpu.kfd.present ? gpu.kfd.gpu_node(fn->bdf) : nullptr;
    if (apu_finding(*fn, node)) continue;
    gpu.vram_total[fn->bdf] = read_text_file(src, path_in(fn->sysfs_path, "mem_info_vram_total"));
    gpu.vram_visible[fn->bdf] = read_text_file(src, path_in(fn->sysfs_path, "mem_info_vis_vram_total"));
  }
}

}  // namespace

std::uint64_t KfdNode::prop(const std::string& key) const {
  auto it = properties.find(key);
  return it == properties.end() ? 0 : it->second;
}

const KfdNode* KfdTopology::gpu_node(const Bdf& bdf) const {
  for (const auto& n : nodes)  // the address first: is_gpu() is a map lookup, asked per GPU per node
    if (n.bdf == bdf && n.is_gpu()) return &n;
  return nullptr;
}

namespace {

// The node's VRAM from its memory banks (frame-buffer heaps); a CPU node's banks are system memory.
void read_vram_banks(Source& src, KfdNode& n) {
  for (const auto& bank : src.list(path_in(n.dir, "mem_banks"))) {
    const std::string file = n.dir + "/mem_banks/" + bank + "/properties";
    FileRead br = src.read(file);
    if (!br.ok()) continue;
    ++n.mem_banks_read;
    auto p = parse_properties(br.bytes, file);
    int heap = static_cast<int>(p.count("heap_type") ? p["heap_type"] : 0);
    if (heap != kHeapFbPublic && heap != kHeapFbPrivate) continue;  // system memory banks of CPU nodes
    n.vram_bytes = n.vram_bytes.value_or(0) + p["size_in_bytes"];
    n.vram_heap_type = heap;
    if (n.vram_file.empty()) n.vram_file = file;
  }
}

// Marks each GPU node with an xGMI io_link to a CPU node.
void mark_xgmi_to_cpu(Source& src, KfdTopology& kfd) {
  for (auto& n : kfd.nodes) {
    if (!n.is_gpu()) continue;
    for (const auto& link : src.list(path_in(n.dir, "io_links"))) {
      const std::string file = n.dir + "/io_links/" + link + "/properties";
      FileRead lr = src.read(file);
      if (!lr.ok()) continue;
      auto p = parse_properties(lr.bytes, file);
      if (p["type"] != kIoLinkXgmi) continue;
      for (const auto& other : kfd.nodes)
        if (other.id == static_cast<int>(p["node_to"]) && !other.is_gpu()) n.xgmi_to_cpu = true;
    }
  }
}

}  // namespace

KfdTopology read_kfd(Source& src) {
  KfdTopology kfd;
  const std::string root = "/sys/class/kfd/kfd/topology/nodes";
  std::vector<std::string> entries = src.list(root);
  if (entries.empty()) {
    if (auto why = src.not_carried(root)) {
      kfd.not_carried = *why;
      kfd.problem = "KFD topology " + *why;
      return kfd;
    }
    kfd.problem = src.list("/sys/class/kfd").empty() ? "no /sys/class/kfd" : "no topology nodes";
    return kfd;
  }
  kfd.present = true;
  for (const auto& entry : entries) {
    auto id = parse_dec(entry);
    if (!id) continue;
    KfdNode n;
    n.id = static_cast<int>(*id);
    n.dir = root + "/" + entry;
    const std::string properties = path_in(n.dir, "properties");
    FileRead r = src.read(properties);
    if (!r.ok()) {
      kfd.problem = properties + " " + why_unread(r.status, r.error);
      continue;
    }
    n.properties = parse_properties(r.bytes, properties);
    if (n.is_gpu() && n.properties.count("location_id")) {
      std::uint64_t loc = n.prop("location_id");
      Bdf b;
      b.domain = static_cast<std::uint32_t>(n.prop("domain"));
      b.bus = static_cast<std::uint8_t>(loc >> 8);
      b.dev = static_cast<std::uint8_t>((loc >> 3) & 0x1f);
      b.fn = static_cast<std::uint8_t>(loc & 7);
      n.bdf = b;
    }
    read_vram_banks(src, n);
    kfd.nodes.push_back(std::move(n));
  }
  // xGMI links to CPU nodes need every node's properties first.
  mark_xgmi_to_cpu(src, kfd);
  return kfd;
}

std::optional<std::uint64_t> amdgpu_dkms_build(const std::string& module_version) {
  size_t dash = module_version.find('-');
  if (dash == std::string::npos) return std::nullopt;
  size_t end = dash + 1;
  while (end < module_version.size() && std::isdigit(static_cast<unsigned char>(module_version[end]))) ++end;
  if (end == dash + 1) return std::nullopt;
  return parse_u64(std::string_view(module_version).substr(dash + 1, end - dash - 1));
}

GpuState read_gpu(Source& source, const Machine& machine, const Topology& topo, const Inventory& inv) {
  GpuState gpu;
  // DMI was read once with the machine's identity; the virtualization check cites those reads.
  auto dmi = [&machine](const char* path) {
    TextFile file;
    file.path = path;
    auto it = machine.identity.reads.find(path);
    if (it == machine.identity.reads.end()) return file;
    file.status = it->second.status;
    file.error = it->second.error;
    if (it->second.ok()) file.text = std::string(trim(it->second.bytes));
    return file;
  };
  gpu.dmi_vendor = dmi("/sys/class/dmi/id/sys_vendor");
  gpu.dmi_product = dmi("/sys/class/dmi/id/product_name");
  GpusByVendor gpus = gpus_by_vendor(topo, inv);
  if (!gpus.nvidia.empty()) {
    gpu.nvidia_version = read_text_file(source, "/sys/module/nvidia/version");
    gpu.nvidia_banner = read_text_file(source, "/proc/driver/nvidia/version");
  }
  if (gpus.amd.empty()) return gpu;  // hipFile's requirements do not apply: no library scan either
  gpu.amdgpu_in_sysfs = !source.list("/sys/module/amdgpu").empty();
  gpu.amdgpu_version = read_text_file(source, "/sys/module/amdgpu/version");
  if (amdgpu_module(machine, gpus.amd, gpu.amdgpu_in_sysfs, gpu.amdgpu_version.text).loaded) {
    gpu.kfd = read_kfd(source);
    gpu.kallsyms = read_kallsyms(source);
  }
  read_vram_sizes(source, gpus.amd, gpu);
  gpu.libraries = scan_libraries(source);
  return gpu;
}

}  // namespace p2pcheck
