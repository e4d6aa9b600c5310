// The in-memory tree backend shared by archives and imports.
#include "p2pcheck/source/memory_source.h"

#include <string.h>

#include <algorithm>
#include <utility>

#include "p2pcheck/source/printable.h"

namespace p2pcheck {

namespace {

// A normalized path: "" or "/a/b" with no empty or "." component and no trailing slash. Names
// from archives and imports nearly always are, so they are taken as they come.
bool is_normal(std::string_view path) {
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] != '/') return false;
    size_t j = path.find('/', i + 1);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i + 1, j - i - 1);
    if (part.empty() || part == ".") return false;
    i = j;
  }
  return true;
}

std::string normalized(std::string path) { return is_normal(path) ? std::move(path) : normalize_tree_path(path); }

// "/a/b/c" -> ("/a/b", "c"); "/a" -> ("", "a"); the root "" -> ("", "").
std::pair<std::string_view, std::string_view> dir_and_name(std::string_view path) {
  const void* found = path.empty() ? nullptr : memrchr(path.data(), '/', path.size());
  if (!found) return {std::string_view(), path};
  size_t slash = static_cast<size_t>(static_cast<const char*>(found) - path.data());
  return {path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

std::string normalize_tree_path(std::string_view path) {
  if (is_normal(path)) return std::string(path);
  std::string out;
  out.reserve(path.size());
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    if (!part.empty() && part != ".") {
      out += '/';
      out += part;
    }
    i = j + 1;
  }
  return out;
}

MemoryTree::MemoryTree() { nodes_.emplace("", Entry{}); }

void MemoryTree::add(std::string name, Node node) {
  // Parents exist implicitly even when nobody added them (tar members often come without them).
  // The root always exists, so the walk up ends there at the latest. Only `name` may change kind
  // below, and it is never last_dir_ (its parent is), so last_dir_ stays a directory.
  auto [dir, base] = dir_and_name(name);
  if (!last_dir_.entry || dir != last_dir_.path) {
    std::vector<std::string_view> missing;  // nearest first
    for (std::string_view up = dir;; up = dir_and_name(up).first) {
      auto it = nodes_.find(std::string(up));
      if (it != nodes_.end()) {
        if (it->second.node.kind != EntryKind::kDir) it->second.node = Node{};  // a file replaced by a directory
        break;
      }
      missing.push_back(up);
    }
    // Top down, so each one's parent exists to be told its name.
    for (auto up = missing.rbegin(); up != missing.rend(); ++up) {
      auto [parent, parent_base] = dir_and_name(*up);
      nodes_.find(std::string(parent))->second.names.emplace_back(parent_base);
      nodes_.emplace(std::string(*up), Entry{});
    }
    last_dir_.path = dir;
    last_dir_.entry = &nodes_.find(last_dir_.path)->second;
  }
  std::string base_name(base);  // `name` moves into the map below, and `base` views it
  auto [it, inserted] = nodes_.try_emplace(std::move(name));
  if (inserted) {
    it->second.node = std::move(node);
    last_dir_.entry->names.push_back(std::move(base_name));
  } else if (!(it->second.node.kind == EntryKind::kDir && node.kind == EntryKind::kDir)) {
    it->second.node = std::move(node);
  }
}

void MemoryTree::add_file(std::string path, std::string bytes) {
  path = normalized(std::move(path));
  if (!path.empty()) add(std::move(path), Node{EntryKind::kFile, std::move(bytes)});
}
void MemoryTree::add_dir(std::string path) {
  path = normalized(std::move(path));
  if (!path.empty()) add(std::move(path), Node{});
}
void MemoryTree::add_link(std::string path, std::string target) {
  path = normalized(std::move(path));
  if (!path.empty()) add(std::move(path), Node{EntryKind::kLink, std::move(target)});
}

void MemoryTree::add_failure(std::string path, FileRead failure) {
  std::string name = normalized(std::move(path));
  if (!find(name)) add_file(name, "");
  failures_[name.empty() ? "/" : std::move(name)] = std::move(failure);
}

const MemoryTree::Node* MemoryTree::find(std::string_view path) const {
  if (path == "/") path = "";
  // Only absolute paths are names here ("x" is no key, but say so without a search).
  if (!path.empty() && path.front() != '/') return nullptr;
  auto it = nodes_.find(std::string(path));
  return it == nodes_.end() ? nullptr : &it->second.node;
}

std::vector<std::string> MemoryTree::children(std::string_view path) const {
  if (path == "/") path = "";
  if (!path.empty() && path.front() != '/') return {};
  auto it = nodes_.find(std::string(path));
  if (it == nodes_.end()) return {};
  std::vector<std::string> out = it->second.names;
  std::sort(out.begin(), out.end());
  return out;
}

MemoryTree MemoryTree::subtree(std::string_view prefix) const& { return MemoryTree(*this).subtree(prefix); }

MemoryTree MemoryTree::subtree(std::string_view raw_prefix) && {
  std::string prefix = normalize_tree_path(raw_prefix);
  if (prefix.empty()) return std::move(*this);
  MemoryTree out;
  auto top = nodes_.find(prefix);
  if (top != nodes_.end()) out.nodes_.find("")->second.names = std::move(top->second.names);
  // Each node below `prefix` moves over with its allocation; only its key loses the prefix.
  const std::string below = prefix + "/";
  out.nodes_.reserve(nodes_.size());
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (!it->first.starts_with(below)) {
      ++it;
      continue;
    }
    auto node = nodes_.extract(it++);
    node.key().erase(0, prefix.size());
    // A directory that a later member replaced by a file still has its entries; in the subtree it
    // is a directory again, as rebuilding the tree entry by entry made it.
    if (!node.mapped().names.empty() && node.mapped().node.kind != EntryKind::kDir) node.mapped().node = Node{};
    out.nodes_.insert(std::move(node));
  }
  for (auto& [path, failure] : failures_)
    if (path.rfind(below, 0) == 0) out.failures_[path.substr(prefix.size())] = std::move(failure);
  out.not_carried_ = std::move(not_carried_);
  *this = MemoryTree();
  return out;
}

