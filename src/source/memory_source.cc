// The in-memory tree backend shared by archives and imports.
#include "p2pcheck/source/memory_source.h"

namespace p2pcheck {

std::string normalize_tree_path(const std::string& path) {
  std::string out;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string part = path.substr(i, j - i);
    if (!part.empty() && part != ".") out += "/" + part;
    i = j + 1;
  }
  return out;
}

MemoryTree::MemoryTree() { nodes_[""] = Node{}; }

void MemoryTree::add(const std::string& raw, Node node) {
  std::string name = normalize_tree_path(raw);
  if (name.empty()) return;  // the root itself always exists
  // Parents exist implicitly even when nobody added them (tar members often come without them).
  std::string path = name;
  while (!path.empty()) {
    size_t slash = path.rfind('/');
    std::string parent = path.substr(0, slash);
    children_[parent].insert(path.substr(slash + 1));
    auto it = nodes_.find(parent);
    if (it != nodes_.end()) {
      if (it->second.kind != EntryKind::kDir) it->second = Node{};  // a file replaced by a directory
      break;
    }
    nodes_[parent] = Node{};
    path = parent;
  }
  auto existing = nodes_.find(name);
  if (existing == nodes_.end()) {
    nodes_.emplace(name, std::move(node));
  } else if (!(existing->second.kind == EntryKind::kDir && node.kind == EntryKind::kDir)) {
    existing->second = std::move(node);
  }
}

void MemoryTree::add_file(const std::string& path, std::string bytes) {
  add(path, Node{EntryKind::kFile, std::move(bytes)});
}
void MemoryTree::add_dir(const std::string& path) { add(path, Node{}); }
void MemoryTree::add_link(const std::string& path, std::string target) {
  add(path, Node{EntryKind::kLink, std::move(target)});
}

void MemoryTree::add_failure(const std::string& path, FileRead failure) {
  std::string name = normalize_tree_path(path);
  if (!find(name)) add_file(name, "");
  failures_[name.empty() ? "/" : name] = std::move(failure);
}

const MemoryTree::Node* MemoryTree::find(const std::string& path) const {
  auto it = nodes_.find(path == "/" ? "" : path);
  return it == nodes_.end() ? nullptr : &it->second;
}

std::vector<std::string> MemoryTree::children(const std::string& path) const {
  auto it = children_.find(path == "/" ? "" : path);
  if (it == children_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

MemoryTree MemoryTree::subtree(const std::string& prefix) const& { return MemoryTree(*this).subtree(prefix); }

MemoryTree MemoryTree::subtree(const std::string& raw_prefix) && {
  std::string prefix = normalize_tree_path(raw_prefix);
  if (prefix.empty()) return std::move(*this);
  MemoryTree out;
  for (auto it = nodes_.lower_bound(prefix + "/"); it != nodes_.end() && it->first.rfind(prefix + "/", 0) == 0; ++it)
    out.add(it->first.substr(prefix.size()), std::move(it->second));
  for (auto& [path, failure] : failures_)
    if (path.rfind(prefix + "/", 0) == 0) out.failures_[path.substr(prefix.size())] = std::move(failure);
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

}  // namespace p2pcheck
