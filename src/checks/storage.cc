// Storage stacks: from each mounted file system down to the NVMe namespace, judged by hipFile's rules.
#include "p2pcheck/checks/storage.h"

#include <algorithm>
#include <map>
#include <set>

#include "p2pcheck/source/sysfs_text.h"
#include "storage_internal.h"

namespace p2pcheck {
namespace {

// ---------------------------------------------------------------------------------------------
// Rules as data.

// File systems by what hipFile's fastpath does with them. Source: hipFile docs "Filesystem and file
// type requirements" (only ext4 with data=ordered and xfs are accepted; everything else falls back
// to POSIX I/O unless HIPFILE_UNSUPPORTED_FILE_SYSTEMS=true, which is unvalidated) and the
// troubleshooting page "Backing Storage". kInfo marks file systems that are not data targets at all.
struct FsRule {
  const char* fstype;
  Level level;
  const char* why;
};
constexpr FsRule kFsRules[] = {
    {"ext4", Level::kPass, "ext4 is supported with data=ordered"},
    {"xfs", Level::kPass, "xfs is supported"},
    {"ext3", Level::kFail, "ext3 is not ext4 to hipFile's mount check, even when the ext4 driver runs it"},
    {"ext2", Level::kFail, "ext2 is not a supported file system"},
    {"btrfs", Level::kFail, "btrfs is not a supported file system"},
    {"zfs", Level::kFail, "zfs is not a supported file system"},
    {"f2fs", Level::kFail, "f2fs is not a supported file system"},
    {"bcachefs", Level::kFail, "bcachefs is not a supported file system"},
    {"ntfs3", Level::kFail, "ntfs3 is not a supported file system"},
    {"exfat", Level::kFail, "exfat is not a supported file system"},
    {"jfs", Level::kFail, "jfs is not a supported file system"},
    {"nilfs2", Level::kFail, "nilfs2 is not a supported file system"},
    {"vfat", Level::kInfo, "vfat (an EFI system partition or similar) is not a data file system for hipFile"},
    {"squashfs", Level::kInfo, "squashfs is a read-only image, not a data file system for hipFile"},
    {"erofs", Level::kInfo, "erofs is a read-only image, not a data file system for hipFile"},
    {"iso9660", Level::kInfo, "iso9660 is a read-only image, not a data file system for hipFile"},
    {"swap", Level::kInfo, "swap space is not a data file system for hipFile"},
};

// The fix when the file system is the problem.
constexpr const char* kFsFix =
    "put the data on ext4 (default data=ordered) or xfs directly on an NVMe partition; cost: a new file "
    "system and moving the data. HIPFILE_UNSUPPORTED_FILE_SYSTEMS=true forces the fastpath onto other file "
    "systems, unvalidated (AMD warns of data corruption)";

// Why a stacked layer breaks the fastpath (facts §3, §6): hipFile looks for the NVMe through the
// block device's parent chain, and on 6.2+ the stacked queue does not advertise P2PDMA.
constexpr const char* kStackedWhy =
    "hipFile falls back to POSIX I/O there; also on kernel 6.2+ O_DIRECT with p2pmem pages through md, dm or "
    "loop fails with EREMOTEIO in page pinning";
constexpr const char* kStackedFix =
    "put the data on a file system directly on the NVMe partition (ext4 or xfs); cost: a new file system, moving "
    "the data, and losing what the layer gave";

}  // namespace

std::string mount_line(const Mount& m) { return m.device + " " + m.mountpoint + " " + m.fstype + " " + m.options; }

namespace {

struct Verdict {
  Level level = Level::kPass;
  std::vector<std::string> reasons;
  std::vector<std::string> fixes;
  std::vector<std::pair<Level, std::string>> causes;  // each reason's Finding::cause token
  void add(Level l, const char* cause, const std::string& reason, const std::string& fix = "") {
    if (severity(l) > severity(level)) level = l;
    // Members of one md array or volume give the same reasons: each is said once.
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(reason);
    if (!fix.empty() && std::find(fixes.begin(), fixes.end(), fix) == fixes.end()) fixes.push_back(fix);
    causes.emplace_back(l, cause);
  }
  // The causes at the finding's own level, each once, in the order found: "md", "md,dm-crypt".
  std::string cause() const {
    std::vector<std::string> out;
    for (const auto& [l, c] : causes)
      if (l == level && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    return join(out, ",");
  }
};

std::string layer_text(const StorageLayer& l) {
  switch (l.kind) {
    case LayerKind::kNvmeNamespace:
    case LayerKind::kNvmePartition:
    case LayerKind::kPartition:
    case LayerKind::kDisk: return l.device;
    case LayerKind::kLoop: return "loop " + l.device + (l.detail.empty() ? "" : " (backing file " + l.detail + ")");
    default:
      return std::string(to_string(l.kind)) + " " + (l.detail.empty() ? l.device : l.detail + " (" + l.device + ")");
  }
}

// "xfs on md raid0 (md0) on nvme6n1 and nvme7n1": `bottom` names the NVMe devices at the bottom.
std::string chain_text(const StorageStack& s, const std::string& bottom) {
  std::vector<std::string> parts;
  for (const auto& l : s.layers) parts.push_back(layer_text(l));
  if (!parts.empty()) parts.back() = bottom;
  return join(parts, " on ");
}

// The multipath fix is said once, in storage.nvme_multipath; the stacks on a head point there.
constexpr const char* kMultipathSeeAlso = "turn native NVMe multipath off: see storage.nvme_multipath";

// What sits where: "/data: xfs on LVM vg0-data (dm-0) on nvme1n1p1", and the mounts, swap and
// layers as evidence.
// A container host mounts one file system thousands of times (kubelet's bind mounts): the first
// kListedMounts are named, the rest counted, so the finding stays small (every path copies it).
constexpr std::size_t kListedMounts = 8;

std::string stack_head(const StorageStack& s, const std::string& fstype, const std::string& bottom, Finding& f) {
  std::vector<std::string> points;
  for (const auto& m : s.mounts) {
    if (points.size() == kListedMounts) break;
    points.push_back(m.mountpoint);
    f.evidence.push_back({"/proc/mounts", mount_line(m)});
  }
  if (const std::size_t more = s.mounts.size() - points.size(); more > 0) {
    points.push_back("and " + std::to_string(more) + " more");
    f.evidence.push_back({"/proc/mounts", "and " + std::to_string(more) + " more mount(s) of the same device"});
  }
  std::string where = points.empty() ? (s.swap ? "swap" : "not mounted") : join(points, ", ");
  if (s.swap) f.evidence.push_back({"/proc/swaps", "/dev/" + s.layers.front().device + " partition"});
  for (const auto& l : s.layers)
    for (const auto& e : l.evidence) f.evidence.push_back(e);
  return where + ": " + (fstype.empty() || fstype == "swap" ? "" : fstype + " on ") + chain_text(s, bottom);
}

const FsRule* fs_rule(const std::string& fstype) {
  const FsRule* rule = nullptr;
  for (const auto& r : kFsRules)
    if (fstype == r.fstype) rule = &r;
  return rule;
}

// md, dm-crypt, loop, dm-multipath and other dm layers each FAIL; returns whether any was found.
bool judge_stacked_layers(const StorageStack& s, Verdict& v) {
  bool stacked = false;
  for (const auto& l : s.layers) {
    stacked = stacked || blocks_fastpath(l.kind);
    switch (l.kind) {
      case LayerKind::kMd:
        v.add(Level::kFail, "md", "md RAID (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
              std::string(kStackedFix) + " (here: md redundancy or striping)");
        break;
      case LayerKind::kDmCrypt:
        v.add(Level::kFail, "dm-crypt",
              "dm-crypt (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
              std::string(kStackedFix) + " (here: encryption at rest; consider the drive's own self-encryption)");
        break;
      case LayerKind::kLoop:
        v.add(Level::kFail, "loop",
              "loop device (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
              std::string(kStackedFix) + " (here: the convenience of an image file)");
        break;
      case LayerKind::kDmMultipath:
        v.add(Level::kFail, "dm-multipath",
              "dm-multipath (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
              std::string(kStackedFix) + " (here: path failover)");
        break;
      case LayerKind::kDmPartition:
      case LayerKind::kDmOther:
        v.add(
            Level::kFail, "dm-other",
            std::string(to_string(l.kind)) + " (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
            kStackedFix);
        break;
      default: break;
    }
  }
  return stacked;
}

// LVM: FAIL when the volume spans a non-NVMe disk, WARN (release-dependent) when nothing else is stacked.
void judge_lvm(const StorageStack& s, bool stacked, Verdict& v) {
  bool lvm =
      std::any_of(s.layers.begin(), s.layers.end(), [](const StorageLayer& l) { return l.kind == LayerKind::kLvm; });
  if (!lvm) return;
  if (!s.non_nvme_members.empty()) {
    v.add(Level::kFail, "lvm-non-nvme",
          "the LVM volume also spans " + join(s.non_nvme_members, ", ") +
              ", which is not NVMe: hipFile falls back to POSIX I/O for volumes with any non-NVMe physical volume",
          "move the volume's extents onto NVMe physical volumes only (pvmove, then vgreduce), or put the data on a "
          "file system directly on the NVMe partition; cost: the move and the capacity of the other disks");
  } else if (!stacked) {
    v.add(Level::kWarn, "lvm",
          "LVM works with the fastpath only on all-NVMe volumes in newer hipFile releases (docs 10.2+); older "
          "releases fall back to POSIX I/O on any device-mapper volume",
          "use a hipFile release that supports LVM on all-NVMe volumes, or put the data on a file system directly "
          "on the NVMe partition; cost: LVM's resizing and snapshots");
  }
}

// ext4 passes only with data=ordered (stated or the default).
void judge_ext4_mode(const StorageStack& s, Verdict& v, Finding& f) {
  if (!s.ext4_data_mode_evidence.file.empty()) f.evidence.push_back(s.ext4_data_mode_evidence);
  if (s.ext4_data_mode != "ordered") {
    v.add(Level::kFail, "ext4-data-mode",
          "ext4 with data=" + s.ext4_data_mode + ": hipFile accepts only data=ordered and falls back to POSIX I/O",
          "mount it with data=ordered (or no data= option) in /etc/fstab, then unmount and mount again (ext4 cannot "
          "change data= on remount; if tune2fs set journal_data as a default, clear it with tune2fs -o "
          "^journal_data); cost: data=" +
              s.ext4_data_mode +
              (s.ext4_data_mode == "journal" ? "'s journalling of file contents" : "'s looser ordering (speed)"));
  } else {
    v.add(Level::kPass, "ext4",
          s.ext4_data_mode_evidence.file.empty() ? "ext4 with data=ordered (the default; /proc/mounts "
                                                   "omits it)"
                                                 : "ext4 with data=ordered");
  }
}

// The file system on top: only ext4 (data=ordered) and xfs pass.
void judge_file_system(const StorageStack& s, const std::string& fstype, const FsRule* rule, Verdict& v, Finding& f) {
  if (s.mounts.empty() && !s.swap) {
    v.add(Level::kInfo, "held-by-stack",
          "no file system mounted on " + s.layers.front().device + " (held by the stack above)");
  } else if (!rule) {
    v.add(Level::kFail, "file-system",
          fstype + " is not ext4 or xfs: hipFile's fastpath refuses it and falls back to POSIX I/O", kFsFix);
  } else if (rule->level == Level::kFail) {
    v.add(Level::kFail, "file-system",
          std::string(rule->why) + ": hipFile's fastpath refuses it and falls back to POSIX I/O", kFsFix);
  } else if (fstype == "ext4") {
    judge_ext4_mode(s, v, f);
  } else {
    v.add(Level::kPass, "file-system", rule->why);
  }
}

// The NVMe at the bottom: a multipath head FAILs, a namespace without a local PCIe function WARNs.
void judge_nvme(const StorageStack& s, const StorageLayout& layout, Verdict& v) {
  if (layout.multipath.heads.count(s.nvme_namespace)) {
    v.add(Level::kFail, "multipath-head",
          s.nvme_namespace + " is a native NVMe multipath head node, which hipFile does not support",
          kMultipathSeeAlso);
  } else if (!s.controller_bdf) {
    v.add(Level::kWarn, "no-pcie-function",
          s.nvme_namespace +
              " has no local PCIe NVMe function (NVMe over fabrics?): the PCIe P2P verdict "
              "does not cover it; hipFile's NVMe-oF support needs RDMA and is experimental");
  }
}

// One finding per file system: the stacks of one md array or volume group (the same top device)
// are judged together and name every NVMe below it.
Finding stack_finding(const std::vector<const StorageStack*>& group, const StorageLayout& layout) {
  const StorageStack& s = *group.front();
  Finding f;
  f.id = "storage.stack";
  std::vector<std::string> bottoms;
  for (const StorageStack* member : group) {
    // A device-mapper diamond reaches one NVMe by several routes: each is named once.
    if (std::find(bottoms.begin(), bottoms.end(), member->nvme) != bottoms.end()) continue;
    bottoms.push_back(member->nvme);
    if (member->controller_bdf) f.devices.push_back(*member->controller_bdf);
  }
  f.subject = join(bottoms, ", ");
  std::string fstype = s.mounts.empty() ? (s.swap ? "swap" : "") : s.mounts.front().fstype;
  std::string head = stack_head(s, fstype, join(bottoms, " and "), f);
  for (size_t i = 1; i < group.size(); ++i)
    for (const auto& l : group[i]->layers)
      for (const auto& e : l.evidence)
        if (std::none_of(f.evidence.begin(), f.evidence.end(),
                         [&](const Evidence& have) { return have.file == e.file && have.value == e.value; }))
          f.evidence.push_back(e);
  Verdict v;
  const FsRule* rule = fs_rule(fstype);
  if (rule && rule->level == Level::kInfo) {
    // Not a data target at all: say so once, whatever it is stacked on.
    v.add(Level::kInfo, "not-a-data-file-system", rule->why,
          "nothing to do unless hipFile data is meant to live here; then: " + std::string(kFsFix));
  } else {
    for (const StorageStack* member : group) judge_lvm(*member, judge_stacked_layers(*member, v), v);
    judge_file_system(s, fstype, rule, v, f);
  }
  for (const StorageStack* member : group) judge_nvme(*member, layout, v);
  f.level = v.level;
  // Only a problem has a cause to group by; a pass or a note needs none.
  if (v.level == Level::kFail || v.level == Level::kWarn) f.cause = v.cause();
  f.message = head + ": " + join(v.reasons, "; ");
  if (v.level != Level::kPass) f.fix = join(v.fixes, ". ");
  return f;
}

// A namespace nothing uses (called only when the mount table is known; storage.unknown otherwise).
Finding raw_finding(const StorageStack& s, const StorageLayout& layout) {
  Finding f;
  f.id = "storage.raw";
  f.subject = s.nvme;
  if (s.controller_bdf) f.devices.push_back(*s.controller_bdf);
  for (const auto& l : s.layers)
    for (const auto& e : l.evidence) f.evidence.push_back(e);
  std::string parts = s.layers.front().detail.empty() ? "" : " (" + s.layers.front().detail + ")";
  if (layout.zfs_mounted) {
    f.level = Level::kWarn;
    f.message = s.nvme + parts +
                ": nothing mounted on it and no holder, but zfs is mounted and zfs pool members show no "
                "holder in sysfs: it may belong to a pool (zfs is not supported by hipFile)";
    f.evidence.push_back({"/proc/mounts", "zfs mounts present"});
    f.fix =
        "check `zpool status`; if it is a pool member, put hipFile data on ext4 or xfs directly on an NVMe partition";
    return f;
  }
  if (layout.multipath.heads.count(s.nvme)) {
    f.level = Level::kFail;
    f.message = s.nvme + parts +
                ": nothing mounted on it, but it is a native NVMe multipath head node, which hipFile "
                "does not support even as a raw block device";
    f.evidence.push_back(layout.multipath.param_evidence);
    f.fix = kMultipathSeeAlso;
    return f;
  }
  f.level = Level::kPass;
  f.message = s.nvme + parts + ": nothing mounted on it, no holder: usable as a raw block device (O_DIRECT on /dev/" +
              s.nvme + "); for files, put ext4 or xfs directly on it";
  return f;
}

// The fix for a part of the machine that was not read: on a dump, a capture taken there, which holds
// it; live, where to run.
std::string unread_part_fix(const StorageLayout& layout, const std::string& holds, const std::string& live) {
  return layout.from_dump ? "ask the machine's owner for a `p2pcheck capture -o host.tar.zst` taken there (it holds " +
                                holds + ") and replay that"
                          : live;
}

// The block layer could not be read: every stack above the namespaces is unknown.
Finding block_unknown_finding(const StorageLayout& layout) {
  Finding f;
  f.id = "storage.unknown";
  f.level = Level::kUnknown;
  f.message = "the block layer could not be read, so the storage stacks above the NVMe namespaces are unknown";
  f.evidence.push_back({"/sys/class/block", "missing or empty"});
  f.evidence.push_back({"/sys/block", "missing or empty"});
  f.fix = unread_part_fix(layout, "the block layer, /sys/class/block", "run p2pcheck where /sys is mounted");
  if (!layout.block_not_carried.empty()) {
    f.not_carried = layout.block_not_carried;
    f.message =
        "the storage stacks above the NVMe namespaces are unknown: the block layer is " + layout.block_not_carried;
    f.evidence = {{"/sys/class/block", layout.block_not_carried}};
    f.fix = kNotCarriedFix;
  }
  return f;
}

// One finding for an unknown mount table, naming every namespace it leaves open.
Finding mounts_unknown_finding(const StorageLayout& layout) {
  std::vector<std::string> open;
  for (const auto& st : layout.stacks)
    if (st.unused) open.push_back(st.nvme);
  Finding f;
  f.id = "storage.unknown";
  f.level = Level::kUnknown;
  f.message = "the mount table is empty or unreadable: which file systems sit on the NVMe namespaces" +
              (open.empty() ? std::string() : " (" + join(open, ", ") + ")") + " is unknown";
  f.evidence.push_back({"/proc/mounts", "no entries"});
  f.fix = unread_part_fix(layout, "the mount table", "run p2pcheck where /proc/mounts is readable");
  if (!layout.mounts_not_carried.empty()) {
    f.not_carried = layout.mounts_not_carried;
    f.message = "which file systems sit on the NVMe namespaces" +
                (open.empty() ? std::string() : " (" + join(open, ", ") + ")") + " is unknown: the mount table is " +
                layout.mounts_not_carried;
    f.evidence = {{"/proc/mounts", layout.mounts_not_carried}};
    f.fix = kNotCarriedFix;
  }
  return f;
}

// Stacks with the same top device (one md array, one LVM volume) are one file system: one finding.
std::vector<std::vector<const StorageStack*>> stack_groups(const StorageLayout& layout) {
  std::vector<std::vector<const StorageStack*>> groups;
  std::map<std::string, size_t> group_of_top;
  for (const auto& s : layout.stacks) {
    if (s.unused && !layout.mounts_known) continue;  // storage.unknown names them
    if (!s.unused && s.layers.size() > 1) {          // stacked: md, dm, loop above the NVMe
      auto [at, added] = group_of_top.try_emplace(s.layers.front().device, groups.size());
      if (!added) {
        groups[at->second].push_back(&s);
        continue;
      }
    }
    groups.push_back({&s});
  }
  return groups;
}

}  // namespace

bool blocks_fastpath(LayerKind kind) {
  switch (kind) {
    case LayerKind::kMd:
    case LayerKind::kDmCrypt:
    case LayerKind::kLoop:
    case LayerKind::kDmMultipath:
    case LayerKind::kDmPartition:
    case LayerKind::kDmOther: return true;
    default: return false;
  }
}

std::map<std::string, Finding> storage_stack_findings(const StorageLayout& layout) {
  std::map<std::string, Finding> out;
  for (const auto& group : stack_groups(layout))
    if (!group.front()->unused) out.emplace(group.front()->layers.front().device, stack_finding(group, layout));
  return out;
}

namespace {

// One finding for every mount of a /dev device sysfs lacks, its first lines as evidence: a host with
// 100,000 of them gets one line that counts them, not 100,000 findings.
Finding unmapped_finding(const std::vector<std::string>& lines) {
  constexpr std::size_t kLinesShown = 5;
  Finding f;
  f.id = "storage.unknown";
  f.level = Level::kUnknown;
  f.message = lines.size() == 1 ? "mount of a /dev device that matches no block device in sysfs; whether it is on "
                                  "an NVMe is unknown"
                                : std::to_string(lines.size()) +
                                      " mounts of /dev devices that match no block device in sysfs; whether they "
                                      "are on an NVMe is unknown";
  for (std::size_t i = 0; i < lines.size() && i < kLinesShown; ++i) f.evidence.push_back({"/proc/mounts", lines[i]});
  if (lines.size() > kLinesShown)
    f.evidence.push_back({"/proc/mounts", "and " + std::to_string(lines.size() - kLinesShown) + " more such lines"});
  f.fix = "capture /proc/self/mountinfo (its device numbers identify the block device)";
  return f;
}

}  // namespace

std::vector<Finding> check_storage(const StorageLayout& layout) {
  std::vector<Finding> out;
  if (!layout.block_known)
    out.push_back(block_unknown_finding(layout));
  else if (!layout.mounts_known)
    out.push_back(mounts_unknown_finding(layout));
  if (!layout.unmapped.empty()) out.push_back(unmapped_finding(layout.unmapped));
  const auto groups = stack_groups(layout);
  for (const auto& group : groups)
    out.push_back(group.front()->unused ? raw_finding(*group.front(), layout) : stack_finding(group, layout));
  for (auto& f : storage_detail::multipath_findings(layout)) out.push_back(std::move(f));
  return out;
}

}  // namespace p2pcheck