namespace {

class MemorySource : public Source {
 public:
  MemorySource(std::shared_ptr<const MemoryTree> tree, std::string description)
      : tree_(std::move(tree)), description_(printable(description)) {  // names a file from input
    if (!tree_->failures().empty()) set_recorded_failures(tree_->failures());
    if (!tree_->not_carried().empty()) set_not_carried(tree_->not_carried());
  }

  std::string describe() const override { return description_; }

 protected:
  NodeType node_type(const std::string& path) override {
    const MemoryTree::Node* node = find(path);
    if (!node) return NodeType::kMissing;
    switch (node->kind) {
      case EntryKind::kFile: return NodeType::kFile;
      case EntryKind::kDir: return NodeType::kDir;
      case EntryKind::kLink: return NodeType::kLink;
      case EntryKind::kOther: return NodeType::kOther;
    }
    return NodeType::kOther;
  }
  std::string node_link(const std::string& path) override { return find(path)->data; }
  FileRead node_read(const std::string& path) override { return {ReadStatus::kOk, find(path)->data, ""}; }
  std::vector<std::string> node_list(const std::string& path) override { return tree_->children(path); }

 private:
  // The Source reads or follows a path right after asking its type: the node found then is kept,
  // as a second search of the whole-path map (a cache miss or two each) was a tenth of a replay.
  // The tree never changes under this Source.
  const MemoryTree::Node* find(const std::string& path) {
    if (path != last_path_) {
      last_node_ = tree_->find(path);
      last_path_ = path;
    }
    return last_node_;
  }

  std::shared_ptr<const MemoryTree> tree_;
  std::string description_;
  std::string last_path_;  // "" is never asked: the Source asks canonical, absolute paths
  const MemoryTree::Node* last_node_ = nullptr;
};

}  // namespace

std::unique_ptr<Source> open_memory_source(std::shared_ptr<const MemoryTree> tree, std::string description) {
  return std::make_unique<MemorySource>(std::move(tree), std::move(description));
}

std::unique_ptr<Source> open_memory_source(MemoryTree tree, std::string description) {
  // The Source keeps its own map of failures: moved there, the tree's would only be a second copy.
  FailureMap failures = std::move(tree.failures_);
  tree.failures_.clear();
  auto source = open_memory_source(std::make_shared<const MemoryTree>(std::move(tree)), std::move(description));
  if (!failures.empty()) source->set_recorded_failures(std::move(failures));
  return source;
}

}  // namespace p2pcheck
