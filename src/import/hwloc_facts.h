// What hwloc XML says beside the PCI tree, read from its attributes and names alone: the NUMA
// nodes an object is local to (its nodeset, an hwloc bitmap) and which NVMe controller and block
// device an OS device's name ("nvme0n1", "nvme0c1n1") is. Shared by the hwloc import and its tests.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace p2pcheck {

// The kernel's NUMA node numbers stay below MAX_NUMNODES, at most 1 << 10 (NODES_SHIFT 10).
inline constexpr int kMaxHwlocNumaNodes = 1 << 10;

// An hwloc bitmap as lstopo writes one: 32-bit words in hex, most significant first, separated by
// commas, a word of zeros left empty ("0xffffffff,,,0x0" is bits 96-191). nullopt for anything
// else, for an infinite set ("0xf...f,...") and for a bit at or past kMaxHwlocNumaNodes.
std::optional<std::set<int>> parse_hwloc_nodeset(std::string_view text);

// "0-1,3", as the kernel prints a node list (/sys/devices/system/node/online).
std::string node_list_text(const std::set<int>& nodes);

// An OS device hwloc puts below a PCI function, as the NVMe driver names it.
struct HwlocNvmeDevice {
  std::string controller;  // "nvme1"
  std::string block;       // "nvme0n1" or the multipath path node "nvme0c1n1"; "" for the controller itself
  bool path_node = false;  // nvme<subsystem>c<controller>n<namespace>: native multipath is on
  // The controller's name is written in the device's name (path nodes, the controller itself); a
  // plain namespace's number is its controller's only by the kernel's naming rule (see the .cc).
  bool exact = false;
};
std::optional<HwlocNvmeDevice> hwloc_nvme_device(std::string_view name);

}  // namespace p2pcheck
