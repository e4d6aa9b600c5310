// A mount point or file path as the NVMe side of the pairs (`--nvme /data`, `explain GPU /data`,
// `mounts`): the path, the mount that holds it as the kernel's mount table says, and the storage
// stacks (read_storage) from that file system down to NVMe namespaces and their controllers.
//
// Nothing here walks the block layer: the stacks are StorageLayout's, and what the fastpath makes of
// a stack is check_storage's storage.stack finding, made by the same function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/checks/storage.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

// /proc/mounts and mountinfo write space, tab, newline and backslash in a mount point as \ooo.
std::string unescape_mount_path(std::string_view text);
// True when `path` is `dir` or below it, by components: "/srv" holds "/srv/a", not "/srvx".
bool path_under(std::string_view path, std::string_view dir);
// The mount that holds the absolute, normalised `path`: the longest matching mount point, and of
// equal ones the last (the one mounted over the others). nullptr when none does (no "/" mounted).
const Mount* mount_holding(const std::vector<Mount>& mounts, std::string_view path);

// Whether an --nvme value names a path rather than a device: it has a "/" and is not /dev/ followed
// by an NVMe name (/dev/nvme0n1p2 stays a device), or it is "." or "..".
bool is_path_selector(std::string_view text);

// `path` made absolute (a relative one is taken from "/"), "." and ".." removed and every symbolic
// link followed, as the source's root sees them: a link is read through the source, never on the
// host's /; a component that does not exist there is kept as written. Throws UsageError after 40
// links (a loop), as the kernel's ELOOP; `named_by` starts the message ("--nvme /a").
std::string resolve_in_source(Source& source, std::string_view path, const std::string& named_by);

struct TargetController {
  std::string name;  // "nvme0"
  Bdf bdf;
};

// One path as a target: where it lives and the NVMe below it.
struct PathTarget {
  std::string typed;  // as given: "/data/run1/"
  std::string path;   // resolved in the source: "/data/run1"
  Mount mount;        // the mount holding it, as /proc/mounts writes it (mount point escaped)
  // `mounts` only: the file system's other mounts (bind mounts of it, a container host's kubelet
  // volumes), in mount-table order; everything else of the target is the same for them.
  std::vector<Mount> more_mounts;
  std::string mountpoint;                     // unescaped: "/mnt/fast lane"
  std::vector<StorageStack> stacks;           // one per NVMe device below the file system, top layer first
  std::vector<TargetController> controllers;  // the local PCIe controllers of those, each once
  // check_storage's storage.stack finding for this file system (md, dm-crypt, loop, LVM, the file
  // system type): the fastpath's answer for the stack. Unset when the stack has no such finding.
  std::optional<Finding> stack_finding;
  // The layers between the file system and the NVMe that the fastpath does not pass (md, dm, loop):
  // hipFile/GDS fall back to POSIX I/O through them (the finding says why).
  std::vector<StorageLayer> stacked;
  // The path itself was looked up: on the running machine a path that does not exist is refused; a
  // capture or dump holds no file system contents, so there only its mount is known, and said so.
  bool existence_checked = false;
};

// The target of `path` in `layout` (read_storage of the same machine). Throws UsageError naming the
// path, the mount and the device when the path is on no NVMe (tmpfs, NFS, a SATA disk), when the
// mount table is unknown (`mounts_unknown`: "not in this lspci output", "needs root"), and on the
// running machine when the path does not exist (a typo must not fall through to the root file system).
PathTarget resolve_path_target(Source& source, const std::string& typed, const Machine& machine,
                               const StorageLayout& layout, const std::string& named_by);

// Why the mount table is unknown ("not in this lspci output", "unreadable: ..."), or "" when known.
std::string mounts_unknown_why(const Machine& machine, const StorageLayout& layout);

// Every mounted file system that sits on an NVMe (directly or through a stack), one target per file
// system in the order of its first mount; its other mounts (bind mounts) are in `more_mounts`.
std::vector<PathTarget> mounted_nvme_targets(const Machine& machine, const StorageLayout& layout);

}  // namespace p2pcheck
