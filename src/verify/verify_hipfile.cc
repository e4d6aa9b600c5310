#include "p2pcheck/verify/verify_hipfile.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/verify/hip_api.h"

namespace p2pcheck {
namespace {

const char* kProcDir = "/sys/class/kfd/kfd/proc/";

std::string counter_name(const Bdf& storage, Direction d) {
  return storage.str() + (d == Direction::kToDevice ? ":PCI_in" : ":PCI_out");
}

template <typename F>
bool resolve(DynamicLoader& loader, void* handle, const char* name, F& fn, std::vector<std::string>& missing) {
  fn = reinterpret_cast<F>(loader.symbol(handle, name));
  if (!fn) missing.push_back(name);
  return fn != nullptr;
}

// Tries each name; returns the handle and, when none loads, the first loader error (the most
// telling: the plain .so name).
void* load_first(DynamicLoader& loader, const std::vector<std::string>& names, std::string& path, std::string& error) {
  for (const auto& name : names) {
    std::string err;
    if (void* h = loader.open(name, err)) {
      path = loader.path_of(h);
      if (path.empty()) path = name;
      return h;
    }
    if (error.empty()) error = err;
  }
  return nullptr;
}

std::string error_name(const hip::RuntimeApi& hip, hip::Error e) {
  const char* text = hip.get_error_string ? hip.get_error_string(e) : nullptr;
  return text ? text : "HIP error " + std::to_string(e);
}

class HipfileEngine : public VerifyEngine {
 public:
  HipfileEngine(hip::RuntimeApi hip, hipfile::Api hf, std::unique_ptr<Source> kfd, int pid)
      : hip_(hip), hf_(hf), kfd_(std::move(kfd)), pid_(pid) {}
  ~HipfileEngine() override {
    // Balances hipFileDriverOpen (reference counted inside hipFile).
    (void)hf_.driver_close();
  }
  EngineKind kind() const override { return EngineKind::kHipfile; }

  TransferResult transfer(const TransferRequest& r) override {
    TransferResult out;
    int device = find_device(r.provider, out);
    if (device < 0) return out;
    if (!hip_ok(hip_.set_device(device), "hipSetDevice", out)) return out;
    void* vram = nullptr;
    if (!hip_ok(hip_.malloc(&vram, r.chunk), "hipMalloc(" + format_size(r.chunk) + ")", out)) return out;
    // Registration is optional in hipFile; it pins the bounds checks, and a refusal is worth a note.
    hipfile::Error reg = hf_.buf_register(vram, r.chunk, 0);
    if (reg.err != hipfile::kSuccess)
      out.notes.push_back("hipFileBufRegister: " + hipfile_error(reg.err, reg.hip_drv_err));
    hipfile::Descr descr{};
    descr.type = hipfile::kHandleTypeOpaqueFD;
    descr.handle.fd = r.target.fd;
    hipfile::Handle fh = nullptr;
    hipfile::Error hr = hf_.handle_register(&fh, &descr);
    if (hr.err != hipfile::kSuccess) {
      out.error_text = "hipFileHandleRegister(" + r.target.path + "): " + hipfile_error(hr.err, hr.hip_drv_err);
    } else {
      const std::string looked_for =
          std::string(kProcDir) + std::to_string(pid_) + "/*/" + counter_name(r.client, r.direction);
      AisCounterRead before = read_ais_counters(*kfd_, pid_, r.client, r.direction);
      move(r, fh, vram, out);
      AisCounterRead after = read_ais_counters(*kfd_, pid_, r.client, r.direction);
      if (out.bytes > 0) out.counters = judge_counters(before, after, out.bytes, looked_for);
      for (const auto* read : {&before, &after})
        if (!read->problem.empty()) out.notes.push_back(read->problem);
      hf_.handle_deregister(fh);
    }
    if (reg.err == hipfile::kSuccess) (void)hf_.buf_deregister(vram);
    (void)hip_.free(vram);
    return out;
  }

