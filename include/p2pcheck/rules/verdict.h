// p2pcheck's verdict for a pair: the kernel's decision (rules/p2pdma.h) plus what the kernel does
// not know (pre-Zen AMD reads and writes), kernels never to trust, and CONFIG_PCI_P2PDMA.
// Decisions carry structured reasons; explain/ turns them into one explanation each (rule, cause, fix) and its
// sentences.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/machine.h"
#include "p2pcheck/rules/kernel_rules.h"
#include "p2pcheck/rules/p2pdma.h"
#include "p2pcheck/rules/pair_walk.h"
#include "p2pcheck/rules/policy.h"
#include "p2pcheck/rules/tri.h"

namespace p2pcheck {

enum class Verdict { kSupported, kNotSupported, kUnknown };
const char* to_string(Verdict v);  // "supported", "not_supported", "unknown"

// A fact that could not be read and would decide the pair.
enum class UnknownFact {
  kAcsControl,        // ACS Control of `function` (config space beyond 64 bytes needs root)
  kCpu,               // CPU vendor and family (no /proc/cpuinfo)
  kHostBridgeDevice,  // pci_host_bridge_dev() of `host_bridge` (first device's port type needs root)
  kP2pdmaConfig,      // CONFIG_PCI_P2PDMA (no kernel config found)
  // The allowlist of a distribution kernel whose own table was not read: `host_bridge`'s device is
  // not on upstream's table of its version, but a backport may have added it.
  kKernelTable,
};
struct Unknown {
  UnknownFact fact;
  const Function* function = nullptr;  // kAcsControl
  std::string host_bridge;             // kHostBridgeDevice, kKernelTable
  std::string not_carried;             // kCpu, kP2pdmaConfig, kHostBridgeDevice: the format's phrase if it lacks it
};

// Which rule decided the pair.
enum class DecidedBy {
  kCommonBridge,     // BUS_ADDR: a common upstream bridge and no ACS redirect below it
  kCpuAllows,        // THRU_HOST_BRIDGE allowed by cpu_supports_p2pdma()
  kAllowlistAllows,  // THRU_HOST_BRIDGE allowed by host_bridge_whitelist()
  kHostCheckFails,   // NOT_SUPPORTED: neither the CPU nor the host bridge(s) pass
  kEitherWay,        // ACS unknown, but the host check passes: allowed, map type open
  kCannotDecide,     // an unknown fact decides it (`undecided_by`)
  kNoP2pdmaConfig,   // p2pcheck: kernel built without CONFIG_PCI_P2PDMA, every call is a stub
};

// Why one direction gets its verdict.
enum class FlowReason {
  kAllowed,            // allowed inside the switch / through the root complex
  kSameAsRule,         // not allowed (or unknown) for the reason the rule gives
  kPreZenWritePasses,  // the kernel refuses; a pre-Zen AMD root complex would pass this P2P write
  kPreZenReadDropped,  // the kernel refuses; pre-Zen AMD root complexes drop P2P reads anyway
  kKnownBadKernel,     // this kernel corrupts memory with P2PDMA
};

// What the hardware would do where the kernel's answer differs (pre-Zen AMD).
enum class Hardware { kAsTheKernelSays, kPasses, kDropped };

struct Flow {
  Verdict verdict = Verdict::kUnknown;
  FlowReason reason = FlowReason::kSameAsRule;
  Hardware hardware = Hardware::kAsTheKernelSays;
};

// The running kernel's own answer for the pair, from the p2pprobe module (kmod/).
struct KernelVerdict {
  int distance = -1;                     // pci_p2pdma_distance_many(): -1 = not supported
  MapType map_type = MapType::kUnknown;  // observed with dma_map_sgtable(), else kUnknown
  std::string map_note;                  // why the map type was not observed
  bool provider_has_p2pmem = false;
  std::string provider_driver, client_driver;
};

// std::optional's interface for what most pairs lack (an undecided fact, the kernel module's
// answer), held on the heap: empty, it costs a pointer, not the value's size, in each of the
// hundreds of thousands of PairDecisions of a fabric.
template <typename T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(const T& value) : value_(std::make_unique<T>(value)) {}  // NOLINT: as std::optional converts
  HeapOptional(const HeapOptional& o) : value_(o.value_ ? std::make_unique<T>(*o.value_) : nullptr) {}
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& o) {
    value_ = o.value_ ? std::make_unique<T>(*o.value_) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const T& value) {
    value_ = std::make_unique<T>(value);
    return *this;
  }
  explicit operator bool() const { return value_ != nullptr; }
  bool has_value() const { return value_ != nullptr; }
  void reset() { value_.reset(); }
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return value_.get(); }
  T* operator->() { return value_.get(); }

 private:
  std::unique_ptr<T> value_;
};

