#include "p2pcheck/verify/verify_target.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <set>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/verify/verify_pattern.h"

namespace p2pcheck {
namespace {

bool is_stacking(LayerKind k) {
  switch (k) {
    case LayerKind::kLvm:
    case LayerKind::kDmCrypt:
    case LayerKind::kDmMultipath:
    case LayerKind::kDmPartition:
    case LayerKind::kDmOther:
    case LayerKind::kMd:
    case LayerKind::kLoop: return true;
    default: return false;
  }
}

std::string layer_label(const StorageLayer& l) {
  return l.device + " (" + to_string(l.kind) + (l.detail.empty() ? "" : " " + l.detail) + ")";
}

// The controller owning an NVMe namespace or partition name, from the inventory.
const NvmeController* controller_of(const Inventory& inv, const std::string& name) {
  auto parsed = parse_nvme_name(name);
  std::string ns = parsed && parsed->kind == NvmeName::Kind::kPartition ? parsed->ns : name;
  for (const auto& c : inv.nvmes)
    for (const auto& n : c.namespaces)
      if (n.name == ns) return &c;
  return nullptr;
}

std::string errtext(int err) { return std::strerror(err < 0 ? -err : err); }

std::string devno(unsigned major, unsigned minor) { return std::to_string(major) + ":" + std::to_string(minor); }

}  // namespace

std::optional<std::string> block_device_name(Source& source, unsigned major, unsigned minor) {
  const std::string mm = devno(major, minor);
  if (auto canonical = source.resolve_directory("/sys/dev/block/" + mm)) return basename(*canonical);
  for (const auto& name : source.list("/sys/class/block")) {
    FileRead r = source.read("/sys/class/block/" + name + "/dev");
    if (r.ok() && trim(r.bytes) == mm) return name;
  }
  return std::nullopt;
}

TargetPlan resolve_target_dir(const std::string& dir, VerifyIo& io, Source& source, const Machine& machine,
                              const StorageLayout& layout, const Inventory& inv) {
  FileStat st;
  if (int rc = io.stat(dir, st); rc < 0) throw UsageError("--target " + dir + ": " + errtext(rc));
  if (!st.is_dir)
    throw UsageError("--target " + dir +
                     ": not a directory (name a directory; verify creates its own scratch file there)");
  auto name = block_device_name(source, st.dev_major, st.dev_minor);
  if (!name)
    throw UsageError("--target " + dir + ": its file system (device " + devno(st.dev_major, st.dev_minor) +
                     ") is not a block device (tmpfs, overlay, btrfs subvolume, network file system?); name a "
                     "directory on an ext4 or xfs file system on the NVMe to test");
  TargetPlan t;
  t.kind = TargetPlan::Kind::kScratchFile;
  t.path = dir;
  t.block_device = *name;
  t.dev_major = st.dev_major;
  t.dev_minor = st.dev_minor;
  std::set<Bdf> seen;
  for (const auto& s : layout.stacks) {
    if (s.layers.empty() || s.layers.front().device != *name) continue;
    if (s.controller_bdf && seen.insert(*s.controller_bdf).second) t.controllers.push_back(*s.controller_bdf);
    if (t.mountpoint.empty() && !s.mounts.empty()) {
      t.mountpoint = s.mounts.front().mountpoint;
      t.fstype = s.mounts.front().fstype;
    }
    if (t.stacked_layers.empty())
      for (const auto& l : s.layers)
        if (is_stacking(l.kind)) t.stacked_layers.push_back(layer_label(l));
  }
  // Devices no NVMe stack ends on (vda, sda) still have a mount-table line worth naming.
  if (t.mountpoint.empty())
    for (const Mount& m : machine.mounts)
      if (m.device == "/dev/" + *name) {
        t.mountpoint = m.mountpoint;
        t.fstype = m.fstype;
        break;
      }
  // A file system on a bare namespace or partition the mount table did not show (another namespace).
  if (t.controllers.empty())
    if (const NvmeController* c = controller_of(inv, *name)) t.controllers.push_back(c->bdf);
  if (t.controllers.empty())
    throw UsageError(
        "--target " + dir + ": its file system sits on " + *name +
        (t.fstype.empty() ? "" : " (" + t.fstype + " at " + t.mountpoint + ")") +
        ", which is not on a local NVMe controller; name a directory on a file system of the NVMe to test");
  if (!t.stacked_layers.empty())
    t.notes.push_back("the file system sits on " + join(t.stacked_layers, " on ") +
                      ": md, dm and loop do not take P2P pages, so expect the storage stack to refuse (EREMOTEIO)");
  if (!t.fstype.empty() && t.fstype != "ext4" && t.fstype != "xfs")
    t.notes.push_back(t.fstype +
                      " is not ext4 or xfs: hipFile's fastpath and O_DIRECT with P2P pages are documented "
                      "for those two only");
  return t;
}

namespace {

// What uses the device, or for a whole namespace any of its partitions: mounted, held or swap.
std::vector<std::string> device_uses(const std::string& name, bool whole_namespace, const NvmeController& c,
                                     Source& source, const StorageLayout& layout) {
  std::vector<std::string> names{name};
  if (whole_namespace)
    for (const auto& ns : c.namespaces)
      if (ns.name == name) names.insert(names.end(), ns.partitions.begin(), ns.partitions.end());
  std::vector<std::string> uses;
  for (const auto& n : names) {
    auto holders = source.list("/sys/class/block/" + n + "/holders");
    if (!holders.empty())
      uses.push_back(n + " is held by " + join(holders, ", ") + " (/sys/class/block/" + n + "/holders)");
  }
  for (const auto& s : layout.stacks) {
    if (s.unused) continue;
    bool touches = false;
    for (const auto& l : s.layers) touches |= std::find(names.begin(), names.end(), l.device) != names.end();
    if (!touches) continue;
    const std::string top = s.layers.empty() ? s.nvme : s.layers.front().device;
    for (const auto& m : s.mounts)
      uses.push_back(top + " is mounted at " + m.mountpoint + " (" + m.fstype + ", /proc/mounts)");
    if (s.swap) uses.push_back(top + " is active swap (/proc/swaps)");
  }
  return uses;
}

}  // namespace

TargetPlan resolve_raw_device(const std::string& device, std::uint64_t offset, VerifyIo& io, Source& source,
                              const StorageLayout& layout, const Inventory& inv) {
  FileStat st;
  if (int rc = io.stat(device, st); rc < 0) throw UsageError("--raw " + device + ": " + errtext(rc));
  if (!st.is_block) throw UsageError("--raw " + device + ": not a block device");
  auto name = block_device_name(source, st.rdev_major, st.rdev_minor);
  if (!name)
    throw UsageError("--raw " + device + ": no block device with number " + devno(st.rdev_major, st.rdev_minor) +
                     " in /sys");
  // A namespace ("nvme0n1") or a partition of one ("nvme0n1p2"); not a controller, nor a multipath
  // head's hidden path node.
  auto nvme = parse_nvme_name(*name);
  bool whole_namespace = nvme && nvme->kind == NvmeName::Kind::kNamespace;
  if (!whole_namespace && !(nvme && nvme->kind == NvmeName::Kind::kPartition))
    throw UsageError("--raw " + device + " is " + *name + ", not an NVMe namespace or partition");
  const NvmeController* c = controller_of(inv, *name);
  if (!c)
    throw UsageError("--raw " + device + " (" + *name +
                     "): no local NVMe controller owns it (NVMe over fabrics, or a multipath head?)");
  if (offset % kVerifyAlign)
    throw UsageError("--offset " + std::to_string(offset) + ": must be a multiple of " + std::to_string(kVerifyAlign));

  std::vector<std::string> uses = device_uses(*name, whole_namespace, *c, source, layout);
  if (!uses.empty())
    throw UsageError("--raw " + device + ": refusing to write to a device in use: " + join(uses, "; "));
  if (!layout.mounts_known)
    throw UsageError("--raw " + device +
                     ": the mount table could not be read, so p2pcheck cannot tell the device is unused");

  TargetPlan t;
  t.kind = TargetPlan::Kind::kRawDevice;
  t.path = device;
  t.block_device = *name;
  t.dev_major = st.rdev_major;
  t.dev_minor = st.rdev_minor;
  t.controllers.push_back(c->bdf);
  t.raw_offset = offset;
  if (FileRead r = source.read("/sys/class/block/" + *name + "/size"); r.ok())
    if (auto sectors = parse_dec(trim(r.bytes)); sectors && *sectors > 0)
      t.device_bytes = static_cast<std::uint64_t>(*sectors) * 512;  // sysfs counts 512-byte sectors always
  if (layout.zfs_mounted)
    t.notes.push_back("a ZFS pool is mounted and ZFS registers no holders: make sure " + *name +
                      " is not a pool member");
  return t;
}

TargetOpen create_scratch_file(std::shared_ptr<VerifyIo> io, const TargetPlan& plan, std::uint64_t bytes) {
  const std::string& dir = plan.path;
  TargetOpen out;
  std::random_device rd;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", rd(), rd());
  const std::string path = dir + "/.p2pcheck-verify-" + std::to_string(getpid()) + "-" + suffix;
  int fd = io->open(path, O_RDWR | O_CREAT | O_EXCL | O_DIRECT | O_NOFOLLOW, 0600);
  if (fd == -EINVAL) {
    // The kernel creates the file before it checks that the file system can do O_DIRECT.
    io->unlink(path);
    out.error = fd;
    out.problem = "the file system of " + dir + " does not support O_DIRECT";
    return out;
  }
  if (fd < 0) {
    out.error = fd;
    out.problem = "cannot create a scratch file in " + dir + ": " + errtext(fd);
    return out;
  }
  // The directory was checked by path; a mount or symlink swapped in since would put the file elsewhere.
  FileStat st;
  if (int rc = io->fstat(fd, st);
      rc < 0 || !st.is_regular || st.dev_major != plan.dev_major || st.dev_minor != plan.dev_minor) {
    io->close(fd);
    io->unlink(path);
    out.error = rc < 0 ? rc : -EXDEV;
    out.problem = rc < 0 ? "cannot stat the scratch file " + path + ": " + errtext(rc)
                         : dir + " changed between the check and the test: the scratch file landed on device " +
                               devno(st.dev_major, st.dev_minor) + ", not on the checked " +
                               devno(plan.dev_major, plan.dev_minor) + " (" + plan.block_device + ")";
    return out;
  }
  out.target = std::make_shared<OpenTarget>(io, fd, path, true);
  // Allocated up front: ENOSPC now rather than mid-transfer, and a P2P write that lands in allocated blocks.
  if (int rc = io->fallocate(fd, 0, bytes); rc < 0) {
    if (rc == -EOPNOTSUPP) {
      out.notes.push_back("the file system cannot preallocate; blocks are allocated as the test writes");
    } else {
      out.error = rc;
      out.problem = "cannot allocate " + format_size(bytes) + " in " + path + ": " + errtext(rc);
      out.target.reset();
      io->unlink(path);
    }
  }
  return out;
}

TargetOpen open_raw_device(std::shared_ptr<VerifyIo> io, const TargetPlan& plan) {
  const std::string& device = plan.path;
  TargetOpen out;
  int fd = io->open(device, O_RDWR | O_EXCL | O_DIRECT);
  if (fd < 0) {
    out.error = fd;
    out.problem = fd == -EBUSY ? device + " is in use (O_EXCL refused: mounted or claimed since the check)"
                               : "cannot open " + device + ": " + errtext(fd);
    return out;
  }
  // Checked by path (stat) before: the node must still be the same device, or the pattern lands elsewhere.
  FileStat st;
  if (int rc = io->fstat(fd, st);
      rc < 0 || !st.is_block || st.rdev_major != plan.dev_major || st.rdev_minor != plan.dev_minor) {
    io->close(fd);
    out.error = rc < 0 ? rc : -EXDEV;
    out.problem = rc < 0 ? "cannot stat " + device + ": " + errtext(rc)
                         : device + " changed between the check and the open: it is " +
                               (st.is_block ? "block device " + devno(st.rdev_major, st.rdev_minor)
                                            : std::string("not a block device")) +
                               " now, the checked " + plan.block_device + " was " +
                               devno(plan.dev_major, plan.dev_minor) + "; nothing was written";
    return out;
  }
  out.target = std::make_shared<OpenTarget>(io, fd, device, false);
  return out;
}

std::string remove_scratch_file(VerifyIo& io, const std::string& path) {
  if (int rc = io.unlink(path); rc < 0) return "could not remove " + path + ": " + errtext(rc) + "; remove it by hand";
  return "";
}

}  // namespace p2pcheck