 private:
  void move(const TransferRequest& r, hipfile::Handle fh, void* vram, TransferResult& out) {
    AlignedBuffer host(r.chunk);
    const bool to_device = r.direction == Direction::kToDevice;
    const std::uint64_t end = r.target.offset + r.target.size;
    for (std::uint64_t at = r.target.offset; at < end;) {
      std::uint64_t n = std::min(r.chunk, end - at);
      if (!to_device) {
        fill_pattern(host.data(), n, at, r.seed);
        if (!hip_ok(hip_.memcpy(vram, host.data(), n, hip::kMemcpyHostToDevice), "hipMemcpy to the GPU", out)) return;
      }
      auto t0 = std::chrono::steady_clock::now();
      errno = 0;
      ssize_t rc = to_device ? hf_.read(fh, vram, n, static_cast<off_t>(at), 0)
                             : hf_.write(fh, vram, n, static_cast<off_t>(at), 0);
      int err = errno;
      out.ns += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
      if (rc < 0) {
        const char* call = to_device ? "hipFileRead" : "hipFileWrite";
        if (rc == -1) {
          out.error = err ? -err : -EIO;
          out.error_text = std::string(call) + " failed with compat mode forbidden";
        } else if (-rc > hipfile::kBaseErr) {
          out.error_text = std::string(call) + ": " + hipfile_error(static_cast<int>(-rc), 0) +
                           (-rc == hipfile::kIONotSupported ? " (the I/O cannot take the AIS P2P path and compat mode "
                                                              "is forbidden)"
                                                            : "");
        } else {
          out.error = static_cast<int>(rc);  // a negative errno, defensively
        }
        return;
      }
      out.bytes += static_cast<std::uint64_t>(rc);
      if (static_cast<std::uint64_t>(rc) != n) {
        out.error = -ENODATA;
        return;
      }
      if (to_device) {
        if (!hip_ok(hip_.memcpy(host.data(), vram, n, hip::kMemcpyDeviceToHost), "hipMemcpy from the GPU", out)) return;
        merge_mismatch(out.mismatch, check_pattern(host.data(), n, at, r.seed));
      }
      at += n;
    }
  }

  int find_device(const Bdf& gpu, TransferResult& out) {
    int count = 0;
    if (!hip_ok(hip_.get_device_count(&count), "hipGetDeviceCount", out)) return -1;
    std::vector<std::string> seen;
    for (int i = 0; i < count; ++i) {
      char id[64] = {};
      if (hip_.device_get_pci_bus_id(id, sizeof id, i) != hip::kSuccess) continue;
      seen.push_back(id);
      if (auto bdf = Bdf::parse(id); bdf && *bdf == gpu) return i;
    }
    out.error = -ENODEV;
    out.error_text = gpu.str() + " is not among the GPUs HIP sees (" + (seen.empty() ? "none" : join(seen, ", ")) +
                     "); check HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES";
    return -1;
  }

  bool hip_ok(hip::Error e, const std::string& what, TransferResult& out) {
    if (e == hip::kSuccess) return true;
    out.error_text = what + ": " + error_name(hip_, e) + " (" + std::to_string(e) + ")";
    return false;
  }

  std::string hipfile_error(int err, int hip_err) const {
    const char* text = hf_.get_op_error_string ? hf_.get_op_error_string(err) : nullptr;
    std::string out = std::string(text ? text : "hipFile error") + " (" + std::to_string(err) + ")";
    if (err == hipfile::kHipDriverError) out += ", HIP: " + error_name(hip_, hip_err);
    return out;
  }

