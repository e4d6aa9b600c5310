// The storage read step: the block layer, the mounts on it, swap, ext4 data modes and NVMe
// multipath, into a StorageLayout that check_storage judges.
#include <algorithm>
#include <array>
#include <functional>
#include <set>
#include <unordered_map>

#include "block_graph.h"
#include "p2pcheck/checks/path_target.h"
#include "p2pcheck/checks/storage.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/source/table_text.h"

namespace p2pcheck {
namespace {

using storage_internal::BlockDev;
using storage_internal::BlockGraph;
using storage_internal::is_nvme;
using storage_internal::is_nvme_namespace;
using storage_internal::is_nvme_partition;
using storage_internal::make_layer;
using storage_internal::nvme_kind_is;

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

// ---------------------------------------------------------------------------------------------
// Mounts -> block devices.

class MountMap {
 public:
  MountMap(Source& src, const Machine& machine, const BlockGraph& graph)
      : src_(src), machine_(machine), graph_(graph) {}

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

  // The mount that holds `path` (the last, i.e. topmost, of the longest matching mount point), as
  // p2pcheck::mount_holding says, looked up by the path's prefixes: each loop device asks once, and a
  // container host has 100,000 mounts.
  const Mount* mount_holding(std::string_view path) {
    if (!by_point_) {
      by_point_.emplace();
      for (const Mount& m : machine_.mounts) (*by_point_)[unescape_mount_path(m.mountpoint)] = &m;
    }
    if (path.empty() || path[0] != '/') return nullptr;
    for (std::string_view prefix = path;;) {
      if (auto it = by_point_->find(std::string(prefix)); it != by_point_->end()) return it->second;
      if (prefix.size() <= 1) return nullptr;
      std::size_t slash = prefix.rfind('/');
      prefix = prefix.substr(0, slash == 0 ? 1 : slash);
    }
  }

