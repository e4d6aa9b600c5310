// Path resolution shared by every backend, so a captured tree and the live `/` follow links alike.
#include "p2pcheck/source/source.h"

#include <algorithm>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

constexpr int kMaxLinkHops = 40;  // as the kernel's MAXSYMLINKS

std::vector<std::string> split_path(std::string_view path) { return split(path, '/'); }

}  // namespace

namespace {

// Takes the first component off `rest` ("a/b" -> "a", rest "/b"); "" when only slashes are left.
std::string_view next_component(std::string_view& rest) {
  size_t begin = rest.find_first_not_of('/');
  if (begin == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(begin);
  size_t end = std::min(rest.find('/'), rest.size());
  std::string_view part = rest.substr(0, end);
  rest.remove_prefix(end);
  return part;
}

bool only_slashes(std::string_view rest) { return rest.find_first_not_of('/') == std::string_view::npos; }

}  // namespace

// Long: one walk (the kernel's path lookup in miniature) whose state, the canonical path so far, its
// node and the stack of remainders, every step changes; it is the hottest function of a replay.
std::optional<std::string> Source::canonicalize(std::string_view path, bool follow_last, NodeType& type,
                                                PathNode** node_out, NodeType last_expected) {
  if (path.empty() || path.front() != '/') throw Error(std::string(path), "internal: source paths must be absolute");
  // No Linux file has a path this long (archives refuse such names), and paths built from a dump's
  // text (a kernel release) may be megabytes: walking one would cost as much.
  if (path.size() >= kMaxPathBytes) return std::nullopt;
  // The components walked so far, as the path `here` ("/a/b"): canonical, so each '/' in it starts
  // one component and ".." is cutting the last one off. `node` is what `here` is.
  std::string here;
  PathNode* node = nullptr;
  // What is still to walk, as a stack of path remainders, the next component at the front of the
  // top one: the path asked, then the target of each link met, spliced in front. Views of `path`
  // and of link targets (kept in their nodes, which never move), so nothing is split into copies.
  std::vector<std::string_view> todo;
  // A function's dozen attributes share their directory: it is resolved once (the parent's
  // parent likewise), and the walk starts from it with just the last component left.
  if (const FoundDir* dir = nullptr; canonical_parent(path, dir)) {
    if (!dir) return std::nullopt;
    std::string_view last = path.substr(path.rfind('/') + 1);
    here.reserve(dir->path.size() + 1 + last.size());
    if (dir->path != "/") here = dir->path;
    here += '/';
    here += last;
    node = child_of(*dir->node, last, here, last_expected);
    if (!node) return std::nullopt;
    if (node->type != NodeType::kLink || !follow_last) {
      type = node->type;
      if (node_out) *node_out = node;
      return here;
    }
    // A link as the last component: the walk below follows it, from `here`.
  } else {
    node = &root_node();
    todo.push_back(path);
  }
  int hops = 0;
  for (;;) {
    if (node->type != NodeType::kLink || here.empty()) {
      // Next component, dropping exhausted remainders.
      while (!todo.empty() && only_slashes(todo.back())) todo.pop_back();
      if (todo.empty()) break;
      std::string_view part = next_component(todo.back());
      if (part == ".") continue;
      if (part == "..") {
        if (here.empty()) throw Error(std::string(path), "path climbs above the root of " + describe());
        here.resize(here.rfind('/'));
        node = node->parent;
        continue;
      }
      here += '/';
      here += part;
      const bool last = std::all_of(todo.begin(), todo.end(), only_slashes);
      PathNode* found = child_of(*node, part, here, last ? last_expected : NodeType::kDir);
      if (!found) return std::nullopt;
      node = found;
      if (found->type != NodeType::kLink) continue;
      while (!todo.empty() && only_slashes(todo.back())) todo.pop_back();
      if (todo.empty() && !follow_last) break;
    }
    // `here` is a link to follow.
    if (++hops > kMaxLinkHops) throw Error(here, "too many levels of symbolic links");
    const std::string& target = link_of(*node, here);
    node->followed = true;
    // An absolute target means the root's own `/`, as inside a chroot; a relative one must not
    // climb above the root: that is a hostile or broken capture, never silently the host's files.
    bool absolute = !target.empty() && target.front() == '/';
    size_t depth = absolute ? 0 : static_cast<size_t>(std::count(here.begin(), here.end(), '/')) - 1;
    for (std::string_view rest = target; !only_slashes(rest);) {
      std::string_view p = next_component(rest);
      if (p == "..") {
        if (depth == 0) throw Error(here, "symlink to '" + target + "' leaves the root of " + describe());
        --depth;
      } else if (p != ".") {
        ++depth;
      }
    }
    here.resize(absolute ? 0 : here.rfind('/'));
    node = absolute ? &root_node() : node->parent;
    todo.push_back(target);
  }
  type = node->type;
  if (node_out) *node_out = node;
  if (here.empty()) return std::string("/");
  return here;
}

bool Source::canonical_parent(std::string_view path, const FoundDir*& dir_found) {
  size_t slash = path.rfind('/');
  std::string_view last = path.substr(slash + 1);
  if (slash == 0 || last.empty() || last == "." || last == "..") return false;
  std::string_view dir = path.substr(0, slash);
  // A device's attributes are asked one after another: the last directory found is compared
  // before the path is hashed. Only plain directories are ever kept, so one found needs no checking.
  if (last_dir_ && last_dir_->first == dir) {
    dir_found = &last_dir_->second;
    return true;
  }
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) {
    last_dir_ = &*it;
    dir_found = &it->second;
    return true;
  }
  // Only plain paths, as the analysis asks them: "..", "." or "//" take the plain walk, so that its
  // errors name the path as asked; deep ones (only a hostile dump has them) too, to keep the recursion shallow.
  long depth = 0;
  for (std::string_view rest = dir.substr(1);; ++depth) {
    size_t end = std::min(rest.find('/'), rest.size());
    std::string_view part = rest.substr(0, end);
    if (part.empty() || part == "." || part == ".." || depth >= kMaxCachedDepth) return false;
    if (end == rest.size()) break;
    rest.remove_prefix(end + 1);
  }
  // The whole walk would meet the same components first. Only found directories are kept, as in
  // child_of: a missing one may appear later.
  NodeType type;
  PathNode* node = nullptr;
  std::optional<std::string> where = canonicalize(dir, true, type, &node, NodeType::kDir);
  if (!where) {
    dir_found = nullptr;
    return true;
  }
  last_dir_ = &*dirs_.emplace(std::string(dir), FoundDir{std::move(*where), node}).first;
  dir_found = &last_dir_->second;
  return true;
}

