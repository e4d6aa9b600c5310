// Builders for small synthetic sysfs trees, so unit tests state exactly the case they test.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "p2pcheck/model/pci.h"
#include "p2pcheck/source/memory_source.h"

namespace p2pcheck::testing {

// Where FakeSysfs writes: a tree in memory (FakeRoot, the default for unit tests) or a directory on
// disk (TempDir, for the tests of the disk backends themselves). Paths are relative to the root.
class TreeWriter {
 public:
  virtual ~TreeWriter() = default;
  virtual void write(const std::string& rel, const std::string& bytes) const = 0;
  virtual void link(const std::string& rel, const std::string& target) const = 0;
  virtual void mkdir(const std::string& rel) const = 0;
};

// A fake Linux root in memory, behind the same Source interface as a captured tree: nothing touches
// the disk, and a fixture is loaded once and changed in place instead of copied.
class FakeRoot : public TreeWriter {
 public:
  FakeRoot() : tree_(std::make_shared<MemoryTree>()) {}
  // Every file, link and directory below `dir` (a generated fixture root), to build on.
  static FakeRoot load(const std::string& dir) {
    FakeRoot root;
    for (auto it = std::filesystem::recursive_directory_iterator(dir);
         it != std::filesystem::recursive_directory_iterator(); ++it) {
      std::string rel = it->path().lexically_relative(dir).string();  // relative() would follow links
      if (it->is_symlink()) {
        root.link(rel, std::filesystem::read_symlink(it->path()).string());
      } else if (it->is_directory()) {
        root.mkdir(rel);
      } else {
        std::ifstream in(it->path(), std::ios::binary);
        root.write(rel, std::string(std::istreambuf_iterator<char>(in), {}));
      }
    }
    return root;
  }

  void write(const std::string& rel, const std::string& bytes) const override { tree_->add_file("/" + rel, bytes); }
  void link(const std::string& rel, const std::string& target) const override { tree_->add_link("/" + rel, target); }
  void mkdir(const std::string& rel) const override { tree_->add_dir("/" + rel); }
  // A file that exists but cannot be read, as on the machine (kDenied: needs root; kFailed: I/O error).
  void fail(const std::string& rel, ReadStatus status, const std::string& error) const {
    tree_->add_file("/" + rel, "");
    tree_->add_failure("/" + rel, FileRead{status, "", error});
  }
  // The tree as a Source. It shares the tree: later writes are seen by sources made before them.
  std::unique_ptr<Source> source(const std::string& description = "tree (memory)") const {
    return open_memory_source(tree_, description);
  }

 private:
  std::shared_ptr<MemoryTree> tree_;
};

class TempDir : public TreeWriter {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "p2pcheck-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

  void write(const std::string& rel, const std::string& bytes) const override {
    std::filesystem::path p = path_ + "/" + rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }
  void link(const std::string& rel, const std::string& target) const override {
    std::filesystem::path p = path_ + "/" + rel;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_symlink(target, p);
  }
  void mkdir(const std::string& rel) const override { std::filesystem::create_directories(path_ + "/" + rel); }

 private:
  std::string path_;
};

// Config space bytes with a valid header, a PCIe capability and optional ACS, as hardware shows them.
class ConfigSpace {
 public:
  ConfigSpace(std::uint16_t vendor, std::uint16_t device, std::uint32_t class_code, bool bridge) : bytes_(4096, '\0') {
    put16(0x00, vendor);
    put16(0x02, device);
    put8(0x08, 0x01);
    put8(0x09, class_code & 0xff);
    put8(0x0a, (class_code >> 8) & 0xff);
    put8(0x0b, (class_code >> 16) & 0xff);
    put8(0x0e, bridge ? 1 : 0);
  }
  // PCIe capability at 0x40: port type (0 endpoint, 4 root port, 5 upstream, 6 downstream, 9 RCiEP).
  ConfigSpace& pcie(int port_type, int max_speed = 4, int max_width = 16, int speed = 4, int width = 16) {
    put16(0x06, 0x0010);  // status: capability list
    put8(0x34, 0x40);
    put8(0x40, 0x10);
    put8(0x41, 0x00);
    put16(0x42, static_cast<std::uint16_t>(0x0002 | port_type << 4));
    put32(0x4c, static_cast<std::uint32_t>(max_speed | max_width << 4));
    put16(0x52, static_cast<std::uint16_t>(speed | width << 4));
    return *this;
  }
  ConfigSpace& acs(std::uint16_t cap, std::uint16_t ctrl) {
    put32(0x100, 0x000d | 1u << 16);  // ACS, version 1, last in the chain
    put16(0x104, cap);
    put16(0x106, ctrl);
    return *this;
  }
  std::string bytes(size_t size = 4096) const { return bytes_.substr(0, size); }

 private:
  void put8(size_t at, std::uint32_t v) { bytes_[at] = static_cast<char>(v & 0xff); }
  void put16(size_t at, std::uint32_t v) {
    put8(at, v);
    put8(at + 1, v >> 8);
  }
  void put32(size_t at, std::uint32_t v) {
    put16(at, v);
    put16(at + 2, v >> 16);
  }
  std::string bytes_;
};

// A sysfs tree: host bridges and functions nested as the kernel lays them out.
class FakeSysfs {
 public:
  explicit FakeSysfs(const TreeWriter& dir) : dir_(dir) {}

  // Adds a function below `parent_dir` ("sys/devices/pci0000:00" or a function's dir); returns its dir.
  std::string add(const std::string& parent_dir, const std::string& bdf, std::uint16_t vendor, std::uint16_t device,
                  std::uint32_t class_code, const std::string& config) const {
    std::string dir = parent_dir + "/" + bdf;
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x\n", vendor);
    dir_.write(dir + "/vendor", buf);
    std::snprintf(buf, sizeof buf, "0x%04x\n", device);
    dir_.write(dir + "/device", buf);
    std::snprintf(buf, sizeof buf, "0x%06x\n", class_code);
    dir_.write(dir + "/class", buf);
    dir_.write(dir + "/config", config);
    dir_.write(dir + "/numa_node", "-1\n");
    std::string up;
    for (char c : dir)
      if (c == '/') up += "../";
    // sys/bus/pci/devices/X -> ../../../devices/...
    dir_.link("sys/bus/pci/devices/" + bdf, "../../../" + dir.substr(4));
    return dir;
  }

 private:
  const TreeWriter& dir_;
};

}  // namespace p2pcheck::testing
