// The in-memory tree backend shared by archives and imports.
#include "p2pcheck/source/memory_source.h"

#include <string.h>

#include <utility>

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

// The first key after every key that starts with `dir` + "/": '0' is the byte after '/'.
std::string past_subtree(std::string_view dir) { return std::string(dir) + '0'; }

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

MemoryTree::MemoryTree() { nodes_.emplace("", Node{}); }

void MemoryTree::add(std::string name, Node node) {
  // Parents exist implicitly even when nobody added them (tar members often come without them).
  // The root always exists, so the walk up ends there at the latest. Only `name` may change kind
  // below, and it is never last_dir_ (its parent is), so last_dir_ stays a directory.
  std::string_view dir = dir_and_name(name).first;
  if (dir != last_dir_) {
    std::string_view parent = name;
    for (;;) {
      parent = parent.substr(0, parent.rfind('/'));
      auto it = nodes_.lower_bound(parent);
      if (it != nodes_.end() && it->first == parent) {
        if (it->second.kind != EntryKind::kDir) it->second = Node{};  // a file replaced by a directory
        break;
      }
      nodes_.emplace_hint(it, std::string(parent), Node{});
    }
    last_dir_ = dir;
  }
  auto it = nodes_.lower_bound(name);
  if (it == nodes_.end() || it->first != name) {
    nodes_.emplace_hint(it, std::move(name), std::move(node));
  } else if (!(it->second.kind == EntryKind::kDir && node.kind == EntryKind::kDir)) {
    it->second = std::move(node);
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
  auto it = nodes_.find(path);
  return it == nodes_.end() ? nullptr : &it->second;
}

std::vector<std::string> MemoryTree::children(std::string_view path) const {
  if (path == "/") path = "";
  if (!path.empty() && path.front() != '/') return {};
  std::vector<std::string> out;
  // The keys below `path` in byte order: its entries, each followed (not always at once: "x-1"
  // sorts between "x" and "x/y") by the range of its own subtree, which one lookup skips.
  const std::string below = std::string(path) + "/";
  auto it = nodes_.lower_bound(below);
  while (it != nodes_.end() && it->first.starts_with(below)) {
    std::string_view name = std::string_view(it->first).substr(below.size());
    size_t slash = name.find('/');
    if (slash == std::string_view::npos) {
      out.emplace_back(name);
      ++it;
    } else {
      it = nodes_.lower_bound(past_subtree(std::string_view(it->first).substr(0, below.size() + slash)));
    }
  }
  return out;
}

MemoryTree MemoryTree::subtree(std::string_view prefix) const& { return MemoryTree(*this).subtree(prefix); }

MemoryTree MemoryTree::subtree(std::string_view raw_prefix) && {
  std::string prefix = normalize_tree_path(raw_prefix);
  if (prefix.empty()) return std::move(*this);
  MemoryTree out;
  // Everything below `prefix` is one range of the map, and cutting the same prefix off every key
  // keeps it in order, so each node moves over at the end of the new map without a search.
  const std::string below = prefix + "/";
  for (auto it = nodes_.lower_bound(below), end = nodes_.lower_bound(past_subtree(prefix)); it != end;) {
    auto node = nodes_.extract(it++);
    node.key().erase(0, prefix.size());
    out.nodes_.insert(out.nodes_.end(), std::move(node));
  }
  // A directory that a later member replaced by a file still has its entries; in the subtree it
  // is a directory again, as rebuilding the tree entry by entry made it.
  std::string_view last;
  for (const auto& [path, node] : out.nodes_) {
    std::string_view dir = dir_and_name(path).first;
    if (path.empty() || dir == last) continue;
    last = dir;
    auto parent = out.nodes_.find(dir);
    if (parent != out.nodes_.end() && parent->second.kind != EntryKind::kDir) parent->second = Node{};
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
      : tree_(std::move(tree)), description_(std::move(description)) {
    if (!tree_->failures().empty()) set_recorded_failures(tree_->failures());
    if (!tree_->not_carried().empty()) set_not_carried(tree_->not_carried());
  }

  std::string describe() const override { return description_; }

 protected:
  NodeType node_type(const std::string& path) override {
    const MemoryTree::Node* node = tree_->find(path);
    if (!node) return NodeType::kMissing;
    switch (node->kind) {
      case EntryKind::kFile: return NodeType::kFile;
      case EntryKind::kDir: return NodeType::kDir;
      case EntryKind::kLink: return NodeType::kLink;
      case EntryKind::kOther: return NodeType::kOther;
    }
    return NodeType::kOther;
  }
  std::string node_link(const std::string& path) override { return tree_->find(path)->data; }
  FileRead node_read(const std::string& path) override { return {ReadStatus::kOk, tree_->find(path)->data, ""}; }
  std::vector<std::string> node_list(const std::string& path) override { return tree_->children(path); }

 private:
  std::shared_ptr<const MemoryTree> tree_;
  std::string description_;
};

}  // namespace

std::unique_ptr<Source> open_memory_source(std::shared_ptr<const MemoryTree> tree, std::string description) {
  return std::make_unique<MemorySource>(std::move(tree), std::move(description));
}

std::unique_ptr<Source> open_memory_source(MemoryTree tree, std::string description) {
  // The Source keeps its own map of failures: moved there, the tree's would only be a second copy.
  std::map<std::string, FileRead> failures = std::move(tree.failures_);
  tree.failures_.clear();
  auto source = open_memory_source(std::make_shared<const MemoryTree>(std::move(tree)), std::move(description));
  if (!failures.empty()) source->set_recorded_failures(std::move(failures));
  return source;
}

}  // namespace p2pcheck
