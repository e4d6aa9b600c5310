// The block-device stacks between mounted file systems and NVMe namespaces, judged by hipFile's
// storage rules (docs: "Filesystem and file type requirements", "Limitations"; facts §3, §6).
//
// The fastpath finds the NVMe function by walking the file system's block device up to its PCI
// parent, and the P2P pages must reach the NVMe queue directly: anything stacked in between (md,
// dm-crypt, loop, a multipath head) makes hipFile fall back to POSIX I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

// What one block device in a stack is. Device-mapper kinds come from the dm/uuid prefix set by the
// tool that created the mapping: lvm2 "LVM-", cryptsetup "CRYPT-", multipathd "mpath-", kpartx "part".
enum class LayerKind {
  kNvmeNamespace,  // nvme0n1
  kNvmePartition,  // nvme0n1p2
  kLvm,
  kDmCrypt,
  kDmMultipath,
  kDmPartition,
  kDmOther,  // any other dm target (verity, integrity, VDO, a uuid-less dmsetup table)
  kMd,
  kLoop,
  kPartition,  // a partition of a non-NVMe or stacked disk (sda1, md0p1)
  kDisk,       // any other whole disk (sda, vda)
};
const char* to_string(LayerKind kind);  // "NVMe namespace", "LVM", "dm-crypt", "md", "loop", ...

struct StorageLayer {
  std::string device;  // kernel name as in /sys/class/block: "dm-2", "md0", "loop3", "nvme0n1p2"
  LayerKind kind = LayerKind::kDisk;
  std::string detail;              // "vg0-data", "raid1", "/srv/disk.img on /srv"; empty when nothing to add
  std::vector<Evidence> evidence;  // the files that identified it
};

struct StorageStack {
  std::string nvme;                   // the NVMe namespace or partition at the bottom: "nvme0n1p2"
  std::string nvme_namespace;         // its namespace: "nvme0n1"
  std::string controller;             // "nvme0"; empty when no local PCIe controller owns the namespace
  std::optional<Bdf> controller_bdf;  // nullopt for NVMe over fabrics (no PCI function here)
  // Top first (the device the file system sits on), the NVMe device last. A loop layer is followed
  // by the stack of the file system that holds its backing file.
  std::vector<StorageLayer> layers;
  std::vector<Mount> mounts;                  // everything mounted on layers.front(); empty when held or unused
  std::vector<std::string> other_members;     // other bottom devices below the top ("nvme1n1p1", "sda2")
  std::vector<std::string> non_nvme_members;  // those of them that are not NVMe
  bool swap = false;                          // layers.front() is active swap (/proc/swaps)
  bool unused = false;  // nothing mounted on, holding or swapping on the namespace or its partitions
  // ext4 only: "ordered", "journal" or "writeback", and where that came from (file empty when the
  // mode was assumed: /proc/mounts leaves the default out).
  std::string ext4_data_mode;
  Evidence ext4_data_mode_evidence;
};

// Native NVMe multipath (drivers/nvme/host/multipath.c): with nvme_core multipath=Y a subsystem that
// can have several controllers gets one head node (nvme0n1, under /sys/class/nvme-subsystem) over
// hidden per-path nodes (nvme0c0n1, under each controller). The head has no PCI parent.
struct NvmeMultipath {
  enum class Param { kEnabled, kDisabled, kAbsent, kUnknown };  // kAbsent: built without NVME_MULTIPATH
  Param param = Param::kUnknown;
  Evidence param_evidence;  // /sys/module/nvme_core/parameters/multipath and its value, or why not
  std::string not_carried;  // the source's format holds no module parameters ("not in this lspci output")
  std::map<std::string, std::vector<std::string>> heads;                  // head node -> per-path nodes
  std::map<std::string, std::string> head_subsystem;                      // head node -> "nvme-subsys0"
  std::map<std::string, std::vector<std::string>> subsystem_controllers;  // "nvme-subsys0" -> {"nvme0"}
};

struct StorageLayout {
  std::vector<StorageStack> stacks;
  NvmeMultipath multipath;
  int nvme_controllers = 0;   // NVMe functions in the inventory (no multipath finding without any)
  bool mounts_known = false;  // the mount table had entries (every Linux has at least /)
  bool block_known = false;   // /sys/class/block (or /sys/block) could be listed
  // "not in this lspci output" when the source's format holds no mount table / no block layer.
  std::string mounts_not_carried, block_not_carried;
  bool zfs_mounted = false;
  bool from_dump = false;  // read from a capture or dump: a fix asks the machine's owner  // zfs registers no holders:
                           // an "unused" namespace may be a pool member
  // Mounts whose device looked like a block device but could not be mapped to one.
  std::vector<std::string> unmapped;
};

// Reads the block layer (/sys/class/block, holders, slaves, dm/, md/, loop/), /proc/swaps,
// /proc/fs/ext4/<dev>/options (when /proc/mounts names no data= mode),
// /proc/self/mountinfo (only for mounts whose device name does not say which block device it is)
// and the nvme_core / nvme-subsystem layout.
StorageLayout read_storage(Source& source, const Machine& machine, const Inventory& inv);

// One finding per NVMe device and file system on it (id "storage.stack"), per unused namespace
// ("storage.raw"), per multipath head or one for the machine ("storage.nvme_multipath"), and
// "storage.unknown" when the block layer or the mount table could not be read.
std::vector<Finding> check_storage(const StorageLayout& layout);

// The storage.stack finding check_storage makes for each file system, by the block device it sits
// on ("md0", "nvme0n1p2"): made once for the paths and mounts that look them up.
std::map<std::string, Finding> storage_stack_findings(const StorageLayout& layout);

// A layer hipFile's fastpath does not pass (md, dm-crypt, dm-multipath, other dm targets, loop): the
// file system's I/O falls back to POSIX there. LVM is judged apart (release-dependent).
bool blocks_fastpath(LayerKind kind);

// A /proc/mounts line as evidence: "DEVICE MOUNTPOINT FSTYPE OPTIONS".
std::string mount_line(const Mount& m);

}  // namespace p2pcheck
