// An in-memory Linux root: the archive backend loads a tar into one, and the imports (lspci, udev,
// hwloc, sosreport) synthesise the sysfs/proc files the analysis reads into one, so the analysis
// never learns where its bytes came from.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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
  // directories merge). Paths are taken by value: a caller's temporary becomes the key, uncopied.
  void add_file(std::string path, std::string bytes);
  void add_dir(std::string path);
  void add_link(std::string path, std::string target);
  // Reads that must fail the way the original machine's did (an unreadable file, no config space).
  void add_failure(std::string path, FileRead failure);

  const Node* find(std::string_view path) const;
  // Sorted names directly below `path` (empty when it is not a directory).
  std::vector<std::string> children(std::string_view path) const;
  const FailureMap& failures() const { return failures_; }
  // What the format that filled this tree cannot carry (source.h); its Source answers with it.
  void set_not_carried(NotCarried not_carried) { not_carried_ = std::move(not_carried); }
  const NotCarried& not_carried() const { return not_carried_; }
  std::size_t size() const { return nodes_.size(); }

  // The subtree below `prefix` as its own root ("/top" -> "/"); failures move with it. The second
  // takes the nodes instead of copying them (a loaded archive's whole tree, held twice, was the
  // replay's peak): each keeps its allocation, only its key loses the prefix.
  MemoryTree subtree(std::string_view prefix) const&;
  MemoryTree subtree(std::string_view prefix) &&;

 private:
  friend std::unique_ptr<Source> open_memory_source(MemoryTree tree, std::string description);
  // A node and the names created below it, in the order they came (children() sorts a copy).
  struct Entry {
    Node node;
    std::vector<std::string> names;
  };
  // Hashed by the whole normalized path: a replay looks up every path the analysis asks once, and a
  // byte-ordered map compared ~100-byte keys ~15 times per lookup. The default hasher (libstdc++
  // keeps each key's hash with it, so bucket walks compare hashes before paths); lookups by
  // string_view build a key, which measured no slower than a transparent hash.
  using Nodes = std::unordered_map<std::string, Entry>;
  // `path` must be normalized (normalize_tree_path) and not the root.
  void add(std::string path, Node node);
  Nodes nodes_;  // "" is the root
  // The directory the last add went into, known to exist as one, and its entry (an element of
  // nodes_: a rehash never moves one): members come directory by directory, so most adds neither
  // walk up their parents nor look the directory up. A copied or moved tree starts without it.
  struct LastDir {
    std::string path;
    Entry* entry = nullptr;
    LastDir() = default;
    LastDir(const LastDir&) {}
    LastDir& operator=(const LastDir&) {
      path.clear();
      entry = nullptr;
      return *this;
    }
  };
  LastDir last_dir_;
  FailureMap failures_;
  NotCarried not_carried_;
};

// A Source over `tree`; describe() returns `description` ("archive FILE", "lspci dump FILE").
std::unique_ptr<Source> open_memory_source(std::shared_ptr<const MemoryTree> tree, std::string description);
// The same for a tree nobody else holds: its failures move into the Source instead of being copied.
std::unique_ptr<Source> open_memory_source(MemoryTree tree, std::string description);

// "/a/./b//c/" -> "/a/b/c"; "" and "/" -> "". Does not interpret "..".
std::string normalize_tree_path(std::string_view path);

}  // namespace p2pcheck
