// The PCI hierarchy as the kernel built it: host bridges (root buses), bridges, endpoints.
//
// The shape comes from the canonical sysfs paths (/sys/devices/pci0000:00/<root port>/<switch up>/
// <switch down>/<endpoint>): each BDF component nests below the previous one, exactly as the
// kernel's pci_dev->bus->self chain does.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/pci.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

struct HostBridge {
  std::string id;  // "0000:00": domain and root bus number, as in /sys/devices/pci0000:00
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  std::string sysfs_path;         // /sys/devices/pci0000:00
  std::vector<Bdf> root_devices;  // functions on the root bus, in devfn order (the kernel's scan order)
  // pci_host_bridge_dev(): the first device on the root bus, used only if it is 00.0 or a root port.
  // nullopt when the root bus has no such device (then no allowlist entry can match).
  std::optional<Bdf> bridge_device;
  // The first device is not 00.0 and its port type could not be read (no root): kernel's pick unknown.
  bool bridge_device_unknown = false;
  // Why, when the input's format holds no config space ("not in this hwloc XML"); empty: not read as root.
  std::string bridge_device_not_carried;
  std::string name;  // the planner's name ("s0-legacy"); empty when the input gives none
};

class Topology {
 public:
  std::map<Bdf, Function> functions;
  std::map<std::string, HostBridge> host_bridges;
  std::string source_description;
  bool config_truncated = false;  // some config file had only 64 bytes (non-root capture)
  bool from_dump = false;         // read from a capture or dump: advice asks the owner, not us, for root
  // NUMA nodes online (/sys/devices/system/node/online): with one, a numa_node of -1 is that node.
  std::optional<int> numa_nodes;
  std::string numa_nodes_unknown;  // why numa_nodes is nullopt: "not in this lspci output", "not read"

  const Function* find(const Bdf& bdf) const;
  const Function& at(const Bdf& bdf) const;
  const HostBridge* host_bridge_of(const Function& fn) const;
  // pci_upstream_bridge(): a VF is replaced by its PF; a device on a root bus has none.
  const Function* upstream_bridge(const Function& fn) const;
  // fn, then its upstream bridges in order, up to the one on the root bus (pci_upstream_bridge chain).
  std::vector<const Function*> upstream_chain(const Function& fn) const;
};

// A chain that long went round in a loop of parent links (a broken capture): it is cut there.
inline constexpr std::size_t kLongestChain = 256;

// Fills each host bridge's root_devices and pci_host_bridge_dev() (drivers/pci/p2pdma.c, 6.1 :339,
// 6.12 :466): the first device on the root bus, if it is 00.0 or a root port. The one body of that
// choice: read_topology and plans both call it once their functions are in place.
void find_host_bridge_devices(Topology& topo);

// The link between a function and the port above it, judged from both ends: it is downtrained
// only if it runs below what BOTH ends can do (a Gen4 GPU in a Gen3 slot is not downtrained).
struct LinkCheck {
  bool applies = false;  // an upstream-facing function with its port: the link is judged here
  std::optional<double> capable_speed;
  std::optional<int> capable_width;
  bool downtrained = false;
  // Both the current and the capable speed and width were read: "not downtrained" is then a fact.
  bool known = false;
};
LinkCheck check_link(const Topology& topo, const Function& fn);

// How much of each function read_topology() reads. kAll: every attribute a command prints (topo
// shows each function's BARs and NUMA node). kForDecisions: what the decisions and checks use: no
// NUMA node, and no BARs (read_function_bars() reads them for the few functions that need them):
// on a fabric those two files were a third of the files read.
enum class FunctionDetail { kAll, kForDecisions };

// Walks /sys/bus/pci/devices of `source` and decodes every function. Throws Error for input that
// is not a PCI tree at all (no /sys/bus/pci/devices, links that leave the root, bad attribute text).
Topology read_topology(Source& source, const PciDecoder& decoder, FunctionDetail detail = FunctionDetail::kAll);
// Function::numa_unknown of a function read with FunctionDetail::kForDecisions: read it when needed.
inline constexpr const char* kNumaNotRead = "not read";
// Sets fn.numa_node from its sysfs numa_node file, or fn.numa_unknown to why it is unknown.
void read_function_numa(Source& source, Function& fn);
// Sets topo.numa_nodes from /sys/devices/system/node/online ("0-1"), or numa_nodes_unknown.
void read_numa_nodes(Source& source, Topology& topo);
// Sets fn.bars from its sysfs `resource` file (left empty when that cannot be read); throws Error
// on text that is not a resource table.
void read_function_bars(Source& source, Function& fn);

}  // namespace p2pcheck
