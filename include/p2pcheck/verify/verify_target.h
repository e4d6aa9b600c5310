// Where `p2pcheck verify` may write, and the refusals that keep it from writing anywhere else.
//
// Default: a NEW scratch file in a directory the user names (--target DIR) whose file system sits on
// the pair's NVMe (checked from the directory's st_dev through sysfs and the storage stacks of
// storage.h), created O_EXCL with a unique name, used with O_DIRECT, fsync'd and removed.
// Raw mode (--raw DEVICE --offset N --allow-destructive): an NVMe namespace or partition that
// nothing mounts, holds or swaps on, opened O_EXCL (the kernel's own "in use" check), and written
// only in [offset, offset + size).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "p2pcheck/checks/storage.h"
#include "p2pcheck/model/inventory.h"
#include "p2pcheck/source/source.h"
#include "p2pcheck/verify/verify_io.h"

namespace p2pcheck {

struct TargetPlan {
  enum class Kind { kScratchFile, kRawDevice };
  Kind kind = Kind::kScratchFile;
  std::string path;              // the --target directory, or the --raw device node
  std::string block_device;      // the block device the file system sits on ("md0", "nvme0n1p2"), or the raw device
  std::vector<Bdf> controllers;  // NVMe controllers at the bottom of it (several under md/dm)
  std::string fstype, mountpoint;
  // md, dm or loop between the file system and the NVMe: they do not take P2P pages on their own,
  // so an EREMOTEIO there is the storage stack's refusal, not the PCI path's (facts §3).
  std::vector<std::string> stacked_layers;  // "md0 (md raid0)", top first
  std::uint64_t raw_offset = 0;
  std::uint64_t device_bytes = 0;  // raw: the device's size
  // The device number that was checked: the directory's file system (st_dev), or the raw device
  // node's device (st_rdev). The open must find the same, else the path changed in between.
  unsigned dev_major = 0, dev_minor = 0;
  std::vector<std::string> notes;
};

// The block device with this device number (sysfs /sys/dev/block/MAJ:MIN, else /sys/class/block/*/dev).
std::optional<std::string> block_device_name(Source& source, unsigned major, unsigned minor);

// --target DIR. Throws UsageError when DIR is not a directory or its file system is not on a local NVMe.
TargetPlan resolve_target_dir(const std::string& dir, VerifyIo& io, Source& source, const Machine& machine,
                              const StorageLayout& layout, const Inventory& inv);
// --raw DEVICE --offset N. Throws UsageError when DEVICE is not an NVMe namespace or partition, or is
// mounted, held (holders/), or swap, or the offset is misaligned.
TargetPlan resolve_raw_device(const std::string& device, std::uint64_t offset, VerifyIo& io, Source& source,
                              const StorageLayout& layout, const Inventory& inv);

// An open target; closes its fd when the last user (the runner, or an abandoned worker) lets go.
class OpenTarget {
 public:
  OpenTarget(std::shared_ptr<VerifyIo> io, int fd, std::string path, bool scratch)
      : io_(std::move(io)), fd_(fd), path_(std::move(path)), scratch_(scratch) {}
  ~OpenTarget() { io_->close(fd_); }
  OpenTarget(const OpenTarget&) = delete;
  OpenTarget& operator=(const OpenTarget&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  bool scratch() const { return scratch_; }

 private:
  std::shared_ptr<VerifyIo> io_;
  int fd_;
  std::string path_;
  bool scratch_;
};

struct TargetOpen {
  std::shared_ptr<OpenTarget> target;
  int error = 0;        // negative errno when it failed
  std::string problem;  // what failed, in words
  std::vector<std::string> notes;
};
// A new file in the plan's directory, O_EXCL|O_DIRECT|O_NOFOLLOW, preallocated to `bytes`; refused (and
// removed) when it is not on the file system that was checked (st_dev).
TargetOpen create_scratch_file(std::shared_ptr<VerifyIo> io, const TargetPlan& plan, std::uint64_t bytes);
// The plan's raw device, O_EXCL|O_DIRECT: EBUSY when anything mounted or claimed it meanwhile; refused
// when the node now is another device than the one checked (st_rdev).
TargetOpen open_raw_device(std::shared_ptr<VerifyIo> io, const TargetPlan& plan);
// Unlinks the scratch file (the data was fsync'd after each direction). Returns a problem or "".
std::string remove_scratch_file(VerifyIo& io, const std::string& path);

}  // namespace p2pcheck
