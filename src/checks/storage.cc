// Storage stacks: from each mounted file system down to the NVMe namespace, and hipFile's rules.
#include "p2pcheck/checks/storage.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <regex>
#include <set>

#include "p2pcheck/source/sysfs_text.h"

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


const std::regex kNvmeNamespace("nvme[0-9]+n[0-9]+");
const std::regex kNvmePartition("(nvme[0-9]+n[0-9]+)p[0-9]+");
const std::regex kNvmeController("nvme[0-9]+");
const std::regex kNvmePathNode("nvme([0-9]+)c[0-9]+n([0-9]+)");  // hidden per-path node of a head

bool is_nvme_namespace(const std::string& name) { return std::regex_match(name, kNvmeNamespace); }
bool is_nvme_partition(const std::string& name) { return std::regex_match(name, kNvmePartition); }
bool is_nvme(const std::string& name) { return is_nvme_namespace(name) || is_nvme_partition(name); }

// /proc/mounts and mountinfo escape space, tab, newline and backslash as \ooo.
std::string unescape_mount_path(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isdigit(static_cast<unsigned char>(text[i + 2])) && std::isdigit(static_cast<unsigned char>(text[i + 3]))) {
      out += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0'));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

// True when `path` is `dir` or below it, component-wise ("/srv" holds "/srv/a", not "/srvx").
bool path_under(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    out.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string mount_line(const Mount& m) { return m.device + " " + m.mountpoint + " " + m.fstype + " " + m.options; }

// ---------------------------------------------------------------------------------------------
// The block layer as sysfs shows it.

struct BlockDev {
  std::string name;
  std::string dir;     // where its attributes were read: /sys/block/dm-2, /sys/class/block/nvme0n1p2
  std::string majmin;  // "259:3"
  bool partition = false;
  std::string parent;  // partitions: the whole disk
  std::vector<std::string> slaves, holders;
  bool dm = false, md = false, loop = false;
  std::string dm_name, dm_uuid, md_level, loop_backing;
};

class BlockGraph {
 public:
  explicit BlockGraph(Source& src) : src_(src) {}

  bool load() {
    std::vector<std::string> names = src_.list("/sys/class/block");
    if (!names.empty()) {
      for (const auto& name : names) add(name, "/sys/class/block/" + name);
    } else {
      // Captures without /sys/class: whole disks from /sys/block, partitions inside their directory.
      for (const auto& disk : src_.list("/sys/block")) {
        add(disk, "/sys/block/" + disk);
        for (const auto& entry : src_.list("/sys/block/" + disk))
          if (entry.rfind(disk, 0) == 0 && src_.read("/sys/block/" + disk + "/" + entry + "/partition").ok())
            add(entry, "/sys/block/" + disk + "/" + entry);
      }
    }
    return !devs_.empty();
  }

  const BlockDev* find(const std::string& name) const {
    auto it = devs_.find(name);
    return it == devs_.end() ? nullptr : &it->second;
  }
  const BlockDev* by_dm_name(const std::string& dm_name) const {
    for (const auto& [name, dev] : devs_)
      if (dev.dm && dev.dm_name == dm_name) return &dev;
    return nullptr;
  }
  const BlockDev* by_majmin(const std::string& majmin) const {
    for (const auto& [name, dev] : devs_)
      if (dev.majmin == majmin) return &dev;
    return nullptr;
  }
  const std::map<std::string, BlockDev>& all() const { return devs_; }

 private:
  void add(const std::string& name, const std::string& link) {
    BlockDev d;
    d.name = name;
    auto canonical = src_.resolve(link);
    // Reads and listings only (no bare existence tests), so a capture of what was read replays the same.
    d.partition = src_.read(link + "/partition").ok();
    // Whole disks are read under /sys/block, the path people know; partitions only live in /sys/class/block.
    d.dir = (!d.partition && src_.resolve("/sys/block/" + name)) ? "/sys/block/" + name : link;
    if (d.partition && canonical) {
      size_t slash = canonical->rfind('/');
      if (slash != std::string::npos) d.parent = basename(canonical->substr(0, slash));
    }
    if (FileRead r = src_.read(d.dir + "/dev"); r.ok()) d.majmin = std::string(trim(r.bytes));
    d.slaves = src_.list(d.dir + "/slaves");
    d.holders = src_.list(d.dir + "/holders");
    if (FileRead r = src_.read(d.dir + "/dm/name"); r.ok()) {
      d.dm = true;
      d.dm_name = std::string(trim(r.bytes));
      if (FileRead u = src_.read(d.dir + "/dm/uuid"); u.ok()) d.dm_uuid = std::string(trim(u.bytes));
    }
    if (FileRead r = src_.read(d.dir + "/md/level"); r.ok() || r.status == ReadStatus::kDenied) {
      d.md = true;
      d.md_level = std::string(trim(r.bytes));
    }
    if (name.rfind("loop", 0) == 0 && !d.partition) {
      d.loop = true;
      if (FileRead r = src_.read(d.dir + "/loop/backing_file"); r.ok()) d.loop_backing = std::string(trim(r.bytes));
    }
    devs_[name] = std::move(d);
  }

  Source& src_;
  std::map<std::string, BlockDev> devs_;
};

// dm/uuid prefixes -> kind. Sources: lvm2 (lib/misc/lvm-string "LVM-"), cryptsetup ("CRYPT-<type>-"),
// multipath-tools ("mpath-"), kpartx ("part<N>-").
LayerKind dm_kind(const std::string& uuid) {
  if (uuid.rfind("LVM-", 0) == 0) return LayerKind::kLvm;
  if (uuid.rfind("CRYPT-VERITY", 0) == 0 || uuid.rfind("CRYPT-INTEGRITY", 0) == 0) return LayerKind::kDmOther;
  if (uuid.rfind("CRYPT-", 0) == 0) return LayerKind::kDmCrypt;
  if (uuid.rfind("mpath-", 0) == 0) return LayerKind::kDmMultipath;
  if (uuid.rfind("part", 0) == 0) return LayerKind::kDmPartition;
  return LayerKind::kDmOther;
}

StorageLayer make_layer(const BlockDev& d) {
  StorageLayer l;
  l.device = d.name;
  if (is_nvme_namespace(d.name)) {
    l.kind = LayerKind::kNvmeNamespace;
  } else if (is_nvme_partition(d.name)) {
    l.kind = LayerKind::kNvmePartition;
  } else if (d.dm) {
    l.kind = dm_kind(d.dm_uuid);
    l.detail = d.dm_name;
    if (l.kind == LayerKind::kDmOther && !d.dm_uuid.empty()) l.detail += " (uuid " + d.dm_uuid.substr(0, d.dm_uuid.find('-')) + "-...)";
    l.evidence.push_back({d.dir + "/dm/uuid", d.dm_uuid.empty() ? "(empty)" : d.dm_uuid});
    if (!d.slaves.empty()) l.evidence.push_back({d.dir + "/slaves", join(d.slaves, " ")});
  } else if (d.md) {
    l.kind = LayerKind::kMd;
    l.detail = d.md_level;
    l.evidence.push_back({d.dir + "/md/level", d.md_level.empty() ? "(unreadable)" : d.md_level});
    if (!d.slaves.empty()) l.evidence.push_back({d.dir + "/slaves", join(d.slaves, " ")});
  } else if (d.loop) {
    l.kind = LayerKind::kLoop;
    l.detail = d.loop_backing;
    l.evidence.push_back({d.dir + "/loop/backing_file", d.loop_backing.empty() ? "(none)" : d.loop_backing});
  } else if (d.partition) {
    l.kind = LayerKind::kPartition;
  } else {
    l.kind = LayerKind::kDisk;
  }
  return l;
}

// ---------------------------------------------------------------------------------------------
// Mounts -> block devices.

class MountMap {
 public:
  MountMap(Source& src, const Machine& machine, const BlockGraph& graph) : src_(src), machine_(machine), graph_(graph) {}

  // The block device a mount sits on, or "" when it is not a (known) block device.
  std::string device_of(const Mount& m) {
    const std::string& dev = m.device;
    if (dev.rfind("/dev/", 0) == 0) {
      std::string rest = dev.substr(5);
      if (rest.rfind("mapper/", 0) == 0) {
        if (const BlockDev* d = graph_.by_dm_name(unescape_mount_path(rest.substr(7)))) return d->name;
      } else if (graph_.find(rest)) {
        return rest;
      }
      // /dev/disk/by-uuid/..., /dev/vg/lv, /dev/md/name: links in the source's /dev when it has one.
      if (auto target = src_.resolve(dev); target && target->rfind("/dev/", 0) == 0) {
        std::string name = basename(*target);
        if (graph_.find(name)) return name;
      }
    }
    // /dev/root and friends: the device number mountinfo gives for the mount point.
    if (auto majmin = mountinfo_majmin(m.mountpoint))
      if (const BlockDev* d = graph_.by_majmin(*majmin)) return d->name;
    return "";
  }

  // The mount that holds `path` (the last, i.e. topmost, of the longest matching mount point).
  const Mount* mount_holding(const std::string& path) const {
    const Mount* best = nullptr;
    size_t best_len = 0;
    for (const Mount& m : machine_.mounts) {
      std::string mp = unescape_mount_path(m.mountpoint);
      if (path_under(path, mp) && (!best || mp.size() >= best_len)) {
        best = &m;
        best_len = mp.size();
      }
    }
    return best;
  }

 private:
  std::optional<std::string> mountinfo_majmin(const std::string& mountpoint) {
    if (!mountinfo_read_) {
      mountinfo_read_ = true;
      FileRead r = src_.read("/proc/self/mountinfo");
      if (r.ok()) {
        // "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw": field 3 and 5.
        for (const std::string& line : split_lines(r.bytes)) {
          auto w = split_words(line);
          if (w.size() >= 5) majmin_[w[4]] = w[2];
        }
      }
    }
    auto it = majmin_.find(mountpoint);
    if (it == majmin_.end()) return std::nullopt;
    return it->second;
  }

  Source& src_;
  const Machine& machine_;
  const BlockGraph& graph_;
  bool mountinfo_read_ = false;
  std::map<std::string, std::string> majmin_;
};

// File systems that never sit on a block device; their mounts are not worth a mountinfo lookup.
bool is_pseudo_fs(const std::string& fstype) {
  static const std::set<std::string> pseudo = {
      "proc", "sysfs", "devtmpfs", "devpts", "tmpfs", "securityfs", "cgroup", "cgroup2", "pstore", "bpf",
      "debugfs", "tracefs", "configfs", "fusectl", "mqueue", "hugetlbfs", "autofs", "binfmt_misc", "efivarfs",
      "rpc_pipefs", "nsfs", "overlay", "ramfs", "rootfs", "selinuxfs", "nfsd", "zfs", "nfs", "nfs4", "cifs",
      "smb3", "9p", "virtiofs", "fuse", "fuse.lxcfs", "fuse.portal", "fuse.gvfsd-fuse", "squashfuse"};
  return pseudo.count(fstype) > 0;
}

// ---------------------------------------------------------------------------------------------
// Walking a stack down to its bottom devices.

struct Path {
  std::vector<StorageLayer> layers;  // top first
  std::string leaf;                  // the bottom device
};

class StackWalker {
 public:
  StackWalker(const BlockGraph& graph, MountMap& mounts) : graph_(graph), mounts_(mounts) {}

  std::vector<Path> walk(const std::string& top) {
    std::vector<Path> out;
    std::vector<StorageLayer> trail;
    std::set<std::string> visiting;
    descend(top, trail, visiting, out, 0);
    return out;
  }

 private:
  void descend(const std::string& name, std::vector<StorageLayer>& trail, std::set<std::string>& visiting,
               std::vector<Path>& out, int depth) {
    const BlockDev* d = graph_.find(name);
    // Depth and cycle guards: sysfs cannot loop, but a loop device's backing file can sit on itself.
    if (!d || depth > 16 || visiting.count(name)) {
      out.push_back({trail, name});
      return;
    }
    visiting.insert(name);
    trail.push_back(make_layer(*d));
    if (is_nvme(name)) {
      out.push_back({trail, name});
    } else if (d->loop && !d->loop_backing.empty()) {
      std::string file = d->loop_backing;
      const std::string deleted = " (deleted)";
      if (file.size() > deleted.size() && file.compare(file.size() - deleted.size(), deleted.size(), deleted) == 0)
        file.resize(file.size() - deleted.size());
      const Mount* holder = mounts_.mount_holding(file);
      std::string below = holder ? mounts_.device_of(*holder) : "";
      if (holder) trail.back().detail = d->loop_backing + " on " + holder->mountpoint + " (" + holder->fstype + ")";
      if (!below.empty()) {
        descend(below, trail, visiting, out, depth + 1);
      } else {
        out.push_back({trail, name});
      }
    } else if (!d->slaves.empty()) {
      for (const auto& s : d->slaves) descend(s, trail, visiting, out, depth + 1);
    } else if (d->partition && !d->parent.empty() && !is_plain_disk(d->parent)) {
      // md0p1, loop0p1: the partition sits on a stacked device; keep walking.
      descend(d->parent, trail, visiting, out, depth + 1);
    } else {
      out.push_back({trail, name});
    }
    trail.pop_back();
    visiting.erase(name);
  }

  bool is_plain_disk(const std::string& name) const {
    const BlockDev* d = graph_.find(name);
    return !d || (!d->dm && !d->md && !d->loop && d->slaves.empty());
  }

  const BlockGraph& graph_;
  MountMap& mounts_;
};

std::string namespace_of(const std::string& nvme) {
  std::smatch m;
  if (std::regex_match(nvme, m, kNvmePartition)) return m[1].str();
  return nvme;
}

void attach_controller(StorageStack& s, const Inventory& inv) {
  for (const auto& c : inv.nvmes)
    for (const auto& ns : c.namespaces)
      if (ns.name == s.nvme_namespace) {
        s.controller = c.name;
        s.controller_bdf = c.bdf;
        return;
      }
}

// ext4's journalling mode: /proc/mounts shows data= only when it differs from the default, and a
// default set in the superblock (tune2fs -o journal_data) hides there too; /proc/fs/ext4/<dev>/options
// lists every option, so it decides when /proc/mounts is silent. Neither: the default, ordered.
struct Ext4Mode {
  std::string mode;
  Evidence evidence;  // file empty when assumed
};

Ext4Mode read_ext4_mode(Source& src, const Mount& m, const std::string& device) {
  for (const std::string& opt : split_commas(m.options))
    if (opt.rfind("data=", 0) == 0) return {opt.substr(5), {"/proc/mounts", mount_line(m)}};
  const std::string file = "/proc/fs/ext4/" + device + "/options";
  if (FileRead r = src.read(file); r.ok()) {
    for (const std::string& line : split_lines(r.bytes)) {
      std::string opt(trim(line));
      if (opt.rfind("data=", 0) == 0) return {opt.substr(5), {file, opt}};
    }
  }
  return {"ordered", {"", "no data= option in /proc/mounts: ordered, the ext4 default"}};
}

NvmeMultipath read_multipath(Source& src, const Inventory& inv) {
  NvmeMultipath mp;
  const std::string param = "/sys/module/nvme_core/parameters/multipath";
  FileRead r = src.read(param);
  if (r.ok()) {
    std::string v(trim(r.bytes));
    mp.param = (v == "Y" || v == "1") ? NvmeMultipath::Param::kEnabled : NvmeMultipath::Param::kDisabled;
    mp.param_evidence = {param, v};
  } else if (r.status == ReadStatus::kMissing && !src.list("/sys/module/nvme_core").empty()) {
    mp.param = NvmeMultipath::Param::kAbsent;
    mp.param_evidence = {param, "absent: kernel built without CONFIG_NVME_MULTIPATH"};
  } else {
    mp.param = NvmeMultipath::Param::kUnknown;
    mp.param_evidence = {param, r.status == ReadStatus::kMissing ? "not present (nvme_core not loaded or not captured)"
                                                                 : "unreadable: " + r.error};
  }
  for (const std::string& subsys : src.list("/sys/class/nvme-subsystem")) {
    for (const std::string& entry : src.list("/sys/class/nvme-subsystem/" + subsys)) {
      if (is_nvme_namespace(entry)) {
        mp.heads[entry];
        mp.head_subsystem[entry] = subsys;
      } else if (std::regex_match(entry, kNvmeController)) {
        mp.subsystem_controllers[subsys].push_back(entry);
      }
    }
  }
  // The hidden per-path nodes live under each controller: nvme<subsys>c<ctrl>n<ns> -> head nvme<subsys>n<ns>.
  // The inventory already listed every controller (read-once): take its per-path nodes.
  std::smatch m;
  for (const NvmeController& ctrl : inv.nvmes)
    for (const std::string& entry : ctrl.path_nodes)
      if (std::regex_match(entry, m, kNvmePathNode)) mp.heads["nvme" + m[1].str() + "n" + m[2].str()].push_back(entry);
  return mp;
}

}  // namespace

const char* to_string(LayerKind kind) {
  switch (kind) {
    case LayerKind::kNvmeNamespace: return "NVMe namespace";
    case LayerKind::kNvmePartition: return "NVMe partition";
    case LayerKind::kLvm: return "LVM";
    case LayerKind::kDmCrypt: return "dm-crypt";
    case LayerKind::kDmMultipath: return "dm-multipath";
    case LayerKind::kDmPartition: return "dm partition mapping";
    case LayerKind::kDmOther: return "device-mapper";
    case LayerKind::kMd: return "md";
    case LayerKind::kLoop: return "loop";
    case LayerKind::kPartition: return "partition";
    case LayerKind::kDisk: return "disk";
  }
  return "?";
}

StorageLayout read_storage(Source& source, const Machine& machine, const Inventory& inv) {
  StorageLayout layout;
  layout.mounts_known = !machine.mounts.empty();
  layout.nvme_controllers = static_cast<int>(inv.nvmes.size());
  layout.multipath = read_multipath(source, inv);
  BlockGraph graph(source);
  layout.block_known = graph.load();
  if (!layout.block_known) return layout;

  MountMap mounts(source, machine, graph);
  StackWalker walker(graph, mounts);

  // Tops in the order first seen, with their mounts (bind mounts and subvolumes share one top).
  std::vector<std::string> tops;
  std::map<std::string, std::vector<Mount>> top_mounts;
  for (const Mount& m : machine.mounts) {
    if (m.fstype == "zfs") layout.zfs_mounted = true;
    std::string dev = mounts.device_of(m);
    if (dev.empty()) {
      if (!is_pseudo_fs(m.fstype) && m.device.rfind("/dev/", 0) == 0) layout.unmapped.push_back(mount_line(m));
      continue;
    }
    if (!top_mounts.count(dev)) tops.push_back(dev);
    top_mounts[dev].push_back(m);
  }

  // Active swap devices (swap files live on a file system and are not a device of their own).
  std::set<std::string> swaps;
  if (FileRead r = source.read("/proc/swaps"); r.ok()) {
    for (const std::string& line : split_lines(r.bytes)) {
      auto w = split_words(line);
      if (w.size() < 2 || w[1] != "partition" || w[0].rfind("/dev/", 0) != 0) continue;
      Mount as_mount{w[0], "", "swap", ""};
      std::string dev = mounts.device_of(as_mount);
      if (!dev.empty() && !top_mounts.count(dev)) {
        swaps.insert(dev);
        tops.push_back(dev);
      }
    }
  }

  // Held but not mounted: walk each NVMe device's holders up to devices nothing holds.
  std::set<std::string> seen_tops(tops.begin(), tops.end());
  std::function<void(const std::string&, std::set<std::string>&)> climb = [&](const std::string& name,
                                                                            std::set<std::string>& guard) {
    const BlockDev* d = graph.find(name);
    if (!d || !guard.insert(name).second) return;
    if (d->holders.empty()) {
      if (seen_tops.insert(name).second) tops.push_back(name);
      return;
    }
    for (const auto& h : d->holders) climb(h, guard);
  };
  for (const auto& [name, dev] : graph.all()) {
    if (!is_nvme(name) || dev.holders.empty()) continue;
    std::set<std::string> guard;
    climb(name, guard);
  }

  std::set<std::string> used;  // NVMe devices some stack ends on
  for (const std::string& top : tops) {
    std::vector<Path> paths = walker.walk(top);
    std::optional<Ext4Mode> ext4;
    if (top_mounts.count(top) && top_mounts[top].front().fstype == "ext4")
      ext4 = read_ext4_mode(source, top_mounts[top].front(), top);
    std::vector<std::string> leaves;
    for (const Path& p : paths) leaves.push_back(p.leaf);
    for (const Path& p : paths) {
      if (!is_nvme(p.leaf)) continue;
      StorageStack s;
      s.nvme = p.leaf;
      s.nvme_namespace = namespace_of(p.leaf);
      attach_controller(s, inv);
      s.layers = p.layers;
      if (top_mounts.count(top)) s.mounts = top_mounts[top];
      s.swap = swaps.count(top) > 0;
      for (const auto& other : leaves) {
        if (other == p.leaf) continue;
        s.other_members.push_back(other);
        if (!is_nvme(other)) s.non_nvme_members.push_back(other);
      }
      if (ext4) {
        s.ext4_data_mode = ext4->mode;
        s.ext4_data_mode_evidence = ext4->evidence;
      }
      used.insert(p.leaf);
      used.insert(s.nvme_namespace);
      layout.stacks.push_back(std::move(s));
    }
  }

  // Namespaces of local controllers that nothing uses: raw block device candidates.
  for (const auto& c : inv.nvmes) {
    for (const auto& ns : c.namespaces) {
      if (used.count(ns.name)) continue;
      const BlockDev* d = graph.find(ns.name);
      bool held = d && !d->holders.empty();
      for (const auto& p : ns.partitions)
        if (const BlockDev* pd = graph.find(p); pd && !pd->holders.empty()) held = true;
      if (held) continue;
      StorageStack s;
      s.nvme = ns.name;
      s.nvme_namespace = ns.name;
      s.controller = c.name;
      s.controller_bdf = c.bdf;
      s.unused = true;
      StorageLayer l;
      l.device = ns.name;
      l.kind = LayerKind::kNvmeNamespace;
      if (d) l.evidence.push_back({d->dir + "/holders", "(empty)"});
      if (!ns.partitions.empty()) l.detail = "partitions " + join(ns.partitions, ", ") + ", none in use";
      s.layers.push_back(std::move(l));
      layout.stacks.push_back(std::move(s));
    }
  }
  return layout;
}

namespace {

struct Verdict {
  Level level = Level::kPass;
  std::vector<std::string> reasons;
  std::vector<std::string> fixes;
  void add(Level l, const std::string& reason, const std::string& fix = "") {
    if (severity(l) > severity(level)) level = l;
    reasons.push_back(reason);
    if (!fix.empty() && std::find(fixes.begin(), fixes.end(), fix) == fixes.end()) fixes.push_back(fix);
  }
};

std::string layer_text(const StorageLayer& l) {
  switch (l.kind) {
    case LayerKind::kNvmeNamespace:
    case LayerKind::kNvmePartition:
    case LayerKind::kPartition:
    case LayerKind::kDisk:
      return l.device;
    case LayerKind::kLoop:
      return "loop " + l.device + (l.detail.empty() ? "" : " (backing file " + l.detail + ")");
    default:
      return std::string(to_string(l.kind)) + " " + (l.detail.empty() ? l.device : l.detail + " (" + l.device + ")");
  }
}

std::string chain_text(const StorageStack& s) {
  std::vector<std::string> parts;
  for (const auto& l : s.layers) parts.push_back(layer_text(l));
  return join(parts, " on ");
}

constexpr const char* kMultipathFix =
    "boot with nvme_core.multipath=N on the kernel command line (or `options nvme_core multipath=N` in "
    "/etc/modprobe.d/ and rebuild the initramfs when nvme_core is a module); cost: loses NVMe native multipathing for "
    "dual-ported drives (each path becomes its own block device, no automatic failover)";

Finding stack_finding(const StorageStack& s, const StorageLayout& layout) {
  Finding f;
  f.id = "storage.stack";
  f.subject = s.nvme;
  std::vector<std::string> points;
  for (const auto& m : s.mounts) {
    points.push_back(m.mountpoint);
    f.evidence.push_back({"/proc/mounts", mount_line(m)});
  }
  std::string fstype = s.mounts.empty() ? (s.swap ? "swap" : "") : s.mounts.front().fstype;
  std::string where = points.empty() ? (s.swap ? "swap" : "not mounted") : join(points, ", ");
  std::string head = where + ": " + (fstype.empty() || fstype == "swap" ? "" : fstype + " on ") + chain_text(s);
  if (s.swap) f.evidence.push_back({"/proc/swaps", "/dev/" + s.layers.front().device + " partition"});
  for (const auto& l : s.layers)
    for (const auto& e : l.evidence) f.evidence.push_back(e);

  Verdict v;
  const FsRule* rule = nullptr;
  for (const auto& r : kFsRules)
    if (fstype == r.fstype) rule = &r;

  if (rule && rule->level == Level::kInfo) {
    // Not a data target at all: say so once, whatever it is stacked on.
    v.add(Level::kInfo, rule->why, "nothing to do unless hipFile data is meant to live here; then: " + std::string(kFsFix));
  } else {
    bool stacked = false;
    bool lvm = false;
    for (const auto& l : s.layers) {
      switch (l.kind) {
        case LayerKind::kMd:
          v.add(Level::kFail, "md RAID (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
                std::string(kStackedFix) + " (here: md redundancy or striping)");
          stacked = true;
          break;
        case LayerKind::kDmCrypt:
          v.add(Level::kFail, "dm-crypt (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
                std::string(kStackedFix) + " (here: encryption at rest; consider the drive's own self-encryption)");
          stacked = true;
          break;
        case LayerKind::kLoop:
          v.add(Level::kFail, "loop device (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
                std::string(kStackedFix) + " (here: the convenience of an image file)");
          stacked = true;
          break;
        case LayerKind::kDmMultipath:
          v.add(Level::kFail, "dm-multipath (" + l.device + ") between the file system and the NVMe: " + kStackedWhy,
                std::string(kStackedFix) + " (here: path failover)");
          stacked = true;
          break;
        case LayerKind::kDmPartition:
        case LayerKind::kDmOther:
          v.add(Level::kFail, std::string(to_string(l.kind)) + " (" + l.device + ") between the file system and the NVMe: " +
                    kStackedWhy,
                kStackedFix);
          stacked = true;
          break;
        case LayerKind::kLvm:
          lvm = true;
          break;
        default:
          break;
      }
    }
    if (lvm) {
      if (!s.non_nvme_members.empty()) {
        v.add(Level::kFail,
              "the LVM volume also spans " + join(s.non_nvme_members, ", ") +
                  ", which is not NVMe: hipFile falls back to POSIX I/O for volumes with any non-NVMe physical volume",
              "move the volume's extents onto NVMe physical volumes only (pvmove, then vgreduce), or put the data on a "
              "file system directly on the NVMe partition; cost: the move and the capacity of the other disks");
      } else if (!stacked) {
        v.add(Level::kWarn,
              "LVM works with the fastpath only on all-NVMe volumes in newer hipFile releases (docs 10.2+); older "
              "releases fall back to POSIX I/O on any device-mapper volume",
              "use a hipFile release that supports LVM on all-NVMe volumes, or put the data on a file system directly "
              "on the NVMe partition; cost: LVM's resizing and snapshots");
      }
    }
    if (s.mounts.empty() && !s.swap) {
      v.add(Level::kInfo, "no file system mounted on " + s.layers.front().device + " (held by the stack above)");
    } else if (!rule) {
      v.add(Level::kFail, fstype + " is not ext4 or xfs: hipFile's fastpath refuses it and falls back to POSIX I/O", kFsFix);
    } else if (rule->level == Level::kFail) {
      v.add(Level::kFail, std::string(rule->why) + ": hipFile's fastpath refuses it and falls back to POSIX I/O", kFsFix);
    } else if (fstype == "ext4") {
      if (!s.ext4_data_mode_evidence.file.empty())
        f.evidence.push_back(s.ext4_data_mode_evidence);
      if (s.ext4_data_mode != "ordered") {
        v.add(Level::kFail,
              "ext4 with data=" + s.ext4_data_mode + ": hipFile accepts only data=ordered and falls back to POSIX I/O",
              "mount it with data=ordered (or no data= option) in /etc/fstab, then unmount and mount again (ext4 cannot "
              "change data= on remount; if tune2fs set journal_data as a default, clear it with tune2fs -o "
              "^journal_data); cost: data=" +
                  s.ext4_data_mode +
                  (s.ext4_data_mode == "journal" ? "'s journalling of file contents" : "'s looser ordering (speed)"));
      } else {
        v.add(Level::kPass, s.ext4_data_mode_evidence.file.empty() ? "ext4 with data=ordered (the default; /proc/mounts "
                                                                     "omits it)"
                                                                   : "ext4 with data=ordered");
      }
    } else {
      v.add(Level::kPass, rule->why);
    }
  }
  if (layout.multipath.heads.count(s.nvme_namespace)) {
    v.add(Level::kFail, s.nvme_namespace + " is a native NVMe multipath head node, which hipFile does not support "
                                            "(see storage.nvme_multipath)",
          kMultipathFix);
  } else if (!s.controller_bdf) {
    v.add(Level::kWarn, s.nvme_namespace + " has no local PCIe NVMe function (NVMe over fabrics?): the PCIe P2P verdict "
                                            "does not cover it; hipFile's NVMe-oF support needs RDMA and is experimental");
  }
  f.level = v.level;
  f.message = head + ": " + join(v.reasons, "; ");
  if (v.level != Level::kPass) f.fix = join(v.fixes, ". ");
  return f;
}

Finding raw_finding(const StorageStack& s, const StorageLayout& layout) {
  Finding f;
  f.id = "storage.raw";
  f.subject = s.nvme;
  for (const auto& l : s.layers)
    for (const auto& e : l.evidence) f.evidence.push_back(e);
  std::string parts = s.layers.front().detail.empty() ? "" : " (" + s.layers.front().detail + ")";
  if (!layout.mounts_known) {
    f.level = Level::kUnknown;
    f.message = s.nvme + parts + ": the mount table could not be read, so whether a file system on it is in use is unknown";
    f.evidence.push_back({"/proc/mounts", "not available"});
    f.fix = "run p2pcheck where /proc/mounts is readable (or capture it)";
    return f;
  }
  if (layout.zfs_mounted) {
    f.level = Level::kWarn;
    f.message = s.nvme + parts + ": nothing mounted on it and no holder, but zfs is mounted and zfs pool members show no "
                                 "holder in sysfs: it may belong to a pool (zfs is not supported by hipFile)";
    f.evidence.push_back({"/proc/mounts", "zfs mounts present"});
    f.fix = "check `zpool status`; if it is a pool member, put hipFile data on ext4 or xfs directly on an NVMe partition";
    return f;
  }
  if (layout.multipath.heads.count(s.nvme)) {
    f.level = Level::kFail;
    f.message = s.nvme + parts + ": nothing mounted on it, but it is a native NVMe multipath head node, which hipFile "
                                 "does not support even as a raw block device";
    f.evidence.push_back(layout.multipath.param_evidence);
    f.fix = kMultipathFix;
    return f;
  }
  f.level = Level::kPass;
  f.message = s.nvme + parts + ": nothing mounted on it, no holder: usable as a raw block device (O_DIRECT on /dev/" +
              s.nvme + "); for files, put ext4 or xfs directly on it";
  return f;
}

std::vector<Finding> multipath_findings(const StorageLayout& layout) {
  const NvmeMultipath& mp = layout.multipath;
  std::vector<Finding> out;
  const std::string fix = kMultipathFix;
  for (const auto& [head, paths] : mp.heads) {
    Finding f;
    f.id = "storage.nvme_multipath";
    f.subject = head;
    f.level = Level::kFail;
    auto sub = mp.head_subsystem.find(head);
    std::string subsys = sub == mp.head_subsystem.end() ? "" : sub->second;
    std::string ctrls;
    if (auto c = mp.subsystem_controllers.find(subsys); c != mp.subsystem_controllers.end()) ctrls = join(c->second, ", ");
    f.message = head + " is a native NVMe multipath head node" + (subsys.empty() ? "" : " of " + subsys) +
                (paths.empty() ? "" : " over " + join(paths, ", ")) + (ctrls.empty() ? "" : " (controllers " + ctrls + ")") +
                ": hipFile's fastpath does not support NVMe multipath devices (the head has no PCI parent)";
    f.evidence.push_back(mp.param_evidence);
    if (!subsys.empty()) f.evidence.push_back({"/sys/class/nvme-subsystem/" + subsys, head + (ctrls.empty() ? "" : " " + ctrls)});
    for (const auto& p : paths) f.evidence.push_back({"/sys/class/nvme", p});
    f.fix = fix;
    out.push_back(std::move(f));
  }
  if (!out.empty() || layout.nvme_controllers == 0) return out;
  Finding f;
  f.id = "storage.nvme_multipath";
  f.evidence.push_back(mp.param_evidence);
  switch (mp.param) {
    case NvmeMultipath::Param::kDisabled:
      f.level = Level::kPass;
      f.message = "native NVMe multipath is off (nvme_core multipath=N)";
      break;
    case NvmeMultipath::Param::kAbsent:
      f.level = Level::kPass;
      f.message = "the kernel has no native NVMe multipath (no nvme_core multipath parameter)";
      break;
    case NvmeMultipath::Param::kEnabled:
      f.level = Level::kInfo;
      f.message = "nvme_core multipath=Y, but no namespace sits behind a multipath head (single-controller subsystems get "
                  "none): nothing to do now; a dual-ported drive would get one";
      f.fix = "only if a dual-ported drive is added: " + fix;
      break;
    case NvmeMultipath::Param::kUnknown:
      f.level = Level::kUnknown;
      f.message = "whether native NVMe multipath is on is unknown; no multipath head node was seen";
      f.fix = "check /sys/module/nvme_core/parameters/multipath; hipFile needs N (or no head nodes)";
      break;
  }
  return {f};
}

}  // namespace

std::vector<Finding> check_storage(const StorageLayout& layout) {
  std::vector<Finding> out;
  if (!layout.block_known) {
    Finding f;
    f.id = "storage.unknown";
    f.level = Level::kUnknown;
    f.message = "the block layer could not be read, so the storage stacks above the NVMe namespaces are unknown";
    f.evidence.push_back({"/sys/class/block", "missing or empty"});
    f.evidence.push_back({"/sys/block", "missing or empty"});
    f.fix = "run p2pcheck where /sys is mounted (or capture /sys/class/block)";
    out.push_back(std::move(f));
  } else if (!layout.mounts_known) {
    Finding f;
    f.id = "storage.unknown";
    f.level = Level::kUnknown;
    f.message = "the mount table is empty or unreadable: which file systems sit on the NVMe namespaces is unknown";
    f.evidence.push_back({"/proc/mounts", "no entries"});
    f.fix = "run p2pcheck where /proc/mounts is readable (or capture it)";
    out.push_back(std::move(f));
  }
  for (const auto& line : layout.unmapped) {
    Finding f;
    f.id = "storage.unknown";
    f.level = Level::kUnknown;
    f.message = "mount of a /dev device that matches no block device in sysfs; whether it is on an NVMe is unknown";
    f.evidence.push_back({"/proc/mounts", line});
    f.fix = "capture /proc/self/mountinfo (its device numbers identify the block device)";
    out.push_back(std::move(f));
  }
  for (const auto& s : layout.stacks) out.push_back(s.unused ? raw_finding(s, layout) : stack_finding(s, layout));
  for (auto& f : multipath_findings(layout)) out.push_back(std::move(f));
  return out;
}

std::vector<Finding> check_storage(Source& source, const Machine& machine, const Inventory& inv) {
  return check_storage(read_storage(source, machine, inv));
}

}  // namespace p2pcheck
