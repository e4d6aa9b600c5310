// What moves the data in `p2pcheck verify`, and which mover a pair may use.
//
// Three engines, one interface:
//  - hipfile: AMD GPU VRAM <-> a file, through hipFile with compat mode forbidden (amdgpu's AIS path).
//  - kmod:    p2pmem of an NVMe CMB or a p2pprobe-bound device <-> storage, inside kmod/p2pprobe (DMA_TEST).
//  - p2pmem:  the same memory mapped into userspace (p2pmem/allocate, kernel 6.2+) <-> storage by O_DIRECT.
// Never kmod or p2pmem for memory a GPU driver registered: its memory manager owns those pages, and
// handing them out corrupts GPU memory (facts §4; kmod/README.md "Safety rules").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/model/pci.h"
#include "p2pcheck/verify/verify_pattern.h"

namespace p2pcheck {

enum class EngineKind { kHipfile, kKmod, kP2pmem };
const char* to_string(EngineKind kind);  // "hipfile", "kmod", "p2pmem"
std::optional<EngineKind> parse_engine_kind(std::string_view text);

// Each direction is tested alone. kToDevice: storage -> device, the NVMe writes into the provider's
// BAR (a P2P write). kToStorage: device -> storage, the NVMe reads the provider's BAR (a P2P read).
enum class Direction { kToDevice, kToStorage };
const char* to_string(Direction d);  // "to_device", "to_storage"
// "to-device"/"to_device", "to-storage"/"to_storage"; nullopt otherwise.
std::optional<Direction> parse_direction(std::string_view text);

struct TransferTarget {
  int fd = -1;  // scratch file opened O_DIRECT, or a raw namespace opened O_EXCL|O_DIRECT
  std::string path;
  bool block_device = false;
  std::uint64_t offset = 0;  // the only range any engine may write: [offset, offset + size)
  std::uint64_t size = 0;
};

struct TransferRequest {
  Bdf provider;  // whose memory: the GPU (hipfile) or the p2pmem provider
  Bdf client;    // the NVMe controller under the target
  Direction direction = Direction::kToDevice;
  TransferTarget target;
  std::uint64_t chunk = 0;  // bytes of device memory moved per I/O
  std::uint64_t seed = 0;
};

// amdgpu's per-process AIS counters (`<storage BDF>:PCI_in` / `PCI_out`), before and after.
enum class PathProof {
  kProven,    // the counter grew by at least the bytes moved: the data went the AIS P2P way
  kFallback,  // the counter exists but grew by less: hipFile bounced the data through host memory
  kUnproven,  // no counter: an amdgpu without per-process AIS counters, or the I/O never took the AIS path
};
const char* to_string(PathProof p);  // "proven", "fallback", "unproven"

struct CounterEvidence {
  std::string file;  // the counter file(s) read, or the pattern looked for
  std::optional<std::uint64_t> before, after;
  std::uint64_t expected = 0;  // bytes the transfer moved
  PathProof proof = PathProof::kUnproven;
  std::string note;
};

struct TransferResult {
  int error = 0;                         // 0, or the negative errno of the first failure
  std::string error_text;                // the engine's own words when there is no errno (a hipFile or HIP error)
  std::uint64_t bytes = 0;               // moved before the first failure
  std::uint64_t ns = 0;                  // spent inside the P2P I/O calls only
  std::optional<DataMismatch> mismatch;  // kToDevice: compared by the engine
  std::optional<CounterEvidence> counters;
  std::vector<std::string> notes;
  bool failed() const { return error != 0 || !error_text.empty(); }
};

class VerifyEngine {
 public:
  virtual ~VerifyEngine() = default;
  virtual EngineKind kind() const = 0;
  // Moves the target range once in `request.direction`. kToDevice: the pattern is already on storage
  // (the runner wrote it with ordinary I/O); the engine reads it into device memory and compares.
  // kToStorage: the engine fills device memory with the pattern and writes it out; the runner reads
  // it back with ordinary I/O. Runs on a worker thread that may be abandoned at the deadline, so it
  // owns everything it touches. I/O outcomes are results, not exceptions.
  virtual TransferResult transfer(const TransferRequest& request) = 0;
};

// An engine opened for this machine, or why it cannot run here ("no AMD GPU visible to HIP").
struct EngineAvailability {
  std::shared_ptr<VerifyEngine> engine;
  std::vector<std::string> problems;
  std::vector<std::string> facts;  // what was found on the way ("HIP runtime 5.2 at ...")
};

// Opens engines on demand (once each); the live one in verify_engines.cc, fakes in tests.
class EngineProvider {
 public:
  virtual ~EngineProvider() = default;
  virtual EngineAvailability get(EngineKind kind) = 0;
};

// Which engine a provider may use: the requested one, or the machine's natural one (nullopt = auto).
struct EngineChoice {
  std::optional<EngineKind> kind;
  std::string refusal;  // why none may be used; empty when `kind` is set
};
// Drivers that own their device's P2P memory: never kmod or p2pmem for these.
bool is_gpu_driver(const std::string& driver);
EngineChoice choose_engine(const Function& provider, std::optional<EngineKind> requested);

}  // namespace p2pcheck
