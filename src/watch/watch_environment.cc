// watch's read step (watch_environment.h): a handful of files, each read once through the Source.
#include "p2pcheck/watch/watch_environment.h"

#include <cerrno>
#include <vector>

#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/verify/verify_io.h"

namespace p2pcheck {

Tri LockdownState::forbids_watch() const {
  if (status == ReadStatus::kMissing) return Tri::kNo;  // no lockdown LSM
  if (status != ReadStatus::kOk || mode.empty()) return Tri::kUnknown;
  return tri(mode == "confidentiality");
}

namespace {

LockdownState read_lockdown(Source& source) {
  FileRead r = source.read(kLockdownPath);
  LockdownState out;
  out.status = r.status;
  out.error = r.error;
  if (!r.ok()) return out;
  // "none [integrity] confidentiality": the kernel brackets the mode in force.
  std::string_view text = trim(r.bytes);
  std::size_t open = text.find('['), close = text.find(']');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open + 1)
    out.mode = std::string(text.substr(open + 1, close - open - 1));
  return out;
}

NvidiaFsState read_nvidia_fs(Source& source) {
  NvidiaFsState out;
  if (source.exists(kNvidiaFsModulePath))
    out.loaded = Tri::kYes;
  else if (source.not_carried(kNvidiaFsModulePath))
    out.loaded = Tri::kUnknown;
  FileRead stats = source.read(kNvidiaFsStatsPath);
  if (stats.ok()) out.stats = std::string(utf8_prefix(stats.bytes, kMaxNvidiaFsStatsBytes));
  return out;
}

}  // namespace

WatchEnvironment read_watch_environment(Source& source) {
  WatchEnvironment env;
  FileRead release = source.read(kOsreleasePath);
  if (release.ok())
    env.kernel_release = std::string(utf8_prefix(trim(release.bytes), kMaxReleaseBytes));
  else
    env.release_unread = why_unread(release);
  env.lockdown = read_lockdown(source);
  env.nvidia_fs = read_nvidia_fs(source);
  env.btf = source.read(kVmlinuxBtfPath);
  return env;
}

std::optional<std::string> cannot_watch_reason(const WatchEnvironment& env, bool root) {
  std::vector<std::string> reasons;
  if (env.lockdown.forbids_watch() == Tri::kYes)
    reasons.push_back(std::string("kernel lockdown is in confidentiality mode (") + kLockdownPath +
                      "): it forbids bpf_probe_read_kernel(), which the probe reads every device and disk name with");
  if (env.btf.status == ReadStatus::kMissing)
    reasons.push_back(
        std::string("no BTF: ") + kVmlinuxBtfPath +
        " is missing (a kernel built without CONFIG_DEBUG_INFO_BTF); the probe's CO-RE relocations need it");
  else if (!env.btf.ok())
    reasons.push_back(std::string(kVmlinuxBtfPath) + " could not be read: " + why_unread(env.btf));
  if (!root) reasons.push_back("not root: loading the eBPF probe needs root (CAP_BPF and CAP_PERFMON)");
  if (reasons.empty()) return std::nullopt;
  return join(reasons, "; ");
}

std::string watch_start_failure(const std::string& error, int error_number) {
  std::string out = "the kernel refused to load the eBPF probe";
  if (error_number) out += " (" + errno_name(error_number) + ")";
  if (!error.empty()) out += ": " + printable(error);
  if (error_number == EPERM || error_number == EACCES)
    out +=
        "; BPF is not allowed here (root with CAP_BPF and CAP_PERFMON, kernel.unprivileged_bpf_disabled, "
        "a seccomp or LSM policy)";
  return out;
}

}  // namespace p2pcheck