  hip::RuntimeApi hip_;
  hipfile::Api hf_;
  std::unique_ptr<Source> kfd_;
  int pid_;
};

}  // namespace

std::string hip_version_text(int v) {
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." + std::to_string(v % 100000);
}

AisCounterRead read_ais_counters(Source& source, int pid, const Bdf& storage, Direction direction) {
  AisCounterRead out;
  const std::string name = counter_name(storage, direction);
  const std::string root = kProcDir + std::to_string(pid);
  auto take = [&](const std::string& file) {
    FileRead r = source.read(file);
    if (!r.ok()) {
      out.problem = file + ": " + (r.error.empty() ? "unreadable" : r.error);
      return;
    }
    auto value = parse_dec(trim(r.bytes));
    if (!value || *value < 0) {
      out.problem = file + ": not a byte count: \"" + std::string(trim(r.bytes)) + "\"";
      return;
    }
    out.files.push_back(file);
    out.total = out.total.value_or(0) + static_cast<std::uint64_t>(*value);
  };
  // The file may sit directly in proc/<pid> or one or two directories down (per GPU).
  for (const std::string& e1 : source.list(root)) {
    const std::string p1 = root + "/" + e1;
    if (e1 == name) {
      take(p1);
      continue;
    }
    for (const std::string& e2 : source.list(p1)) {
      const std::string p2 = p1 + "/" + e2;
      if (e2 == name) {
        take(p2);
        continue;
      }
      for (const std::string& e3 : source.list(p2))
        if (e3 == name) take(p2 + "/" + e3);
    }
  }
  return out;
}

CounterEvidence judge_counters(const AisCounterRead& before, const AisCounterRead& after, std::uint64_t bytes,
                               const std::string& looked_for) {
  CounterEvidence e;
  e.expected = bytes;
  e.before = before.total;
  e.after = after.total;
  e.file = after.files.empty() ? looked_for : join(after.files, " + ");
  if (!after.total) {
    e.proof = PathProof::kUnproven;
    e.note = "no " + looked_for +
             " counter: this amdgpu has no per-process AIS counters, or the I/O never took "
             "the AIS path; the P2P path is not proven";
    return e;
  }
  // A counter created during this transfer started from zero (kfd_ais_create_counter).
  std::uint64_t moved = *after.total - before.total.value_or(0);
  if (moved >= bytes) {
    e.proof = PathProof::kProven;
    e.note = "AIS counter grew by " + std::to_string(moved) + " bytes: the data went peer-to-peer";
  } else {
    e.proof = PathProof::kFallback;
    e.note = moved == 0 ? "AIS counter did not move: hipFile moved the data through host memory (a silent compat "
                          "fallback)"
                        : "AIS counter grew by " + std::to_string(moved) + " of " + std::to_string(bytes) +
                              " bytes: the rest bounced through host memory (a silent compat fallback)";
  }
  return e;
}

namespace {

// The HIP runtime: memory on the GPU and the AIS entry points hipFile needs. What it found and
// what is missing go to `out`.
void load_hip_runtime(const HipfileConfig& config, DynamicLoader& loader, hip::RuntimeApi& hip,
                      EngineAvailability& out) {
  std::string hip_path, hip_error;
  void* hip_lib = load_first(loader, config.hip_runtime_libraries, hip_path, hip_error);
  if (!hip_lib) {
    out.problems.push_back("HIP runtime not installed (" + hip_error + ")");
  } else {
    std::vector<std::string> missing;
    resolve(loader, hip_lib, "hipGetDeviceCount", hip.get_device_count, missing);
    resolve(loader, hip_lib, "hipDeviceGetPCIBusId", hip.device_get_pci_bus_id, missing);
    resolve(loader, hip_lib, "hipSetDevice", hip.set_device, missing);
    resolve(loader, hip_lib, "hipMalloc", hip.malloc, missing);
    resolve(loader, hip_lib, "hipFree", hip.free, missing);
    resolve(loader, hip_lib, "hipMemcpy", hip.memcpy, missing);
    resolve(loader, hip_lib, "hipGetErrorString", hip.get_error_string, missing);
    resolve(loader, hip_lib, "hipRuntimeGetVersion", hip.runtime_get_version, missing);
    hip.get_proc_address = reinterpret_cast<hip::GetProcAddressFn>(loader.symbol(hip_lib, "hipGetProcAddress"));
    if (!missing.empty()) {
      out.problems.push_back("HIP runtime " + hip_path + " lacks " + join(missing, ", "));
    } else {
      int version = 0;
      std::string version_text = hip.runtime_get_version(&version) == hip::kSuccess ? hip_version_text(version) : "?";
      out.facts.push_back("HIP runtime " + version_text + " (" + hip_path + ")");
      int count = 0;
      hip::Error rc = hip.get_device_count(&count);
      if (rc == hip::kErrorNoDevice || (rc == hip::kSuccess && count == 0)) {
        out.problems.push_back(
            "no AMD GPU visible to HIP (hipGetDeviceCount: " + (rc ? error_name(hip, rc) : "0 devices") + ")");
      } else if (rc != hip::kSuccess) {
        out.problems.push_back("hipGetDeviceCount failed: " + error_name(hip, rc));
      } else {
        out.facts.push_back("HIP sees " + std::to_string(count) + " GPU(s)");
      }
      // What hipFile's fastpath calls; hipFile resolves them the same way (src/amd_detail/hip.cpp).
      if (!hip.get_proc_address) {
        out.problems.push_back("HIP runtime " + version_text +
                               " has no hipGetProcAddress, so hipAmdFileRead/hipAmdFileWrite cannot be resolved: "
                               "hipFile's P2P fastpath needs a HIP runtime that provides them");
      } else {
        std::vector<std::string> absent;
        for (const char* name : {"hipAmdFileRead", "hipAmdFileWrite"}) {
          void* fn = nullptr;
          if (hip.get_proc_address(name, &fn, version, 0, nullptr) != hip::kSuccess || !fn) absent.push_back(name);
        }
        if (!absent.empty())
          out.problems.push_back("HIP runtime " + version_text + " does not provide " + join(absent, "/") +
                                 " (hipGetProcAddress): hipFile can only bounce through host memory");
      }
    }
  }
}

// hipFile itself: its API resolved into `hf`, its version a fact.
void load_hipfile(const HipfileConfig& config, DynamicLoader& loader, hipfile::Api& hf, EngineAvailability& out) {
  std::string hf_path, hf_error;
  void* hf_lib = load_first(loader, config.hipfile_libraries, hf_path, hf_error);
  if (!hf_lib) {
    out.problems.push_back("hipFile not installed (" + hf_error + ")");
  } else {
    std::vector<std::string> missing;
    resolve(loader, hf_lib, "hipFileDriverOpen", hf.driver_open, missing);
    resolve(loader, hf_lib, "hipFileDriverClose", hf.driver_close, missing);
    resolve(loader, hf_lib, "hipFileHandleRegister", hf.handle_register, missing);
    resolve(loader, hf_lib, "hipFileHandleDeregister", hf.handle_deregister, missing);
    resolve(loader, hf_lib, "hipFileBufRegister", hf.buf_register, missing);
    resolve(loader, hf_lib, "hipFileBufDeregister", hf.buf_deregister, missing);
    resolve(loader, hf_lib, "hipFileRead", hf.read, missing);
    resolve(loader, hf_lib, "hipFileWrite", hf.write, missing);
    resolve(loader, hf_lib, "hipFileGetOpErrorString", hf.get_op_error_string, missing);
    hf.get_version = reinterpret_cast<hipfile::GetVersionFn>(loader.symbol(hf_lib, "hipFileGetVersion"));
    if (!missing.empty()) {
      out.problems.push_back("hipFile " + hf_path + " lacks " + join(missing, ", "));
    } else {
      unsigned major = 0, minor = 0, patch = 0;
      std::string v = hf.get_version && hf.get_version(&major, &minor, &patch).err == hipfile::kSuccess
                          ? std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)
                          : "?";
      out.facts.push_back("hipFile " + v + " (" + hf_path + ")");
    }
  }
}

}  // namespace

