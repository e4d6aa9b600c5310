// Live-only actions: what only the running machine can answer beyond reading its files (NVMe
// Identify and controller registers, whether the HIP runtime loads, the kernel module's results).
// This is deliberately separate from Source: replay sources (trees, archives, imports) have no
// DeviceActions, so nothing that runs on a replay can reach the hardware of the machine doing the
// analysis. Only `p2pcheck capture` on the live source gets one, and stores the answers under live/.
#pragma once

#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/live/watch_probe.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// Results that live-only commands leave on the machine for capture to pick up, each stored as
// live/<name> only when the file exists and is a JSON document of that schema. `p2pcheck verify`
// (real DMA through the kernel module and hipFile) writes the first.
inline constexpr const char* kVerifyResultsPath = "/run/p2pcheck/verify.json";
struct SavedResults {
  const char* path;    // on the live machine
  const char* name;    // under live/ in the capture
  const char* schema;  // what its "schema" field must say
};
inline constexpr SavedResults kSavedResults[] = {
    {kVerifyResultsPath, "verify.json", "p2pcheck.verify"},
};

// Controller Memory Buffer, from the CMBLOC and CMBSZ registers (NVMe base spec 3.1.3.11-12).
struct NvmeCmb {
  std::uint32_t cmbloc = 0, cmbsz = 0;
  std::uint64_t size = 0;    // bytes; 0 = no CMB
  int bar = 0;               // BIR: which BAR holds it
  std::uint64_t offset = 0;  // bytes into that BAR
  bool sqs = false, cqs = false, lists = false, rds = false, wds = false;
};
NvmeCmb decode_cmb(std::uint32_t cmbloc, std::uint32_t cmbsz);

struct NvmeIdentity {
  std::string controller;  // "nvme0"
  Bdf bdf;
  // Identify Controller through libnvme on /dev/<controller> (needs CAP_SYS_ADMIN).
  bool identify_ok = false;
  std::string identify_error;  // why not: "needs root", "no /dev/nvme0", the ioctl's error
  std::string model, serial, firmware;
  std::uint16_t vid = 0, ssvid = 0, oacs = 0;
  std::uint8_t cmic = 0;
  std::uint32_t version = 0, ctratt = 0;
  // Controller registers from BAR0 (resource0, read-only mapping; needs root).
  bool registers_ok = false;
  std::string registers_error;
  std::uint64_t cap = 0;
  std::uint32_t vs = 0;
  NvmeCmb cmb;
};
// Fills the identity fields from a 4096-byte Identify Controller data structure.
void decode_identify(const unsigned char* id_ctrl, NvmeIdentity& out);
// /dev/nvmeX opened as libnvme's nvme_open() opens it: read-only, and -1 with errno EINVAL when it
// is not a character device (-1 with open's errno when it cannot be opened).
int open_nvme_controller(const std::string& dev);

// One shared library loaded with dlopen in a child process (so a crashing or hanging runtime
// cannot take capture down), and which of the named symbols it exports.
struct LibraryProbe {
  std::string library;  // "libamdhip64.so"
  bool loaded = false;
  std::string path;   // the file the dynamic loader picked
  std::string error;  // dlerror(), or why the child failed
  std::map<std::string, bool> symbols;
  std::optional<int> runtime_version;  // hipRuntimeGetVersion(), when it answered
};

struct HipProbe {
  LibraryProbe hip_runtime;  // libamdhip64.so: hipAmdFileRead / hipAmdFileWrite
  LibraryProbe hipfile;      // libhipfile.so
};

// The running kernel's own answers through the p2pprobe module, for the pairs the analysis found.
struct KernelModuleAnswers {
  bool available = false;
  std::string problem;  // why not: not loaded, needs root, another API version
  ModuleInfo info;
  std::vector<std::pair<DevicePair, KernelVerdict>> verdicts;
  std::vector<std::pair<DevicePair, std::string>> failures;  // pairs the module refused to answer
};

class DeviceActions {
 public:
  virtual ~DeviceActions() = default;
  virtual bool is_root() = 0;
  virtual std::string hostname() = 0;
  virtual std::time_t now() = 0;
  virtual NvmeIdentity nvme_identity(const std::string& controller, const Bdf& bdf) = 0;
  virtual HipProbe hip_probe() = 0;
  virtual KernelModuleAnswers kernel_module(const std::vector<DevicePair>& pairs) = 0;
  // The bytes of one of kSavedResults' paths; nullopt when absent.
  virtual std::optional<std::string> saved_results(const SavedResults& which) = 0;
  // Loads the `watch` probe (eBPF) with the plan's programs; the probe detaches when destroyed.
  virtual WatchStart start_watch(const WatchHookPlan& plan) = 0;
};

std::unique_ptr<DeviceActions> open_live_device_actions();

}  // namespace p2pcheck
