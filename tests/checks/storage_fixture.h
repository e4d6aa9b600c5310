// The storage tests' machines: a block layer laid out as sysfs does (FakeBlock), a small machine with
// two NVMe drives and a SATA disk (Storage), one with a native multipath head (Multipath), and
// lookups over findings.
#pragma once

#include <gtest/gtest.h>
#include <map>
#include <string>
#include <vector>

#include "file_map.h"
#include "p2pcheck/checks/storage.h"
#include "test_tree.h"

namespace p2pcheck::testing {

// A block layer as sysfs lays it out: whole disks, partitions inside them, holders/ and slaves/
// links both ways, dm/, md/ and loop/ attributes. Links are absolute, i.e. inside the tree's root.
class FakeBlock {
 public:
  explicit FakeBlock(const TreeWriter& dir) : dir_(dir) {}

  std::string disk(const std::string& name, const std::string& majmin,
                   const std::string& parent = "sys/devices/virtual/block") {
    std::string d = parent + "/" + name;
    dir_.write(d + "/dev", majmin + "\n");
    dir_.mkdir(d + "/holders");
    dir_.mkdir(d + "/slaves");
    dir_.link("sys/class/block/" + name, "/" + d);
    dir_.link("sys/block/" + name, "/" + d);
    paths_[name] = d;
    return d;
  }
  // An NVMe namespace below its controller, as the nvme driver registers it.
  std::string nvme(const std::string& ctrl, const std::string& name, const std::string& majmin) {
    return disk(name, majmin, "sys/devices/pci0000:00/0000:00:01.0/0000:04:00.0/nvme/" + ctrl);
  }
  std::string partition(const std::string& disk_name, const std::string& name, const std::string& majmin, int number) {
    std::string d = paths_.at(disk_name) + "/" + name;
    dir_.write(d + "/dev", majmin + "\n");
    dir_.write(d + "/partition", std::to_string(number) + "\n");
    dir_.mkdir(d + "/holders");
    dir_.link("sys/class/block/" + name, "/" + d);
    paths_[name] = d;
    return d;
  }
  void stack(const std::string& upper, const std::string& lower) {
    dir_.link(paths_.at(upper) + "/slaves/" + lower, "/" + paths_.at(lower));
    dir_.link(paths_.at(lower) + "/holders/" + upper, "/" + paths_.at(upper));
  }
  void dm(const std::string& name, const std::string& majmin, const std::string& dm_name, const std::string& uuid,
          const std::vector<std::string>& slaves) {
    std::string d = disk(name, majmin);
    dir_.write(d + "/dm/name", dm_name + "\n");
    dir_.write(d + "/dm/uuid", uuid + (uuid.empty() ? "" : "\n"));
    for (const auto& s : slaves) stack(name, s);
  }
  void md(const std::string& name, const std::string& majmin, const std::string& level,
          const std::vector<std::string>& slaves) {
    std::string d = disk(name, majmin);
    dir_.write(d + "/md/level", level + "\n");
    for (const auto& s : slaves) stack(name, s);
  }
  void loop(const std::string& name, const std::string& majmin, const std::string& backing) {
    std::string d = disk(name, majmin);
    dir_.write(d + "/loop/backing_file", backing + "\n");
  }

 private:
  const TreeWriter& dir_;
  std::map<std::string, std::string> paths_;
};

inline NvmeController controller(const std::string& name, const std::string& bdf,
                                 std::vector<std::pair<std::string, std::vector<std::string>>> namespaces) {
  NvmeController c;
  c.name = name;
  c.bdf = *Bdf::parse(bdf);
  for (auto& [ns, parts] : namespaces) {
    NvmeNamespace n;
    n.name = ns;
    n.partitions = parts;
    c.namespaces.push_back(n);
  }
  return c;
}

inline const Finding* find(const std::vector<Finding>& fs, const std::string& id, const std::string& subject) {
  for (const auto& f : fs)
    if (f.id == id && f.subject == subject) return &f;
  return nullptr;
}

inline bool has_evidence(const Finding& f, const std::string& file, const std::string& value_part = "") {
  for (const auto& e : f.evidence)
    if (e.file == file && e.value.find(value_part) != std::string::npos) return true;
  return false;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class Storage : public ::testing::Test {
 protected:
  Storage() : block_(dir_) {
    dir_.write("sys/module/nvme_core/parameters/multipath", "N\n");
    block_.nvme("nvme0", "nvme0n1", "259:0");
    block_.partition("nvme0n1", "nvme0n1p1", "259:1", 1);
    block_.partition("nvme0n1", "nvme0n1p2", "259:2", 2);
    block_.nvme("nvme1", "nvme1n1", "259:3");
    block_.partition("nvme1n1", "nvme1n1p1", "259:4", 1);
    block_.disk("sda", "8:0", "sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block");
    block_.partition("sda", "sda1", "8:1", 1);
    inv_.nvmes.push_back(controller("nvme0", "0000:04:00.0", {{"nvme0n1", {"nvme0n1p1", "nvme0n1p2"}}}));
    inv_.nvmes.push_back(controller("nvme1", "0000:05:00.0", {{"nvme1n1", {"nvme1n1p1"}}}));
    machine_.mounts.push_back({"/dev/nvme0n1p2", "/", "ext4", "rw,relatime,errors=remount-ro"});
    machine_.mounts.push_back({"/dev/nvme0n1p1", "/boot/efi", "vfat", "rw,relatime,fmask=0077"});
    machine_.mounts.push_back({"proc", "/proc", "proc", "rw,nosuid"});
  }
  std::vector<Finding> run() {
    root_ = dir_.root();
    source_ = root_.source();
    layout_ = read_storage(*source_, machine_, inv_);
    return check_storage(layout_);
  }

  FileMap dir_;
  FakeRoot root_;
  FakeBlock block_;
  Inventory inv_;
  Machine machine_;
  std::unique_ptr<Source> source_;
  StorageLayout layout_;
};

class Multipath : public Storage {
 protected:
  void make_head() {
    dir_.write("sys/module/nvme_core/parameters/multipath", "Y\n");
    dir_.mkdir("sys/devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1");
    dir_.link("sys/class/nvme-subsystem/nvme-subsys1", "/sys/devices/virtual/nvme-subsystem/nvme-subsys1");
    dir_.mkdir("sys/devices/virtual/nvme-subsystem/nvme-subsys1/nvme1");
    dir_.mkdir("sys/devices/virtual/nvme-subsystem/nvme-subsys1/nvme2");
    dir_.mkdir("sys/devices/pci0000:00/0000:00:01.0/0000:05:00.0/nvme/nvme1/nvme1c1n1");
    dir_.link("sys/class/nvme/nvme1", "/sys/devices/pci0000:00/0000:00:01.0/0000:05:00.0/nvme/nvme1");
    dir_.mkdir("sys/devices/pci0000:00/0000:00:02.0/0000:06:00.0/nvme/nvme2/nvme1c2n1");
    dir_.link("sys/class/nvme/nvme2", "/sys/devices/pci0000:00/0000:00:02.0/0000:06:00.0/nvme/nvme2");
    // What read_inventory() finds under those controllers.
    NvmeController c1, c2;
    c1.name = "nvme1";
    c1.path_nodes = {"nvme1c1n1"};
    c2.name = "nvme2";
    c2.path_nodes = {"nvme1c2n1"};
    inv_.nvmes.push_back(c1);
    inv_.nvmes.push_back(c2);
  }
};

}  // namespace p2pcheck::testing
