// The block layer read from sysfs, and each device's layer in a stack.
#include "block_graph.h"

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

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

}  // namespace p2pcheck

namespace p2pcheck::storage_internal {

namespace {

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

}  // namespace

bool nvme_kind_is(const std::string& name, NvmeName::Kind kind) {
  auto nvme = parse_nvme_name(name);
  return nvme && nvme->kind == kind;
}

bool is_nvme_namespace(const std::string& name) { return nvme_kind_is(name, NvmeName::Kind::kNamespace); }
bool is_nvme_partition(const std::string& name) { return nvme_kind_is(name, NvmeName::Kind::kPartition); }
bool is_nvme(const std::string& name) { return is_nvme_namespace(name) || is_nvme_partition(name); }

bool BlockGraph::load() {
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
  // Indexes for the mounts' lookups (a container host has 100,000 mounts and thousands of devices);
  // of two devices with one dm name or number, the first by name, as a scan in order found.
  for (const auto& [name, dev] : devs_) {
    if (dev.dm) by_dm_name_.emplace(dev.dm_name, &dev);
    if (!dev.majmin.empty()) by_majmin_.emplace(dev.majmin, &dev);
  }
  return !devs_.empty();
}

const BlockDev* BlockGraph::find(const std::string& name) const {
  auto it = devs_.find(name);
  return it == devs_.end() ? nullptr : &it->second;
}
const BlockDev* BlockGraph::by_dm_name(const std::string& dm_name) const {
  auto it = by_dm_name_.find(dm_name);
  return it == by_dm_name_.end() ? nullptr : it->second;
}
const BlockDev* BlockGraph::by_majmin(const std::string& majmin) const {
  auto it = by_majmin_.find(majmin);
  return it == by_majmin_.end() ? nullptr : it->second;
}

void BlockGraph::add(const std::string& name, const std::string& link) {
  BlockDev d;
  d.name = name;
  auto canonical = src_.resolve_directory(link);
  // Reads and listings only (no bare existence tests), so a capture of what was read replays the same.
  d.partition = src_.read(path_in(link, "partition")).ok();
  // Whole disks are read under /sys/block, the path people know; partitions only live in /sys/class/block.
  d.dir = (!d.partition && src_.resolve_directory("/sys/block/" + name)) ? "/sys/block/" + name : link;
  if (d.partition && canonical) {
    size_t slash = canonical->rfind('/');
    if (slash != std::string::npos) d.parent = basename(canonical->substr(0, slash));
  }
  if (FileRead r = src_.read(path_in(d.dir, "dev")); r.ok()) d.majmin = std::string(trim(r.bytes));
  d.slaves = src_.list(path_in(d.dir, "slaves"));
  d.holders = src_.list(path_in(d.dir, "holders"));
  if (FileRead r = src_.read(path_in(d.dir, "dm/name")); r.ok()) {
    d.dm = true;
    d.dm_name = std::string(trim(r.bytes));
    if (FileRead u = src_.read(path_in(d.dir, "dm/uuid")); u.ok()) d.dm_uuid = std::string(trim(u.bytes));
  }
  if (FileRead r = src_.read(path_in(d.dir, "md/level")); r.ok() || r.status == ReadStatus::kDenied) {
    d.md = true;
    d.md_level = std::string(trim(r.bytes));
  }
  if (name.rfind("loop", 0) == 0 && !d.partition) {
    d.loop = true;
    if (FileRead r = src_.read(path_in(d.dir, "loop/backing_file")); r.ok())
      d.loop_backing = std::string(trim(r.bytes));
  }
  devs_[name] = std::move(d);
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
    if (l.kind == LayerKind::kDmOther && !d.dm_uuid.empty())
      l.detail += " (uuid " + d.dm_uuid.substr(0, d.dm_uuid.find('-')) + "-...)";
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

}  // namespace p2pcheck::storage_internal
