#include "p2pcheck/model/locality.h"

#include <algorithm>

namespace p2pcheck {
namespace {

// One row per class: its JSON token, matrix code, nvidia-smi word and legend. nvidia-smi's words
// are NVML's nvmlGpuTopologyLevel_t as `nvidia-smi topo -m` prints them (its legend: PIX "at most
// a single PCIe bridge", PXB "multiple PCIe bridges", PHB "a PCIe host bridge", NODE "the
// interconnect between PCIe host bridges within a NUMA node", SYS "the SMP interconnect between
// NUMA nodes").
struct ClassRow {
  LocalityClass cls;
  const char* token;
  const char* code;
  const char* words;       // locality_text()'s
  const char* nvidia_smi;  // a switch's is PIX or PXB, by how deep the ends sit
  const char* meaning;
};
constexpr ClassRow kClasses[] = {
    {LocalityClass::kSameSwitch, "same_switch", "SW", "same PCIe switch", "PIX",
     "same PCIe switch: the paths meet at a switch port below the root port (nvidia-smi PIX, PXB)"},
    {LocalityClass::kSameRootPort, "same_root_port", "RP", "same root port", "PHB",
     "same root port: the paths meet at a root port (nvidia-smi PHB)"},
    {LocalityClass::kSameHostBridge, "same_host_bridge", "HB", "same host bridge", "PHB",
     "same host bridge: different root ports of one root bus (nvidia-smi PHB)"},
    {LocalityClass::kSameNumaNode, "same_numa_node", "NODE", "same NUMA node", "NODE",
     "same NUMA node: different host bridges of one node (nvidia-smi NODE)"},
    {LocalityClass::kAcrossNumaNodes, "across_numa_nodes", "SYS", "across NUMA nodes", "SYS",
     "across NUMA nodes: over the socket interconnect (nvidia-smi SYS)"},
    {LocalityClass::kUnknown, "unknown", "?", "unknown", "", "locality unknown"},
};

const ClassRow& row(LocalityClass c) {
  for (const ClassRow& r : kClasses)
    if (r.cls == c) return r;
  return kClasses[std::size(kClasses) - 1];
}

// A function's NUMA node: the node, nullopt for NUMA_NO_NODE (-1), or why it is not known.
struct Node {
  std::optional<int> node;
  std::string unknown;
};
Node node_of(const Function& fn) {
  if (!fn.numa_unknown.empty()) return {std::nullopt, fn.numa_unknown};
  return {fn.numa_node >= 0 ? std::optional<int>(fn.numa_node) : std::nullopt, ""};
}

// Different host bridges: the NUMA nodes decide between NODE and SYS.
Locality by_numa(const Topology& topo, const Function& gpu, const Function& nvme) {
  Locality l;
  Node g = node_of(gpu), n = node_of(nvme);
  l.gpu_node = g.node;
  l.nvme_node = n.node;
  if (!g.unknown.empty() || !n.unknown.empty()) {
    if (g.unknown == n.unknown)
      l.why = "NUMA node " + g.unknown;
    else
      l.why = !g.unknown.empty() ? "NUMA node of " + gpu.bdf.str() + " " + g.unknown
                                 : "NUMA node of " + nvme.bdf.str() + " " + n.unknown;
    return l;
  }
  if (g.node && n.node) {
    l.cls = *g.node == *n.node ? LocalityClass::kSameNumaNode : LocalityClass::kAcrossNumaNodes;
  } else if (topo.numa_nodes == 1) {
    // NUMA_NO_NODE on a one-node machine: every device is on that node.
    l.cls = LocalityClass::kSameNumaNode;
  } else {
    const Function& none = g.node ? nvme : gpu;
    l.why = "firmware gives " + none.bdf.str() + " no NUMA node (numa_node -1) and the machine has " +
            (topo.numa_nodes ? std::to_string(*topo.numa_nodes) + " NUMA nodes"
                             : "an unknown number of NUMA nodes (" + topo.numa_nodes_unknown + ")");
  }
  return l;
}

}  // namespace

const char* to_string(LocalityClass c) { return row(c).token; }
const char* locality_code(LocalityClass c) { return row(c).code; }
const char* locality_meaning(LocalityClass c) { return row(c).meaning; }

Locality classify_locality(const Topology& topo, const Function& gpu, const Function& nvme, const Function* common,
                           std::size_t gpu_steps, std::size_t nvme_steps) {
  Locality l;
  if (!common && gpu.host_bridge != nvme.host_bridge) {
    l = by_numa(topo, gpu, nvme);
  } else {
    l.cls = !common ? LocalityClass::kSameHostBridge
            : !common->parent
                ? LocalityClass::kSameRootPort  // on the root bus: a root port (or the root complex's own bridge)
                : LocalityClass::kSameSwitch;
    Node g = node_of(gpu), n = node_of(nvme);
    l.gpu_node = g.node;
    l.nvme_node = n.node;
  }
  l.nvidia_smi = row(l.cls).nvidia_smi;
  // One switch when each end hangs directly below the bridge where they meet or one port below it.
  if (l.cls == LocalityClass::kSameSwitch && (gpu_steps > 2 || nvme_steps > 2)) l.nvidia_smi = "PXB";
  return l;
}

std::string locality_text(const Locality& l) {
  if (l.cls == LocalityClass::kUnknown) return "unknown: " + l.why;
  std::string out = row(l.cls).words;
  if (l.cls == LocalityClass::kSameNumaNode && l.gpu_node) out += " " + std::to_string(*l.gpu_node);
  if (l.cls == LocalityClass::kAcrossNumaNodes && l.gpu_node && l.nvme_node)
    out += " " + std::to_string(*l.gpu_node) + " and " + std::to_string(*l.nvme_node);
  return out + " (nvidia-smi " + l.nvidia_smi + ")";
}

}  // namespace p2pcheck
