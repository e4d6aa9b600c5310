// `p2pcheck mounts` and paths as --nvme: each file system on NVMe with its stack, its controllers
// and, per GPU, the pair verdicts of the check (the same CheckReport) and what the stack makes of
// them. One model (MountsView), two views (text, JSON); the targets' own block is shared with
// check, explain and paths when --nvme names a path.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

// What GPU-direct I/O between one GPU and one file system comes to.
enum class MountAnswer {
  kP2p,      // every pair allowed, and the stack passes the fastpath
  kStack,    // the pairs are allowed, but the stack (md, dm, loop, the file system) makes hipFile fall back
  kRefused,  // a pair to one of its NVMe is refused by the kernel
  kUnknown,  // a pair is undecided, or the stack's finding is unknown
  kDepends,  // the pairs are allowed and the stack warns (LVM: hipFile-release dependent)
  kNotData,  // not a data file system for hipFile (vfat, swap, a read-only image)
};
const char* to_string(MountAnswer answer);  // "p2p", "stack", "refused", "unknown", "depends", "not_data"

struct MountGpu {
  Bdf gpu;
  std::vector<std::size_t> pairs;  // indices into report.pairs: this GPU with each of the target's controllers
  MountAnswer answer = MountAnswer::kUnknown;
};

// One file system on NVMe: its first mount is target->mount, bind mounts of it target->more_mounts.
struct MountRow {
  const PathTarget* target = nullptr;  // into report.targets
  std::vector<MountGpu> gpus;
  // Every GPU has the same answer (true with no GPU): one word for the row, no line per GPU.
  bool gpus_agree() const;
};

// A mount not on NVMe: `data` when its device names a device, file or share ("/dev/sda1",
// "server:/export", "pool/fs"), else a kernel or memory file system (proc, sysfs, tmpfs, ...).
struct OtherMount {
  std::string mountpoint, fstype, device;  // unescaped
  bool data = false;
};

struct MountsView {
  std::string unknown;  // why the file systems cannot be listed ("the mount table is not in this lspci output")
  std::vector<MountRow> rows;
  std::vector<OtherMount> others;
  std::size_t mounts = 0;   // every line of the mount table
  std::size_t on_nvme = 0;  // mounts of the rows' file systems, bind mounts included
};

// The view of a check run with CheckOptions::mounted_targets (or of --nvme paths).
MountsView mounts_view(const CheckReport& report);
// Text: the banner, the RESULT line, a table of one row per mount on NVMe (a file system's bind
// mounts after its first three only with `verbose`), per GPU only where the GPUs' answers differ,
// the stack findings, the other mounts briefly. Names escaped.
std::string mounts_text(const CheckReport& report, const MountsView& view, const TextStyle& style, bool verbose);
// The RESULT line alone (--quiet): check's, or UNKNOWN when the file systems cannot be listed.
std::string mounts_result_line(const CheckReport& report, const MountsView& view, const TextStyle& style);
// schema "p2pcheck.mounts" (docs/json.md).
nlohmann::ordered_json mounts_json(const CheckReport& report, const MountsView& view);

// check, explain, paths with --nvme PATH: each path's mount, stack and controllers, and the stack's
// storage.stack finding ("" when there is no target).
std::string targets_text(const std::vector<PathTarget>& targets);
nlohmann::ordered_json target_json(const PathTarget& target);
nlohmann::ordered_json targets_json(const std::vector<PathTarget>& targets);

}  // namespace p2pcheck