// Why a kernel has no P2PDMA (DecidedBy::kNoP2pdmaConfig): its config, its release's age, or the
// distribution-table row its release names.
struct NoP2pdma {
  P2pdmaBasis basis = P2pdmaBasis::kConfig;
  std::string config_file;               // kConfig: the file (or --kernel-config) that says so
  std::string release;                   // the release judged
  const DistroKernel* distro = nullptr;  // kDistroTable
};

struct PairDecision {
  PairWalk walk;  // calc_map_type_and_dist(): provider = GPU, client = NVMe; the route (pair_walk.h)
  MapType map_type = MapType::kUnknown;
  std::optional<int> distance;          // pci_p2pdma_distance(): the path distance, or -1 when refused
  Verdict verdict = Verdict::kUnknown;  // overall: the path, then the kernel itself (CONFIG, known-bad)
  // The first level: the PCI path alone under that kernel's rules, before CONFIG_PCI_P2PDMA and the
  // known-bad list. "Path allowed, kernel unknown" differs from "path unknown".
  MapType path_map_type = MapType::kUnknown;
  Verdict path_verdict = Verdict::kUnknown;
  DecidedBy decided_by = DecidedBy::kCannotDecide;
  HeapOptional<Unknown> undecided_by;  // kCannotDecide: the first unknown fact, if any
  bool host_checked = false;           // the path goes through the root complex
  HostCheck host;
  Flow to_gpu;                    // storage -> GPU: the NVMe writes into the GPU's BAR (a P2P write)
  Flow from_gpu;                  // GPU -> storage: the NVMe reads from the GPU's BAR (a P2P read)
  std::vector<Unknown> unknowns;  // what could not be read and would decide it
  // What could not be read but cannot change the answer: the host bridge devices when the CPU rule
  // allows the root complex (the kernel asks it first), the ACS along a path allowed either way.
  std::vector<Unknown> moot;
  // A refused pair's allowlist row that only a newer (or a pending) kernel has.
  const AllowlistEntry* later = nullptr;
  HeapOptional<NoP2pdma> no_p2pdma;           // kNoP2pdmaConfig: what says the kernel has no P2PDMA
  const KnownBadKernel* known_bad = nullptr;  // the flows are refused: this kernel corrupts memory
  HeapOptional<KernelVerdict> kernel;         // when the p2pprobe module answered
  Tri kernel_agrees = Tri::kUnknown;          // ours vs the kernel's (distance, supported, map type)
};

// calc_map_type_and_dist() plus the host check, for the (GPU = provider, NVMe = client) pair,
// then the per-direction meaning and what the kernel does not know (pre-Zen AMD).
PairDecision decide_pair(const Topology& topo, const Machine& machine, const KernelRules& rules,
                         const DevicePair& pair);

// Everything decide_pair() does after calc_map_type_and_dist(): the host check, the map type, the
// verdict and distance, the directions, then the kernel itself. `d.walk` is filled.
void decide_after_walk(const Topology& topo, const Machine& machine, const KernelRules& rules, PairDecision& d);

}  // namespace p2pcheck
