// The block layer as sysfs shows it: each block device with its partitions, slaves and holders,
// and what device-mapper, md and loop say of it; one StorageLayer per device. The storage read
// step (storage_read.cc) walks it from mounts and swap down to the NVMe namespaces. Internal to src/checks/.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "p2pcheck/checks/storage.h"
#include "p2pcheck/source/source.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck::storage_internal {

// What an NVMe block or controller name is (parse_nvme_name); false for any other name.
bool nvme_kind_is(const std::string& name, NvmeName::Kind kind);
bool is_nvme_namespace(const std::string& name);
bool is_nvme_partition(const std::string& name);
bool is_nvme(const std::string& name);

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

  // Every block device: /sys/class/block, or /sys/block and the partitions in each disk's directory.
  bool load();
  const BlockDev* find(const std::string& name) const;
  const BlockDev* by_dm_name(const std::string& dm_name) const;
  const BlockDev* by_majmin(const std::string& majmin) const;
  const std::map<std::string, BlockDev>& all() const { return devs_; }

 private:
  void add(const std::string& name, const std::string& link);

  Source& src_;
  std::map<std::string, BlockDev> devs_;
  std::unordered_map<std::string, const BlockDev*> by_dm_name_, by_majmin_;  // filled by load()
};

// The layer a block device makes in a stack (NVMe namespace, partition, dm-*, md, loop, disk).
StorageLayer make_layer(const BlockDev& d);

}  // namespace p2pcheck::storage_internal