Source::PathNode* Source::child_of(PathNode& dir, std::string_view name, const std::string& path, NodeType expected) {
  auto it = dir.children.find(name);
  if (it != dir.children.end()) return it->second.get();
  // What the directory's listing said the entry is, the backend need not be asked again: as an
  // lstat then would have said (the tree keeps it as long). Never kMissing: the listing saw it.
  auto listed = std::lower_bound(dir.listed.begin(), dir.listed.end(), name,
                                 [](const auto& entry, std::string_view n) { return entry.first < n; });
  bool known = listed != dir.listed.end() && listed->first == name;
  NodeType type = known ? listed->second : node_type_expecting(path, expected);
  // A capture's placeholder need not be stored: the manifest naming it says the file was there.
  if (type == NodeType::kMissing && !failures_.empty() && failures_.count(path)) type = NodeType::kFile;
  if (type == NodeType::kMissing) return nullptr;
  auto child = std::make_unique<PathNode>();
  child->parent = &dir;
  child->type = type;
  return dir.children.emplace(std::string(name), std::move(child)).first->second.get();
}

Source::PathNode& Source::root_node() {
  if (root_.type == NodeType::kMissing) root_.type = node_type("/");
  return root_;
}

const std::string& Source::link_of(PathNode& node, const std::string& path) {
  if (!node.link_known) {
    node.link = node_link(path);
    node.link_known = true;
  }
  return node.link;
}

EntryKind Source::entry_kind(NodeType type) {
  switch (type) {
    case NodeType::kFile: return EntryKind::kFile;
    case NodeType::kDir: return EntryKind::kDir;
    case NodeType::kLink: return EntryKind::kLink;
    default: return EntryKind::kOther;
  }
}

