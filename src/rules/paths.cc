#include "p2pcheck/rules/paths.h"

#include <algorithm>

namespace p2pcheck {

std::string role_of(const Function& fn, const Inventory& inv) {
  if (std::find(inv.gpus.begin(), inv.gpus.end(), fn.bdf) != inv.gpus.end()) return "GPU";
  if (inv.nvme_at(fn.bdf)) return "NVMe";
  switch (fn.port_type) {
    case PortType::kRootPort: return "root port";
    case PortType::kUpstreamPort: return "switch upstream port";
    case PortType::kDownstreamPort: return "switch downstream port";
    case PortType::kPcieToPciBridge: return "PCIe-to-PCI bridge";
    case PortType::kPciToPcieBridge: return "PCI-to-PCIe bridge";
    case PortType::kRcIntegratedEndpoint: return "root complex integrated endpoint";
    case PortType::kRcEventCollector: return "root complex event collector";
    case PortType::kEndpoint:
    case PortType::kLegacyEndpoint: return "endpoint";
    case PortType::kNotPcie: return fn.is_bridge() ? "PCI bridge" : "PCI function";
    case PortType::kUnknown: break;
  }
  return fn.is_bridge() ? "bridge (port type unknown)" : "function";
}

PairPath describe_path(const Topology& topo, const Inventory& inv, const DevicePair& pair) {
  PairPath path;
  path.pair = pair;
  const Function& gpu = topo.at(pair.gpu);
  const Function& nvme = topo.at(pair.nvme);
  path.walk = walk_p2p(topo, gpu, nvme);
  for (const Function* fn : path.walk.provider_side) path.hops.push_back({fn, "", role_of(*fn, inv)});
  if (path.walk.common) {
    path.hops.push_back({path.walk.common, "", role_of(*path.walk.common, inv)});
  } else {
    // Through the root complex: up to the GPU's host bridge, across to the NVMe's if it differs.
    path.host_bridges.push_back(gpu.host_bridge);
    if (nvme.host_bridge != gpu.host_bridge) path.host_bridges.push_back(nvme.host_bridge);
    for (const auto& id : path.host_bridges) path.hops.push_back({nullptr, id, "host bridge"});
  }
  for (auto it = path.walk.client_side.rbegin(); it != path.walk.client_side.rend(); ++it)
    path.hops.push_back({*it, "", role_of(**it, inv)});
  return path;
}

}  // namespace p2pcheck