 private:
  std::optional<std::unordered_map<std::string, const Mount*>> by_point_;  // unescaped mount point -> last mount
  std::optional<std::string> mountinfo_majmin(const std::string& mountpoint) {
    if (!mountinfo_read_) {
      mountinfo_read_ = true;
      FileRead r = src_.read("/proc/self/mountinfo");
      if (r.ok()) {
        // "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw": field 3 and 5.
        for (std::string_view line : split_table_lines(r.bytes, "/proc/self/mountinfo")) {
          std::array<std::string_view, 5> w;
          if (first_words(line, w) == 5) majmin_[std::string(w[4])] = w[2];
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
  static const std::set<std::string> pseudo = {"proc",
                                               "sysfs",
                                               "devtmpfs",
                                               "devpts",
                                               "tmpfs",
                                               "securityfs",
                                               "cgroup",
                                               "cgroup2",
                                               "pstore",
                                               "bpf",
                                               "debugfs",
                                               "tracefs",
                                               "configfs",
                                               "fusectl",
                                               "mqueue",
                                               "hugetlbfs",
                                               "autofs",
                                               "binfmt_misc",
                                               "efivarfs",
                                               "rpc_pipefs",
                                               "nsfs",
                                               "overlay",
                                               "ramfs",
                                               "rootfs",
                                               "selinuxfs",
                                               "nfsd",
                                               "zfs",
                                               "nfs",
                                               "nfs4",
                                               "cifs",
                                               "smb3",
                                               "9p",
                                               "virtiofs",
                                               "fuse",
                                               "fuse.lxcfs",
                                               "fuse.portal",
                                               "fuse.gvfsd-fuse",
                                               "squashfuse"};
  return pseudo.count(fstype) > 0;
}

// ---------------------------------------------------------------------------------------------
// Walking a stack down to its bottom devices.

struct Path {
  std::vector<StorageLayer> layers;  // top first
  std::string leaf;                  // the bottom device
};

// Each device below the top is walked once: a device reached again (a device-mapper diamond, 12
// layers of 3 being 3^12 routes) adds one path, through the devices new since the last path, and
// ends with the first path found below it. So every layer shows in some path, and the work is
// the devices times the depth, not the routes.
class StackWalker {
 public:
  StackWalker(const BlockGraph& graph, MountMap& mounts) : graph_(graph), mounts_(mounts) {}

  std::vector<Path> walk(const std::string& top) {
    out_.clear();
    trail_.clear();
    below_.clear();
    fresh_ = false;
    descend(top, 0);
    return std::move(out_);
  }

 private:
  // The first path found below each device walked (its layers from it down); nullopt while it is
  // on the trail, so reaching it again is a loop.
  std::map<std::string, std::optional<Path>> below_;
  std::vector<StorageLayer> trail_;
  std::vector<Path> out_;
  bool fresh_ = false;  // a device joined the trail since the last path

  void emit(const std::string& leaf, const Path* rest = nullptr) {
    Path p{trail_, rest ? rest->leaf : leaf};
    if (rest) p.layers.insert(p.layers.end(), rest->layers.begin(), rest->layers.end());
    for (std::size_t i = 0; i < trail_.size(); ++i) {
      std::optional<Path>& first = below_[trail_[i].device];
      if (!first) first = Path{{p.layers.begin() + static_cast<std::ptrdiff_t>(i), p.layers.end()}, p.leaf};
    }
    out_.push_back(std::move(p));
    fresh_ = false;
  }

  void descend(const std::string& name, int depth) {
    const BlockDev* d = graph_.find(name);
    if (auto seen = below_.find(name); seen != below_.end()) {
      if (fresh_) seen->second ? emit(name, &*seen->second) : emit(name);  // nullopt: a loop, a leaf here
      return;
    }
    // Depth guard: sysfs cannot loop, but a loop device's backing file can sit on itself.
    if (!d || depth > 16) return emit(name);
    below_.emplace(name, std::nullopt);
    fresh_ = true;
    trail_.push_back(make_layer(*d));
    if (is_nvme(name)) {
      emit(name);
    } else if (d->loop && !d->loop_backing.empty()) {
      descend_loop(*d, depth);
    } else if (!d->slaves.empty()) {
      for (const auto& s : d->slaves) descend(s, depth + 1);
    } else if (d->partition && !d->parent.empty() && !is_plain_disk(d->parent)) {
      // md0p1, loop0p1: the partition sits on a stacked device; keep walking.
      descend(d->parent, depth + 1);
    } else {
      emit(name);
    }
    trail_.pop_back();
  }

  // A loop device continues below the file system that holds its backing file.
  void descend_loop(const BlockDev& d, int depth) {
    std::string file = d.loop_backing;
    const std::string deleted = " (deleted)";
    if (file.size() > deleted.size() && file.compare(file.size() - deleted.size(), deleted.size(), deleted) == 0)
      file.resize(file.size() - deleted.size());
    const Mount* holder = mounts_.mount_holding(file);
    std::string below = holder ? mounts_.device_of(*holder) : "";
    if (holder) trail_.back().detail = d.loop_backing + " on " + holder->mountpoint + " (" + holder->fstype + ")";
    if (!below.empty()) {
      descend(below, depth + 1);
    } else {
      emit(d.name);
    }
  }

  bool is_plain_disk(const std::string& name) const {
    const BlockDev* d = graph_.find(name);
    return !d || (!d->dm && !d->md && !d->loop && d->slaves.empty());
  }

  const BlockGraph& graph_;
  MountMap& mounts_;
};

std::string namespace_of(const std::string& nvme) {
  auto part = parse_nvme_name(nvme);
  return part && part->kind == NvmeName::Kind::kPartition ? part->ns : nvme;
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
    for (std::string_view rest = r.bytes; !rest.empty();) {
      std::string_view opt = trim(next_line(rest));
      if (opt.substr(0, 5) == "data=") return {std::string(opt.substr(5)), {file, std::string(opt)}};
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
    if (r.status == ReadStatus::kNotCarried) {
      mp.not_carried = r.error;
      mp.param_evidence.value = r.error;
    }
  }
  for (const std::string& subsys : src.list("/sys/class/nvme-subsystem")) {
    for (const std::string& entry : src.list("/sys/class/nvme-subsystem/" + subsys)) {
      if (is_nvme_namespace(entry)) {
        mp.heads[entry];
        mp.head_subsystem[entry] = subsys;
      } else if (nvme_kind_is(entry, NvmeName::Kind::kController)) {
        mp.subsystem_controllers[subsys].push_back(entry);
      }
    }
  }
  // The hidden per-path nodes live under each controller: nvme<subsys>c<ctrl>n<ns> -> head nvme<subsys>n<ns>.
  // The inventory already listed every controller (read-once): take its per-path nodes.
  for (const NvmeController& ctrl : inv.nvmes)
    for (const std::string& entry : ctrl.path_nodes)
      if (auto path = parse_nvme_name(entry); path && path->kind == NvmeName::Kind::kPathNode)
        mp.heads[path->ns].push_back(entry);
  return mp;
}

// The devices stacks start from, in the order first seen, with what sits on each.
struct Tops {
  std::vector<std::string> order;
  std::map<std::string, std::vector<Mount>> mounts;  // bind mounts and subvolumes share one top
  std::set<std::string> swaps;
};

// Every mount whose device maps to a block device; the rest are pseudo file systems or unmapped.
void add_mounted_tops(const Machine& machine, MountMap& mounts, StorageLayout& layout, Tops& tops) {
  for (const Mount& m : machine.mounts) {
    if (m.fstype == "zfs") layout.zfs_mounted = true;
    std::string dev = mounts.device_of(m);
    if (dev.empty()) {
      if (!is_pseudo_fs(m.fstype) && m.device.rfind("/dev/", 0) == 0) layout.unmapped.push_back(mount_line(m));
      continue;
    }
    if (!tops.mounts.count(dev)) tops.order.push_back(dev);
    tops.mounts[dev].push_back(m);
  }
}

// Active swap devices (swap files live on a file system and are not a device of their own).
void add_swap_tops(Source& source, MountMap& mounts, Tops& tops) {
  FileRead r = source.read("/proc/swaps");
  if (!r.ok()) return;
  for (std::string_view line : split_table_lines(r.bytes, "/proc/swaps")) {
    std::array<std::string_view, 2> w;  // Filename Type Size Used Priority
    if (first_words(line, w) < 2 || w[1] != "partition" || w[0].substr(0, 5) != "/dev/") continue;
    Mount as_mount{std::string(w[0]), "", "swap", ""};
    std::string dev = mounts.device_of(as_mount);
    if (!dev.empty() && !tops.mounts.count(dev)) {
      tops.swaps.insert(dev);
      tops.order.push_back(dev);
    }
  }
}

// Held but not mounted: walk each NVMe device's holders up to devices nothing holds.
void add_held_tops(const BlockGraph& graph, Tops& tops) {
  std::set<std::string> seen_tops(tops.order.begin(), tops.order.end());
  std::function<void(const std::string&, std::set<std::string>&)> climb = [&](const std::string& name,
                                                                              std::set<std::string>& guard) {
    const BlockDev* d = graph.find(name);
    if (!d || !guard.insert(name).second) return;
    if (d->holders.empty()) {
      if (seen_tops.insert(name).second) tops.order.push_back(name);
      return;
    }
    for (const auto& h : d->holders) climb(h, guard);
  };
  for (const auto& [name, dev] : graph.all()) {
    if (!is_nvme(name) || dev.holders.empty()) continue;
    std::set<std::string> guard;
    climb(name, guard);
  }
}

// One stack per NVMe device below `top`; `used` collects the NVMe devices they end on.
void add_stacks_from(const std::string& top, Source& source, StackWalker& walker, const Tops& tops,
                     const Inventory& inv, StorageLayout& layout, std::set<std::string>& used) {
  std::vector<Path> paths = walker.walk(top);
  auto mounted = tops.mounts.find(top);
  std::optional<Ext4Mode> ext4;
  if (mounted != tops.mounts.end() && mounted->second.front().fstype == "ext4")
    ext4 = read_ext4_mode(source, mounted->second.front(), top);
  std::vector<std::string> leaves;
  for (const Path& p : paths) leaves.push_back(p.leaf);
  for (const Path& p : paths) {
    if (!is_nvme(p.leaf)) continue;
    StorageStack s;
    s.nvme = p.leaf;
    s.nvme_namespace = namespace_of(p.leaf);
    attach_controller(s, inv);
    s.layers = p.layers;
    if (mounted != tops.mounts.end()) s.mounts = mounted->second;
    s.swap = tops.swaps.count(top) > 0;
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
void add_unused_namespaces(const BlockGraph& graph, const Inventory& inv, const std::set<std::string>& used,
                           StorageLayout& layout) {
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
}

}  // namespace

StorageLayout read_storage(Source& source, const Machine& machine, const Inventory& inv) {
  StorageLayout layout;
  layout.from_dump = machine.from_dump;
  layout.mounts_known = !machine.mounts.empty();
  if (!layout.mounts_known) layout.mounts_not_carried = machine.not_carried({"/proc/mounts", "/proc/self/mounts"});
  layout.nvme_controllers = static_cast<int>(inv.nvmes.size());
  layout.multipath = read_multipath(source, inv);
  BlockGraph graph(source);
  layout.block_known = graph.load();
  if (!layout.block_known) {
    if (auto why = source.not_carried("/sys/class/block")) layout.block_not_carried = *why;
    return layout;
  }

  MountMap mounts(source, machine, graph);
  StackWalker walker(graph, mounts);
  Tops tops;
  add_mounted_tops(machine, mounts, layout, tops);
  add_swap_tops(source, mounts, tops);
  add_held_tops(graph, tops);
  std::set<std::string> used;  // NVMe devices some stack ends on
  for (const std::string& top : tops.order) add_stacks_from(top, source, walker, tops, inv, layout, used);
  add_unused_namespaces(graph, inv, used, layout);
  return layout;
}

}  // namespace p2pcheck