std::optional<std::string> Source::resolve_typed(std::string_view path, NodeType& type, PathNode** node,
                                                 NodeType expected) {
  auto where = canonicalize(path, true, type, node, expected);
  if (where && recording_) log_.found[*where] = entry_kind(type);
  return where;
}

std::optional<std::string> Source::resolve(std::string_view path) {
  NodeType type;
  return resolve_typed(path, type);
}

std::optional<std::string> Source::resolve_directory(std::string_view path) {
  NodeType type;
  return resolve_typed(path, type, nullptr, NodeType::kDir);
}

std::optional<std::string> Source::link_target(std::string_view path) {
  NodeType type;
  PathNode* node = nullptr;
  auto where = canonicalize(path, false, type, &node, NodeType::kLink);
  if (!where || type != NodeType::kLink) return std::nullopt;
  const std::string& target = link_of(*node, *where);
  node->followed = true;
  return target;
}

const AccessLog& Source::access_log() {
  log_.file_reads.clear();
  log_.dir_lists.clear();
  log_.links_followed.clear();
  // Every node with its canonical path, depth first from the root.
  std::vector<std::pair<const PathNode*, std::string>> todo{{&root_, ""}};
  while (!todo.empty()) {
    auto [node, path] = std::move(todo.back());
    todo.pop_back();
    const std::string key = path.empty() ? "/" : path;
    if (node->reads) log_.file_reads.emplace(key, node->reads);
    if (node->lists) log_.dir_lists.emplace(key, node->lists);
    if (node->followed) log_.links_followed.emplace(key, node->link);
    for (const auto& [name, child] : node->children) todo.emplace_back(child.get(), path + "/" + name);
  }
  return log_;
}

Source::NodeType Source::node_type_expecting(const std::string& path, NodeType) { return node_type(path); }

std::vector<Source::ListedEntry> Source::node_list_typed(const std::string& path) {
  std::vector<ListedEntry> entries;
  for (std::string& name : node_list(path)) entries.push_back({std::move(name), std::nullopt});
  return entries;
}

namespace {

// "/sys/devices/**/driver" against "/sys/devices/pci0000:00/0000:00:01.0/driver/module": the
// components before "**" match the path's first ones, those after it the ones that follow at any
// depth; a pattern matches its path and everything below it.
bool pattern_covers(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  auto same = [](const std::string& want, const std::string& got) { return want == "*" || want == got; };
  auto star = std::find(pattern.begin(), pattern.end(), "**");
  size_t head = static_cast<size_t>(star - pattern.begin());
  if (path.size() < head) return false;
  for (size_t i = 0; i < head; ++i)
    if (!same(pattern[i], path[i])) return false;
  if (star == pattern.end()) return true;
  std::vector<std::string> tail(star + 1, pattern.end());
  // The tail may match at any depth below the head: the first place it matches is enough.
  for (size_t at = head; at + tail.size() <= path.size(); ++at) {
    size_t k = 0;
    while (k < tail.size() && same(tail[k], path[at + k])) ++k;
    if (k == tail.size()) return true;
  }
  return false;
}

}  // namespace

bool valid_not_carried_pattern(std::string_view pattern) {
  if (pattern.empty() || pattern.front() != '/' || pattern.size() > kMaxPathBytes) return false;
  auto parts = split_path(pattern);
  return std::count(parts.begin(), parts.end(), "**") <= 1 &&
         std::none_of(parts.begin(), parts.end(), [](const std::string& p) { return p == ".." || p == "."; });
}

bool NotCarried::covers(std::string_view path) const {
  if (paths.empty()) return false;
  std::vector<std::string> parts = split_path(path);
  return std::any_of(paths.begin(), paths.end(),
                     [&](const std::string& pattern) { return pattern_covers(split_path(pattern), parts); });
}

std::optional<std::string> Source::not_carried(std::string_view path) {
  if (not_carried_.empty() || exists(path) || !not_carried_.covers(path)) return std::nullopt;
  return not_carried_.phrase;
}

