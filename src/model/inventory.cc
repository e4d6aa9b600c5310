// Roles: which functions are GPUs and which are NVMe controllers, and their block devices.
#include "p2pcheck/model/inventory.h"

#include <algorithm>
#include <cstdint>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

constexpr std::uint16_t kVendorAmd = 0x1002, kVendorNvidia = 0x10de;
constexpr std::uint32_t kClassNvme = 0x010802;

// Drivers that hand a device to a virtual machine: the host itself cannot use it.
bool is_passthrough_driver(const std::string& driver) { return driver == "vfio-pci" || driver == "pci-stub"; }

bool is_gpu_driver(const std::string& driver) {
  return driver == "amdgpu" || driver == "nvidia" || driver == "radeon" || driver == "nouveau";
}

NvmeNamespace read_namespace(Source& src, const std::string& name) {
  NvmeNamespace ns;
  ns.name = name;
  const std::string dir = "/sys/block/" + name;
  // 512-byte sectors; a count whose byte size would not fit 64 bits (a broken dump) reads as unknown.
  if (FileRead r = src.read(path_in(dir, "size")); r.ok())
    if (auto sectors = parse_dec(r.bytes); sectors && *sectors >= 0 && *sectors <= INT64_MAX / 512)
      ns.size_bytes = static_cast<std::uint64_t>(*sectors) * 512;
  for (const std::string& entry : src.list(dir)) {
    auto part = parse_nvme_name(entry);
    if (part && part->kind == NvmeName::Kind::kPartition && part->ns == name) ns.partitions.push_back(entry);
  }
  return ns;
}

}  // namespace

std::string IgnoredDevice::reason() const {
  switch (kind) {
    case Kind::kGpuAudio: return "audio function of a graphics card";
    case Kind::kOtherDisplay: {
      std::string who = pci_vendor_name(vendor);
      return "display controller from " + (who.empty() ? "another vendor" : who) +
             " (e.g. a BMC's VGA), not an AMD or NVIDIA GPU";
    }
    case Kind::kOtherAccelerator: return "processing accelerator that is not an AMD or NVIDIA GPU";
  }
  return "";
}

const NvmeController* Inventory::nvme_at(const Bdf& bdf) const {
  if (nvme_index_.size() == nvmes.size() && !nvmes.empty()) {
    auto it = std::lower_bound(nvme_index_.begin(), nvme_index_.end(), bdf,
                               [](const auto& entry, const Bdf& b) { return entry.first < b; });
    if (it == nvme_index_.end() || it->first != bdf) return nullptr;
    if (nvmes[it->second].bdf == bdf) return &nvmes[it->second];
    // the list changed under the index: search it
  }
  for (const auto& c : nvmes)
    if (c.bdf == bdf) return &c;
  return nullptr;
}

bool Inventory::is_gpu(const Bdf& bdf) const {
  if (gpu_index_.size() == gpus.size() && !gpus.empty())
    return std::binary_search(gpu_index_.begin(), gpu_index_.end(), bdf);
  return std::find(gpus.begin(), gpus.end(), bdf) != gpus.end();
}

