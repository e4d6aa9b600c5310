// A fake root kept as a list of files, links and directories, so a test can take some away (a
// missing file, an unloaded module) before building the in-memory tree it runs on.
#pragma once

#include <map>
#include <string>

#include "test_tree.h"

namespace p2pcheck::testing {

class FileMap : public TreeWriter {
 public:
  void write(const std::string& rel, const std::string& bytes) const override { entries_[rel] = {Kind::kFile, bytes}; }
  void link(const std::string& rel, const std::string& target) const override { entries_[rel] = {Kind::kLink, target}; }
  void mkdir(const std::string& rel) const override { entries_[rel] = {Kind::kDir, ""}; }
  // Drops `rel` and everything below it.
  void remove(const std::string& rel) const {
    for (auto it = entries_.begin(); it != entries_.end();)
      it = it->first == rel || it->first.rfind(rel + "/", 0) == 0 ? entries_.erase(it) : std::next(it);
  }
  // A fresh tree with what is listed now.
  FakeRoot root() const {
    FakeRoot root;
    for (const auto& [rel, entry] : entries_) {
      if (entry.kind == Kind::kFile) root.write(rel, entry.data);
      if (entry.kind == Kind::kLink) root.link(rel, entry.data);
      if (entry.kind == Kind::kDir) root.mkdir(rel);
    }
    return root;
  }

 private:
  enum class Kind { kFile, kLink, kDir };
  struct Entry {
    Kind kind;
    std::string data;  // file bytes or link target
  };
  mutable std::map<std::string, Entry> entries_;
};

}  // namespace p2pcheck::testing
