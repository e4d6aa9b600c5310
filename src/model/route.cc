#include "p2pcheck/model/route.h"

#include <algorithm>

namespace p2pcheck {

std::string role_of(const Function& fn, const Inventory& inv) {
  if (inv.is_gpu(fn.bdf)) return "GPU";
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
  return describe_path(inv, meet_upstream(topo, topo.at(pair.gpu), topo.at(pair.nvme)));
}

PairPath describe_path(const Inventory&, const UpstreamMeeting& meeting) {
  PairPath path;
  const Function& gpu = *meeting.a;
  const Function& nvme = *meeting.b;
  path.pair = {gpu.bdf, nvme.bdf};
  path.common = meeting.common;
  path.distance = meeting.distance;
  path.gpu_side = meeting.a_side;
  path.nvme_side = meeting.b_side;
  if (!path.common) {
    // Through the root complex: up to the GPU's host bridge, across to the NVMe's if it differs.
    path.host_bridges.push_back(gpu.host_bridge);
    if (nvme.host_bridge != gpu.host_bridge) path.host_bridges.push_back(nvme.host_bridge);
  }
  return path;
}

std::vector<Hop> path_hops(const Inventory& inv, const PairPath& path) {
  std::vector<Hop> hops;
  hops.reserve(path.gpu_side.size() + path.nvme_side.size() + 2);
  for (const Function* fn : path.gpu_side) hops.push_back({fn, "", role_of(*fn, inv)});
  if (path.common) {
    hops.push_back({path.common, "", role_of(*path.common, inv)});
  } else {
    for (const auto& id : path.host_bridges) hops.push_back({nullptr, id, "host bridge"});
  }
  for (auto it = path.nvme_side.rbegin(); it != path.nvme_side.rend(); ++it)
    hops.push_back({*it, "", role_of(**it, inv)});
  return hops;
}

std::vector<const Function*> path_functions(const PairPath& path) {
  std::vector<const Function*> fns(path.gpu_side.begin(), path.gpu_side.end());
  if (path.common) fns.push_back(path.common);
  fns.insert(fns.end(), path.nvme_side.rbegin(), path.nvme_side.rend());
  return fns;
}

}  // namespace p2pcheck
