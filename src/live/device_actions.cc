// The live machine's device actions: libnvme for Identify, a read-only BAR0 mapping for the NVMe
// controller registers (as nvme-cli's show-regs does), dlopen in a child process for HIP.
#include "p2pcheck/live/device_actions.h"

#include "p2pcheck/source/json_text.h"

extern "C" {
#include <nvme/ioctl.h>
#include <nvme/types.h>
}
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_read.h"
#include "p2pcheck/source/source.h"
#include "p2pcheck/source/sysfs_text.h"
#include "uapi/p2pprobe.h"

namespace p2pcheck {

NvmeCmb decode_cmb(std::uint32_t cmbloc, std::uint32_t cmbsz) {
  NvmeCmb cmb;
  cmb.cmbloc = cmbloc;
  cmb.cmbsz = cmbsz;
  // SZU 0-6 are 4 KiB to 64 GiB; 7-15 are reserved, and 1 << (12 + 4 * 15) would be undefined
  // (libnvme's nvme_cmb_size() shifts without looking): a reserved unit means no usable CMB.
  unsigned szu = NVME_CMBSZ_SZU(cmbsz);
  std::uint64_t unit = szu <= 6 ? 1ull << (12 + 4 * szu) : 0;
  cmb.size = static_cast<std::uint64_t>(NVME_CMBSZ_SZ(cmbsz)) * unit;
  cmb.bar = static_cast<int>(NVME_CMBLOC_BIR(cmbloc));
  // OFST is in units of SZU, like the size (NVMe base spec: CMBLOC.OFST).
  cmb.offset = static_cast<std::uint64_t>(NVME_CMBLOC_OFST(cmbloc)) * unit;
  cmb.sqs = NVME_CMBSZ_SQS(cmbsz);
  cmb.cqs = NVME_CMBSZ_CQS(cmbsz);
  cmb.lists = NVME_CMBSZ_LISTS(cmbsz);
  cmb.rds = NVME_CMBSZ_RDS(cmbsz);
  cmb.wds = NVME_CMBSZ_WDS(cmbsz);
  return cmb;
}

namespace {

std::string trimmed_field(const char* data, size_t size) {
  std::string s(data, strnlen(data, size));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

// Identify data is little-endian on the wire; read it byte by byte at libnvme's field offsets.
std::uint32_t le(const unsigned char* base, size_t offset, size_t bytes) {
  std::uint32_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<std::uint32_t>(base[offset + i]) << (8 * i);
  return v;
}

}  // namespace

// Not libnvme's nvme_open(): it lives in libnvme's linux.c, which would link libcrypto in (for
// NVMe-oF keys) at every start; only the ioctl wrappers are linked (src/CMakeLists.txt).
int open_nvme_controller(const std::string& dev) {
  int fd = open(dev.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  bool stated = fstat(fd, &st) == 0;
  if (!stated || !S_ISCHR(st.st_mode)) {
    int err = stated ? EINVAL : errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

void decode_identify(const unsigned char* id, NvmeIdentity& out) {
  static_assert(sizeof(nvme_id_ctrl) == 4096);
  out.model = trimmed_field(reinterpret_cast<const char*>(id + offsetof(nvme_id_ctrl, mn)), sizeof(nvme_id_ctrl::mn));
  out.serial = trimmed_field(reinterpret_cast<const char*>(id + offsetof(nvme_id_ctrl, sn)), sizeof(nvme_id_ctrl::sn));
  out.firmware =
      trimmed_field(reinterpret_cast<const char*>(id + offsetof(nvme_id_ctrl, fr)), sizeof(nvme_id_ctrl::fr));
  out.vid = static_cast<std::uint16_t>(le(id, offsetof(nvme_id_ctrl, vid), 2));
  out.ssvid = static_cast<std::uint16_t>(le(id, offsetof(nvme_id_ctrl, ssvid), 2));
  out.cmic = id[offsetof(nvme_id_ctrl, cmic)];
  out.oacs = static_cast<std::uint16_t>(le(id, offsetof(nvme_id_ctrl, oacs), 2));
  out.version = le(id, offsetof(nvme_id_ctrl, ver), 4);
  out.ctratt = le(id, offsetof(nvme_id_ctrl, ctratt), 4);
}

namespace {

std::string errno_text(int err) {
  if (err == EACCES || err == EPERM) return std::string(std::strerror(err)) + ": needs root";
  return std::strerror(err);
}

void read_registers(NvmeIdentity& id) {
  std::string path = "/sys/bus/pci/devices/" + id.bdf.str() + "/resource0";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    id.registers_error = path + ": " + errno_text(errno);
    return;
  }
  long page = sysconf(_SC_PAGESIZE);
  void* map = mmap(nullptr, static_cast<size_t>(page), PROT_READ, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (map == MAP_FAILED) {
    id.registers_error = path + ": mmap: " + errno_text(err);
    return;
  }
  // MMIO: 32-bit volatile loads only, as the driver does (lo_hi_readq for CAP).
  auto reg = [&](size_t offset) {
    return *reinterpret_cast<volatile std::uint32_t*>(static_cast<char*>(map) + offset);
  };
  id.cap = reg(NVME_REG_CAP) | static_cast<std::uint64_t>(reg(NVME_REG_CAP + 4)) << 32;
  id.vs = reg(NVME_REG_VS);
  std::uint32_t cmbloc = reg(NVME_REG_CMBLOC), cmbsz = reg(NVME_REG_CMBSZ);
  munmap(map, static_cast<size_t>(page));
  if (id.cap == ~0ull) {
    id.registers_error = path + ": registers read as all ones (device powered down or gone)";
    return;
  }
  id.registers_ok = true;
  id.cmb = decode_cmb(cmbloc, cmbsz);
}

// Runs in the child: loads the library, looks up the symbols, writes JSON to `out`.
[[noreturn]] void probe_child(int out, const char* library, const std::vector<std::string>& symbols) {
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {  // a runtime that prints must not write into our output
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
  }
  nlohmann::json j;
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    j["error"] = e ? e : "dlopen failed";
  } else {
    j["loaded"] = true;
    struct link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) j["path"] = map->l_name;
    for (const auto& s : symbols) j["symbols"][s] = dlsym(handle, s.c_str()) != nullptr;
    using GetVersion = int (*)(int*);
    if (auto fn = reinterpret_cast<GetVersion>(dlsym(handle, "hipRuntimeGetVersion"))) {
      int version = 0;
      if (fn(&version) == 0) j["runtime_version"] = version;
    }
  }
  std::string text = json_text(j, -1);
  ssize_t ignored = write(out, text.data(), text.size());
  (void)ignored;
  _exit(0);
}

LibraryProbe probe_one(const std::string& library, const std::vector<std::string>& symbols);

// ROCm installs the unversioned name; distributions often only the versioned one (Debian's
// libamdhip64-5 has libamdhip64.so.5): try the name, then the sonames newest first.
LibraryProbe probe_library(const std::string& library, const std::vector<std::string>& symbols) {
  LibraryProbe first = probe_one(library, symbols);
  if (first.loaded) return first;
  for (const char* version : {".7", ".6", ".5"}) {
    LibraryProbe next = probe_one(library + version, symbols);
    if (next.loaded) return next;
  }
  return first;
}

// What the child writes to `fd` until it closes it; a runtime that hangs while initialising must
// not hang capture: 30 s, then the child is killed and `probe` says so.
std::string read_child_answer(int fd, pid_t pid, LibraryProbe& probe) {
  std::string text;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int rc = poll(&p, 1, 30000);
    if (rc <= 0) {
      probe.error = rc == 0 ? "timed out after 30 s loading the library" : std::strerror(errno);
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

// The child's answer is read by type like any outside JSON: a library that printed its own JSON
// into the pipe makes an unreadable answer, not an abort.
void read_probe_answer(LibraryProbe& probe, const std::string& text) {
  const std::string& library = probe.library;
  std::optional<nlohmann::ordered_json> parsed;
  try {
    parsed = parse_outside_json(text, "the " + library + " probe's answer");
  } catch (const Error&) {
    // Nested too deep: unreadable like any other broken answer.
  }
  if (!parsed) {
    probe.error = "unreadable answer from the probe";
    return;
  }
  const nlohmann::ordered_json& j = *parsed;
  try {
    JsonFields f(j, "the " + library + " probe's answer");
    probe.loaded = f.flag("loaded").value_or(false);
    probe.path = f.text("path").value_or("");
    probe.error = f.text("error").value_or("");
    if (const auto* symbols = f.object("symbols"))
      for (const auto& [name, found] : symbols->items()) {
        if (!found.is_boolean()) f.fail("symbols", "an object of true/false");
        probe.symbols[name] = found.get<bool>();
      }
    if (auto version = f.integer("runtime_version", INT32_MIN, INT32_MAX))
      probe.runtime_version = static_cast<int>(*version);
  } catch (const Error& e) {
    probe.loaded = false;
    probe.error = std::string("unreadable answer from the probe: ") + e.what();
  }
}

LibraryProbe probe_one(const std::string& library, const std::vector<std::string>& symbols) {
  LibraryProbe probe;
  probe.library = library;
  for (const auto& s : symbols) probe.symbols[s] = false;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    probe.error = std::string("pipe: ") + std::strerror(errno);
    return probe;
  }
  pid_t pid = fork();
  if (pid < 0) {
    probe.error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return probe;
  }
  if (pid == 0) {
    close(fds[0]);
    probe_child(fds[1], library.c_str(), symbols);
  }
  close(fds[1]);
  std::string text = read_child_answer(fds[0], pid, probe);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (probe.error.empty() && text.empty())
    probe.error = WIFSIGNALED(status)
                      ? "the library crashed while loading (signal " + std::to_string(WTERMSIG(status)) + ")"
                      : "no answer from the probe";
  if (!text.empty()) read_probe_answer(probe, text);
  return probe;
}

class LiveDeviceActions : public DeviceActions {
 public:
  bool is_root() override { return geteuid() == 0; }

  std::string hostname() override {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
  }

  std::time_t now() override { return std::time(nullptr); }

  NvmeIdentity nvme_identity(const std::string& controller, const Bdf& bdf) override {
    NvmeIdentity id;
    id.controller = controller;
    id.bdf = bdf;
    auto name = parse_nvme_name(controller);
    if (!name || name->kind != NvmeName::Kind::kController) {
      id.identify_error = id.registers_error = "not an NVMe controller name";
      return id;
    }
    std::string dev = "/dev/" + controller;
    struct stat st;
    if (stat(dev.c_str(), &st) != 0) {
      id.identify_error = "no " + dev + " (" + std::strerror(errno) + ")";
    } else {
      int fd = open_nvme_controller(dev);
      if (fd < 0) {
        id.identify_error = dev + ": " + errno_text(errno);
      } else {
        alignas(8) unsigned char data[sizeof(nvme_id_ctrl)] = {};
        int rc = nvme_identify_ctrl(fd, reinterpret_cast<nvme_id_ctrl*>(data));
        int err = errno;
        close(fd);
        if (rc == 0) {
          id.identify_ok = true;
          decode_identify(data, id);
        } else {
          id.identify_error = rc < 0 ? "Identify Controller: " + errno_text(err)
                                     : "Identify Controller: NVMe status " + std::to_string(rc);
        }
      }
    }
    read_registers(id);
    return id;
  }

  HipProbe hip_probe() override {
    HipProbe p;
    p.hip_runtime = probe_library("libamdhip64.so", {"hipAmdFileRead", "hipAmdFileWrite", "hipGetProcAddress"});
    p.hipfile = probe_library("libhipfile.so", {});
    return p;
  }

  KernelModuleAnswers kernel_module(const std::vector<DevicePair>& pairs) override {
    KernelModuleAnswers answers;
    try {
      P2pprobeClient client(open_ioctl_device(P2PPROBE_DEVICE_PATH));
      answers.info = client.info();
      answers.available = true;
      for (const DevicePair& pair : pairs) {
        try {
          // The GPU is the provider, as in the analysis (its BAR is the P2P memory).
          answers.verdicts.emplace_back(pair, client.verdict(pair.gpu, pair.nvme));
        } catch (const Error& e) {
          answers.failures.emplace_back(pair, e.what());
        }
      }
    } catch (const Error& e) {
      answers.problem = e.what();
    }
    return answers;
  }

  WatchStart start_watch(const WatchHookPlan& plan) override { return start_watch_probe(plan); }
  std::optional<std::string> saved_results(const SavedResults& which) override {
    int fd = open(which.path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string bytes;
    char buf[65536];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0 || bytes.size() > kMaxFileBytes) break;
      bytes.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return bytes;
  }
};

}  // namespace

std::unique_ptr<DeviceActions> open_live_device_actions() { return std::make_unique<LiveDeviceActions>(); }

}  // namespace p2pcheck
