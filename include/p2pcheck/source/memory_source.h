// An in-memory Linux root: the archive backend loads a tar into one, and the imports (lspci, udev,
// hwloc, sosreport) synthesise the sysfs/proc files the analysis reads into one, so the analysis
// never learns where its bytes came from.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "p2pcheck/source/source.h"

namespace p2pcheck {

class MemoryTree {
 public:
  struct Node {
    EntryKind kind = EntryKind::kDir;
    std::string data;  // file bytes, or link target
  };

  MemoryTree();

  // Paths are absolute ("/sys/bus/pci/devices"); "." and empty components are ignored, ".." is
  // refused by the callers that take names from input. Missing parents are created as directories.
  // A later add replaces an earlier node of the same name, as tar extraction would (two
  // directories merge).
  void add_file(const std::string& path, std::string bytes);
  void add_dir(const std::string& path);
  void add_link(const std::string& path, std::string target);
  // Reads that must fail the way the original machine's did (an unreadable file, no config space).
  void add_failure(const std::string& path, FileRead failure);

  const Node* find(const std::string& path) const;
  // Sorted names directly below `path` (empty when it is not a directory).
  std::vector<std::string> children(const std::string& path) const;
  const std::map<std::string, FileRead>& failures() const { return failures_; }
  // What the format that filled this tree cannot carry (source.h); its Source answers with it.
  void set_not_carried(NotCarried not_carried) { not_carried_ = std::move(not_carried); }
  const NotCarried& not_carried() const { return not_carried_; }
  std::size_t size() const { return nodes_.size(); }

  // The subtree below `prefix` as its own root ("/top" -> "/"); failures move with it. The second
  // takes the bytes instead of copying them (a loaded archive's whole tree, held twice, was the
  // replay's peak).
  MemoryTree subtree(const std::string& prefix) const&;
  MemoryTree subtree(const std::string& prefix) &&;

 private:
  void add(const std::string& path, Node node);
  std::map<std::string, Node> nodes_;  // "" is the root
  std::map<std::string, std::set<std::string>> children_;
  std::map<std::string, FileRead> failures_;
  NotCarried not_carried_;
};

// A Source over `tree`; describe() returns `description` ("archive FILE", "lspci dump FILE").
std::unique_ptr<Source> open_memory_source(std::shared_ptr<const MemoryTree> tree, std::string description);

// "/a/./b//c/" -> "/a/b/c"; "" and "/" -> "". Does not interpret "..".
std::string normalize_tree_path(const std::string& path);

}  // namespace p2pcheck
