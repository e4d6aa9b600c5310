#include "p2pcheck/model/route.h"

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

}  // namespace p2pcheck
