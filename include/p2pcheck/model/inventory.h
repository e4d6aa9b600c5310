// Which functions are GPUs and which are NVMe controllers, with their block devices; and the
// user's selection of pairs.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/model/topology.h"

namespace p2pcheck {

struct NvmeNamespace {
  std::string name;                         // nvme0n1 (the block device under /dev)
  std::optional<std::uint64_t> size_bytes;  // nullopt: the input does not show it (not zero)
  std::vector<std::string> partitions;      // nvme0n1p1, ...
};

struct NvmeController {
  std::string name;  // nvme0; empty when no driver registered a controller for the function
  Bdf bdf;
  std::string model, serial, firmware;
  std::vector<NvmeNamespace> namespaces;
  // Native multipath: the hidden per-path nodes under the controller (nvme0c0n1 -> head nvme0n1).
  std::vector<std::string> path_nodes;
};

struct IgnoredDevice {
  enum class Kind { kGpuAudio, kOtherDisplay, kOtherAccelerator };
  Bdf bdf;
  Kind kind = Kind::kGpuAudio;
  std::uint16_t vendor = 0;
  // "display controller from ASPEED Technology, Inc. (e.g. a BMC's VGA), not an AMD or NVIDIA GPU":
  // made when shown, since naming the vendor loads pci.ids (pci_vendor_name).
  std::string reason() const;
};

// A GPU or NVMe function that hipFile and GDS can never use as it is bound: an NVMe without the nvme
// driver (vfio-pci for a VM, another driver, none: no block device), a GPU handed to vfio-pci. Listed
// with its driver, out of the pairs (unless named with --gpu/--nvme) and out of their counts.
struct UnusableEndpoint {
  Bdf bdf;
  bool gpu = false;         // a GPU; else an NVMe
  std::string driver;       // "vfio-pci"; "" when no driver is bound
  std::string why() const;  // "bound to vfio-pci (passed through to a VM): no host block device"
};

struct Inventory {
  std::vector<Bdf> gpus;
  std::vector<NvmeController> nvmes;  // every usable NVMe-class function, controller name where known
  std::vector<IgnoredDevice> ignored;
  std::vector<UnusableEndpoint> unusable;  // by BDF

  const NvmeController* nvme_at(const Bdf& bdf) const;
  bool is_gpu(const Bdf& bdf) const;
  // Sorts a lookup index for nvme_at() and is_gpu(), which a fabric's pairs ask once per hop; call
  // it after filling gpus and nvmes (read_inventory does). Without it, or after the lists grow,
  // both search linearly.
  void index();

 private:
  std::vector<Bdf> gpu_index_;                           // gpus, sorted
  std::vector<std::pair<Bdf, std::size_t>> nvme_index_;  // nvmes' BDFs, sorted, with their place
};

// GPUs: AMD (1002) and NVIDIA (10de) functions of display (03xx) or processing-accelerator (1200)
// class, or bound to amdgpu/nvidia; never their audio functions. NVMe: class 010802.
Inventory read_inventory(Source& source, const Topology& topo);

struct PairSelection {
  std::vector<std::string> gpu;   // --gpu values: BDF (full or bus:dev.fn); any PCI function allowed
  std::vector<std::string> nvme;  // --nvme values: BDF, nvme0, nvme0n1, /dev/nvme0n1[p1], /dev/nvme0
  // How the user named each side, for errors: an option, or explain's argument.
  std::string gpu_named_by = "--gpu", nvme_named_by = "--nvme";
  bool operator==(const PairSelection&) const = default;
};

struct DevicePair {
  Bdf gpu;
  Bdf nvme;
};

// Every selected GPU x every selected NVMe (all of them when a side is not given). Throws
// UsageError for a selector that matches nothing.
std::vector<DevicePair> select_pairs(const Topology& topo, const Inventory& inv, const PairSelection& sel);

}  // namespace p2pcheck
