// The kernel's P2PDMA verdict for a pair, with the host check, per-direction meaning and what
// would change it. Implemented in src/p2pdma.cc beside the walk, so the rules live in one place.
#pragma once

#include <optional>
#include <string>

#include "p2pcheck/model/machine.h"
#include "p2pcheck/rules/paths.h"
#include "p2pcheck/rules/policy.h"

namespace p2pcheck {

// The kernel the verdict is evaluated for: the source's running kernel, or --assume-kernel.
struct KernelRules {
  std::string release;                  // "6.8.0-142-generic"; empty when unknown
  std::optional<KernelVersion> version;  // parsed upstream version
  bool assumed = false;                 // from --assume-kernel, not the source
  bool vendor_kernel = false;           // RHEL/SLES-style release: backports make the number unreliable
  std::string table_note;               // which allowlist table was assumed, and how sure that is
  // CONFIG_PCI_P2PDMA: true/false, nullopt when no config could be read.
  std::optional<bool> p2pdma_enabled;
  std::string config_file;
  const KnownBadKernel* known_bad = nullptr;
};
KernelRules kernel_rules_for(const Machine& machine, const std::optional<std::string>& assume_release);

enum class MapType { kBusAddr, kThruHostBridge, kNotSupported, kUnknown };
enum class Verdict { kSupported, kNotSupported, kUnknown };
const char* to_string(MapType t);  // the kernel's names: "BUS_ADDR", ...
const char* to_string(Verdict v);  // "supported", "not_supported", "unknown"

// __host_bridge_whitelist() for one host bridge.
struct BridgeCheck {
  std::string host_bridge;          // "0000:00"
  std::optional<Bdf> device;        // pci_host_bridge_dev(); nullopt: none, or unknown (below)
  bool device_unknown = false;      // first root-bus device's port type unreadable (needs root)
  std::uint16_t vendor = 0, device_id = 0;
  const AllowlistEntry* entry = nullptr;         // row in effect on the evaluated kernel
  const AllowlistEntry* later_entry = nullptr;   // row only newer (or pending) kernels have
  std::optional<bool> passes;
  std::string ids() const;  // "8086:6f00", as the kernel's allowlist and warning print them
};

struct HostCheck {
  std::optional<bool> cpu_supports;  // cpu_supports_p2pdma(): x86 AMD family >= 0x17
  bool same_host_bridge = true;
  std::vector<BridgeCheck> bridges;
  std::optional<bool> allowlisted;
  std::optional<bool> allowed;       // cpu_supports || allowlisted
};

struct Flow {
  Verdict verdict = Verdict::kUnknown;
  std::string reason;
  // What the hardware would do where the kernel's answer differs: "passes" (pre-Zen AMD writes),
  // "dropped" (pre-Zen AMD reads); empty when the kernel's answer is the whole story.
  std::string hardware;
};

// The running kernel's own answer for the pair, from the p2pprobe module (kmod/).
struct KernelVerdict {
  int distance = -1;                     // pci_p2pdma_distance_many(): -1 = not supported
  MapType map_type = MapType::kUnknown;  // observed with dma_map_sgtable(), else kUnknown
  std::string map_note;                  // why the map type was not observed
  bool provider_has_p2pmem = false;
  std::string provider_driver, client_driver;
};

struct PairDecision {
  PairPath path;
  MapType map_type = MapType::kUnknown;
  std::optional<int> distance;  // pci_p2pdma_distance(): the path distance, or -1 when refused
  Verdict verdict = Verdict::kUnknown;
  std::string rule;             // the rule that decided, one line
  bool host_checked = false;    // the path goes through the root complex
  HostCheck host;
  Flow to_gpu;    // storage -> GPU: the NVMe writes into the GPU's BAR (a P2P write)
  Flow from_gpu;  // GPU -> storage: the NVMe reads from the GPU's BAR (a P2P read)
  std::vector<std::string> unknowns;  // what could not be read and would decide it
  std::string acs_fix;          // "pci=disable_acs_redir=..." when ACS redirect is what blocks
  std::string later;            // "allowed from 7.1 on" / "would be allowed once ... is merged"
  std::optional<KernelVerdict> kernel;  // when the p2pprobe module answered
  std::optional<bool> kernel_agrees;    // ours vs the kernel's (distance, supported, map type)
};

// calc_map_type_and_dist() plus the host check, for the (GPU = provider, NVMe = client) pair,
// then the per-direction meaning and what the kernel does not know (pre-Zen AMD).
PairDecision decide_pair(const Topology& topo, const Inventory& inv, const Machine& machine,
                         const KernelRules& rules, const DevicePair& pair);

bool cpu_is_pre_zen_amd(const CpuInfo& cpu);

}  // namespace p2pcheck
