// The hipfile engine of `p2pcheck verify`: VRAM of an AMD GPU <-> a file on NVMe through hipFile,
// the path applications use (hipFile -> hipAmdFileRead/Write -> amdgpu's AIS ioctl -> P2PDMA).
//
// Compat mode is forbidden (HIPFILE_ALLOW_COMPAT_MODE=false, HIPFILE_FORCE_COMPAT_MODE=false in this
// process's environment, set before hipFile loads) so an I/O that cannot go peer-to-peer fails
// instead of bouncing through host memory. A hipFile that bounces anyway is caught by amdgpu's
// per-process AIS counters: kfd_ais.c creates, per process and GPU, one pair of sysfs files named
// "<storage PCI BDF>:PCI_in" (bytes read from storage into VRAM) and "<storage PCI BDF>:PCI_out"
// (bytes written) the first time pci_p2pdma_distance() passes for that storage device, and adds every
// AIS transfer to them. They live in a per-GPU directory under /sys/class/kfd/kfd/proc/<pid>/ whose
// name we have not seen in a source, so we search that directory two levels deep for the file name.
// Counters that exist but do not grow by the bytes moved = a silent compat fallback.
#pragma once

#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/source/source.h"
#include "p2pcheck/verify/verify_engine.h"
#include "p2pcheck/verify/verify_io.h"

namespace p2pcheck {

struct HipfileConfig {
  // Tried in order; the first that loads wins. Tests point both lists at tests/hipfile_double.
  std::vector<std::string> hip_runtime_libraries = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                                                    "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"};
  std::vector<std::string> hipfile_libraries = {"libhipfile.so", "libhipfile.so.0", "/opt/rocm/lib/libhipfile.so"};
  int pid = 0;  // whose KFD counters to read; 0 = this process
};

// Loads the HIP runtime and hipFile, forbids compat mode, and opens hipFile's driver. `problems`
// says precisely what is missing ("HIP runtime not installed", "no AMD GPU visible to HIP",
// "hipFile not installed", "this HIP runtime cannot resolve hipAmdFileRead/hipAmdFileWrite").
// `kfd` is the engine's own view of /sys (a transfer runs on a worker thread; it must not share the
// caller's Source).
EngineAvailability open_hipfile_engine(const HipfileConfig& config, std::shared_ptr<DynamicLoader> loader,
                                       std::unique_ptr<Source> kfd);

// The AIS counter of `storage` for one direction (PCI_in for kToDevice, PCI_out for kToStorage),
// summed over every GPU directory of the process; nullopt when no such file exists.
struct AisCounterRead {
  std::vector<std::string> files;
  std::optional<std::uint64_t> total;
  std::string problem;  // a counter file that could not be read or parsed
};
AisCounterRead read_ais_counters(Source& source, int pid, const Bdf& storage, Direction direction);

// Before/after -> proven, fallback (exists but moved less than `bytes`), unproven (no counter).
CounterEvidence judge_counters(const AisCounterRead& before, const AisCounterRead& after, std::uint64_t bytes,
                               const std::string& looked_for);

// HIP_VERSION (major * 10000000 + minor * 100000 + patch) -> "5.2.21153".
std::string hip_version_text(int version);

}  // namespace p2pcheck
