// What `p2pcheck watch` must know about the running kernel before it loads its probe, read through
// the Source like every other fact: the release, kernel lockdown, NVIDIA's nvidia-fs (whose GPUDirect
// Storage I/O bypasses kernel P2PDMA, so the probe cannot see it), and the kernel's BTF.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "p2pcheck/rules/tri.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

inline constexpr const char* kOsreleasePath = "/proc/sys/kernel/osrelease";
inline constexpr const char* kLockdownPath = "/sys/kernel/security/lockdown";
inline constexpr const char* kNvidiaFsModulePath = "/sys/module/nvidia_fs";
inline constexpr const char* kNvidiaFsStatsPath = "/proc/driver/nvidia-fs/stats";
inline constexpr const char* kVmlinuxBtfPath = "/sys/kernel/btf/vmlinux";
// nvidia-fs's stats are a page of counters; more is kept only up to this, cut on a character.
inline constexpr std::size_t kMaxNvidiaFsStatsBytes = 64 * 1024;

// /sys/kernel/security/lockdown: "none [integrity] confidentiality", the mode in brackets.
struct LockdownState {
  ReadStatus status = ReadStatus::kMissing;  // kMissing: no lockdown LSM, nothing is locked down
  std::string mode;                          // "none", "integrity", "confidentiality" when read
  std::string error;                         // kDenied / kFailed: what the read said
  // Confidentiality forbids bpf_probe_read_kernel, which the probe reads every name with. A read
  // that was denied or failed leaves it unknown.
  Tri forbids_watch() const;
};

struct NvidiaFsState {
  Tri loaded = Tri::kNo;             // /sys/module/nvidia_fs exists
  std::optional<std::string> stats;  // /proc/driver/nvidia-fs/stats when it could be read
};

struct WatchEnvironment {
  std::string kernel_release;  // /proc/sys/kernel/osrelease, trimmed; "" when it could not be read
  std::string release_unread;  // why it is "" (why_unread: "needs root (...)", "not present")
  LockdownState lockdown;
  NvidiaFsState nvidia_fs;
  // /sys/kernel/btf/vmlinux as read (status, bytes, error): the CLI gives the bytes to parse_btf()
  // and select_watch_hooks(). kMissing: the kernel has no BTF (CONFIG_DEBUG_INFO_BTF off).
  FileRead btf;
};

// Every read above, through `source` only. Throws Error only where the source does (a file past its cap).
WatchEnvironment read_watch_environment(Source& source);

// Why the probe cannot run here, before trying: lockdown=confidentiality, no readable BTF, not root
// (every reason that applies, joined by "; "); nullopt when none does.
std::optional<std::string> cannot_watch_reason(const WatchEnvironment& env, bool root);

// Why starting the probe failed (WatchStart::error and error_number) as a "cannot watch" reason:
// "the kernel refused to load the eBPF probe (EPERM): ..." (the errno named as verify names it).
std::string watch_start_failure(const std::string& error, int error_number);

}  // namespace p2pcheck