FileRead Source::read(std::string_view path) {
  NodeType type;
  PathNode* node = nullptr;
  auto where = resolve_typed(path, type, &node);
  if (!where) {
    if (!not_carried_.empty() && not_carried_.covers(path)) return {ReadStatus::kNotCarried, "", not_carried_.phrase};
    return {};
  }
  if (type == NodeType::kDir) return {ReadStatus::kFailed, "", "is a directory"};
  if (type != NodeType::kFile) {
    FileRead other{ReadStatus::kFailed, "", "not a regular file"};
    if (recording_) log_.contents.emplace(*where, other);
    return other;
  }
  ++node->reads;
  auto failed = failures_.empty() ? failures_.end() : failures_.find(*where);
  FileRead result = failed != failures_.end() ? failed->second : node_read(*where);
  // The first answer is the one the analysis acted on; a later read of a changing file
  // (an AER counter) must not replace it.
  if (recording_) log_.contents.emplace(*where, result);
  return result;
}

FileRead Source::read_part(std::string_view path, std::uint64_t offset, std::size_t length) {
  NodeType type;
  PathNode* node = nullptr;
  auto where = resolve_typed(path, type, &node);
  if (!where) {
    if (!not_carried_.empty() && not_carried_.covers(path)) return {ReadStatus::kNotCarried, "", not_carried_.phrase};
    return {};
  }
  if (type != NodeType::kFile)
    return {ReadStatus::kFailed, "", type == NodeType::kDir ? "is a directory" : "not a regular file"};
  if (auto failed = failures_.find(*where); failed != failures_.end()) return failed->second;
  return node_read_part(*where, offset, std::min(length, kMaxPartBytes));
}

FileRead Source::node_read_part(const std::string& path, std::uint64_t offset, std::size_t length) {
  FileRead whole = node_read(path);
  if (!whole.ok()) return whole;
  if (offset >= whole.bytes.size()) return {ReadStatus::kOk, "", ""};
  return {ReadStatus::kOk, whole.bytes.substr(static_cast<std::size_t>(offset), length), ""};
}

std::vector<std::string> Source::list(std::string_view path) {
  NodeType type;
  PathNode* dir = nullptr;
  auto where = resolve_typed(path, type, &dir, NodeType::kDir);
  if (!where || type != NodeType::kDir) return {};
  ++dir->lists;
  const std::string base = *where == "/" ? "" : *where;
  std::vector<ListedEntry> entries = node_list_typed(*where);
  auto by_name = [](const ListedEntry& a, const ListedEntry& b) { return a.name < b.name; };
  if (auto failed = failed_names_.find(*where); failed != failed_names_.end()) {
    for (const std::string& name : failed->second) entries.push_back({name, std::nullopt});
    // A placeholder the backend holds too is one entry: the backend's, which comes first and may
    // know its type.
    std::stable_sort(entries.begin(), entries.end(), by_name);
    entries.erase(std::unique(entries.begin(), entries.end(),
                              [](const ListedEntry& a, const ListedEntry& b) { return a.name == b.name; }),
                  entries.end());
  } else {
    std::sort(entries.begin(), entries.end(), by_name);
  }
  std::vector<std::string> names;
  names.reserve(entries.size());
  dir->listed.clear();
  for (ListedEntry& entry : entries) {
    if (entry.type && *entry.type != NodeType::kMissing) dir->listed.emplace_back(entry.name, *entry.type);
    names.push_back(std::move(entry.name));
  }
  if (recording_) {
    auto& recorded = log_.listings[*where];
    for (const std::string& name : names) {
      std::string child_path = base + "/" + name;
      PathNode* child = child_of(*dir, name, child_path);
      if (!child) continue;  // vanished between listing and looking
      RecordedEntry entry{entry_kind(child->type), ""};
      if (child->type == NodeType::kLink) entry.link_target = link_of(*child, child_path);
      recorded[name] = std::move(entry);
    }
  }
  return names;
}

void Source::set_recorded_failures(FailureMap failures) {
  failures_ = std::move(failures);
  failed_names_.clear();
  for (const auto& [path, failure] : failures_) {
    std::size_t slash = path.rfind('/');
    std::string_view name = std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
    if (slash == std::string::npos || name.empty() || name == "." || name == "..") continue;  // no entry name
    failed_names_[slash == 0 ? "/" : path.substr(0, slash)].emplace_back(name);
  }
}

std::string read_text(Source& source, const std::string& path, FileRead* raw) {
  FileRead r = source.read(path);
  if (raw) *raw = r;
  return r.ok() ? std::string(trim(r.bytes)) : std::string();
}

}  // namespace p2pcheck