EngineAvailability open_hipfile_engine(const HipfileConfig& config, std::shared_ptr<DynamicLoader> loader,
                                       std::unique_ptr<Source> kfd) {
  EngineAvailability out;
  hip::RuntimeApi hip;
  hipfile::Api hf;
  // hipFile reads these when it initializes. Set before any ROCm library loads: setenv() races with
  // getenv() on the runtime's own threads.
  setenv(hipfile::kAllowCompatModeEnv, "false", 1);
  setenv(hipfile::kForceCompatModeEnv, "false", 1);
  out.facts.push_back(std::string(hipfile::kAllowCompatModeEnv) + "=false: an I/O that cannot go peer-to-peer fails");

  load_hip_runtime(config, *loader, hip, out);
  load_hipfile(config, *loader, hf, out);
  if (!out.problems.empty()) return out;

  hipfile::Error open = hf.driver_open();
  if (open.err != hipfile::kSuccess) {
    const char* text = hf.get_op_error_string(open.err);
    out.problems.push_back("hipFileDriverOpen: " + std::string(text ? text : "error") + " (" +
                           std::to_string(open.err) + ")");
    return out;
  }
  out.engine = std::make_shared<HipfileEngine>(hip, hf, std::move(kfd), config.pid ? config.pid : getpid());
  return out;
}

}  // namespace p2pcheck