void Inventory::index() {
  gpu_index_ = gpus;
  std::sort(gpu_index_.begin(), gpu_index_.end());
  nvme_index_.clear();
  nvme_index_.reserve(nvmes.size());
  for (std::size_t i = 0; i < nvmes.size(); ++i) nvme_index_.emplace_back(nvmes[i].bdf, i);
  // stable: where a BDF repeats, the first controller answers, as the linear search does
  std::stable_sort(nvme_index_.begin(), nvme_index_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

// Controller names come from /sys/class/nvme/<name>/device, the driver's own link to the function.
static std::map<Bdf, NvmeController> read_controllers(Source& source, const Topology& topo) {
  std::map<Bdf, NvmeController> controllers;
  for (const std::string& name : source.list("/sys/class/nvme")) {
    const std::string dir = "/sys/class/nvme/" + name;
    auto device = source.resolve_directory(path_in(dir, "device"));
    if (!device) continue;  // fabrics controllers (TCP, RDMA) have no PCI function
    auto bdf = Bdf::parse(basename(*device));
    if (!bdf || !topo.find(*bdf)) continue;
    NvmeController c;
    // Shown as any name from input (printable.h); no path is made from them again.
    c.name = printable(name);
    c.bdf = *bdf;
    c.model = printable(read_text(source, path_in(dir, "model")));
    c.serial = printable(read_text(source, path_in(dir, "serial")));
    c.firmware = printable(read_text(source, path_in(dir, "firmware_rev")));
    for (const std::string& entry : source.list(dir)) {
      auto nvme = parse_nvme_name(entry);
      if (nvme && nvme->kind == NvmeName::Kind::kNamespace) {
        c.namespaces.push_back(read_namespace(source, entry));
      } else if (nvme && nvme->kind == NvmeName::Kind::kPathNode) {  // native multipath: hidden per-path node
        c.namespaces.push_back(read_namespace(source, nvme->ns));
        c.path_nodes.push_back(entry);
      }
    }
    controllers[*bdf] = std::move(c);
  }
  return controllers;
}

std::string UnusableEndpoint::why() const {
  if (driver.empty()) return gpu ? "no driver bound" : "no driver bound: no NVMe controller, no block device";
  if (is_passthrough_driver(driver))
    return "bound to " + driver + " (passed through to a virtual machine): " +
           (gpu ? std::string("not the host's GPU") : std::string("no host block device"));
  return "bound to " + driver + ", not nvme: no host block device";
}

Inventory read_inventory(Source& source, const Topology& topo) {
  Inventory inv;
  for (const auto& [bdf, fn] : topo.functions) {
    bool gpu_vendor = fn.vendor == kVendorAmd || fn.vendor == kVendorNvidia;
    bool display = fn.base_class() == 0x03;
    bool accelerator = fn.class_id() == 0x1200;
    if (fn.class_code == kClassNvme) continue;
    if (fn.class_id() == 0x0403 && gpu_vendor) {
      inv.ignored.push_back({bdf, IgnoredDevice::Kind::kGpuAudio, fn.vendor});
    } else if (gpu_vendor && (display || accelerator || is_gpu_driver(fn.driver))) {
      if (is_passthrough_driver(fn.driver))
        inv.unusable.push_back({bdf, true, fn.driver});
      else
        inv.gpus.push_back(bdf);
    } else if (display) {
      inv.ignored.push_back({bdf, IgnoredDevice::Kind::kOtherDisplay, fn.vendor});
    } else if (accelerator) {
      inv.ignored.push_back({bdf, IgnoredDevice::Kind::kOtherAccelerator, fn.vendor});
    }
  }

  std::map<Bdf, NvmeController> controllers = read_controllers(source, topo);
  for (const auto& [bdf, fn] : topo.functions) {
    if (fn.class_code != kClassNvme) continue;
    // Without the nvme driver there is no block device for hipFile or GDS to read (a driver the
    // input cannot show is unknown, not absent: that NVMe stays).
    auto it = controllers.find(bdf);
    if (fn.driver != "nvme" && fn.driver_not_carried.empty() && it == controllers.end()) {
      inv.unusable.push_back({bdf, false, fn.driver});
      continue;
    }
    if (it != controllers.end()) {
      inv.nvmes.push_back(std::move(it->second));
    } else {
      NvmeController c;
      c.bdf = bdf;
      inv.nvmes.push_back(std::move(c));
    }
  }
  inv.index();
  return inv;
}

namespace {

std::optional<Bdf> find_function(const Topology& topo, const std::string& text) {
  auto bdf = Bdf::parse(text);
  if (bdf && topo.find(*bdf)) return bdf;
  return std::nullopt;
}

Bdf resolve_nvme(const Topology& topo, const Inventory& inv, std::string text, const std::string& named_by) {
  const std::string typed = text;
  if (auto bdf = find_function(topo, text)) return *bdf;
  if (text.rfind("/dev/", 0) == 0) text = text.substr(5);
  // nvme0n1p2 -> nvme0n1; then a namespace name or a controller name.
  if (auto part = parse_nvme_name(text); part && part->kind == NvmeName::Kind::kPartition) text = part->ns;
  for (const auto& c : inv.nvmes) {
    if (!c.name.empty() && c.name == text) return c.bdf;
    for (const auto& ns : c.namespaces)
      if (ns.name == text) return c.bdf;
  }
  throw UsageError(named_by + " " + typed + ": no PCI function, NVMe controller or namespace of that name in " +
                   topo.source_description);
}

}  // namespace

std::vector<DevicePair> select_pairs(const Topology& topo, const Inventory& inv, const PairSelection& sel) {
  std::vector<Bdf> gpus, nvmes;
  for (const auto& text : sel.gpu) {
    auto bdf = find_function(topo, text);
    if (!bdf)
      throw UsageError(sel.gpu_named_by + " " + text + ": no PCI function at that address in " +
                       topo.source_description);
    gpus.push_back(*bdf);
  }
  for (const auto& text : sel.nvme) nvmes.push_back(resolve_nvme(topo, inv, text, sel.nvme_named_by));
  if (sel.gpu.empty()) gpus = inv.gpus;
  if (sel.nvme.empty())
    for (const auto& c : inv.nvmes) nvmes.push_back(c.bdf);
  std::vector<DevicePair> pairs;
  pairs.reserve(gpus.size() * nvmes.size());  // grown by doubling it peaked at twice its size
  for (const Bdf& g : gpus)
    for (const Bdf& n : nvmes) pairs.push_back({g, n});
  return pairs;
}

}  // namespace p2pcheck
