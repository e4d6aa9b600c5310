// How near a GPU and an NVMe sit, in the words of `nvidia-smi topo -m` and lstopo: below one PCIe
// switch, one root port, one host bridge, one NUMA node, or across NUMA nodes. A topology fact shown
// BESIDE the kernel's verdict: it never changes it (the kernel asks only whether the chains meet and
// what the root complex allows; rules/ decides that).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/topology.h"

namespace p2pcheck {

enum class LocalityClass {
  kSameSwitch,       // the common upstream bridge is a switch port below the root port (PIX/PXB)
  kSameRootPort,     // the common upstream bridge is on the root bus: a root port (PHB)
  kSameHostBridge,   // no common bridge, one host bridge (root bus) (PHB)
  kSameNumaNode,     // different host bridges on one NUMA node (NODE)
  kAcrossNumaNodes,  // different NUMA nodes: the socket interconnect, or the fabric between a socket's nodes (SYS)
  kUnknown,          // different host bridges and a NUMA node not known (`why`)
};

struct Locality {
  LocalityClass cls = LocalityClass::kUnknown;
  // nvidia-smi topo -m's word: PIX (one switch), PXB (several), PHB, NODE, SYS; "" when unknown.
  const char* nvidia_smi = "";
  std::optional<int> gpu_node, nvme_node;  // each end's NUMA node where known
  std::string why;                         // kUnknown: what is not known, e.g. "NUMA node not in this lspci output"
};

// "same_switch", "same_root_port", "same_host_bridge", "same_numa_node", "across_numa_nodes", "unknown".
const char* to_string(LocalityClass c);
// A short code for the matrix ("SW", "RP", "HB", "NODE", "SYS", "?") and a sentence for its legend.
const char* locality_code(LocalityClass c);
const char* locality_meaning(LocalityClass c);

// The one classification, from where the pair's chains meet (its walk, rules/p2pdma.h, finds that):
// `common` the bridge where they meet (nullptr when they do not), `gpu_steps` and `nvme_steps` the
// functions below it on each side.
// NUMA: a node of -1 (the kernel's NUMA_NO_NODE) is a known fact on a machine with one NUMA node
// (every device is on it) and unknown on one with several (firmware gave the device no proximity).
Locality classify_locality(const Topology& topo, const Function& gpu, const Function& nvme, const Function* common,
                           std::size_t gpu_steps, std::size_t nvme_steps);
// "same NUMA node 0, different host bridges (NODE)", "unknown: NUMA node not in this lspci output".
std::string locality_text(const Locality& l);

}  // namespace p2pcheck
