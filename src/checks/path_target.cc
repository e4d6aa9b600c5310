// A path as the NVMe side: the mount that holds it, then the storage stacks read_storage found
// below that file system. The path is resolved in the source (its links, never the host's).
#include "p2pcheck/checks/path_target.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <iterator>
#include <map>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// The kernel gives up after 40 links in one lookup (ELOOP); so do we.
constexpr int kMaxLinks = 40;

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) out.emplace_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Each mount's stacks: those whose top carries it, made in one pass over the stacks (a mount
// table of thousands of lines is a few thousand lookups, not lines times stacks).
std::map<Mount, std::vector<const StorageStack*>> stacks_by_mount(const StorageLayout& layout) {
  std::map<Mount, std::vector<const StorageStack*>> out;
  for (const StorageStack& s : layout.stacks)
    if (!s.unused)
      for (const Mount& m : s.mounts) {
        std::vector<const StorageStack*>& list = out[m];
        if (list.empty() || list.back() != &s) list.push_back(&s);
      }
  return out;
}

// `s` with `mounts` in place of its own: a stack lists every mount of its file system, and each of
// a container host's 100,000 bind mounts is a target of its own (copying the list to each: quadratic).
StorageStack stack_without_mounts(const StorageStack& s, std::vector<Mount> mounts) {
  StorageStack out;
  out.nvme = s.nvme;
  out.nvme_namespace = s.nvme_namespace;
  out.controller = s.controller;
  out.controller_bdf = s.controller_bdf;
  out.layers = s.layers;
  out.mounts = std::move(mounts);
  out.other_members = s.other_members;
  out.non_nvme_members = s.non_nvme_members;
  out.swap = s.swap;
  out.unused = s.unused;
  out.ext4_data_mode = s.ext4_data_mode;
  out.ext4_data_mode_evidence = s.ext4_data_mode_evidence;
  return out;
}

// `below` (the stacks under `m`'s file system), each with `m` as its only mount.
std::vector<StorageStack> stacks_of(const Mount& m, const std::vector<const StorageStack*>& below) {
  std::vector<StorageStack> out;
  for (const StorageStack* s : below) out.push_back(stack_without_mounts(*s, {m}));
  return out;
}

// The target of a mount with stacks below it (`stacks` not empty); `findings`: storage_stack_findings().
PathTarget target_of(const Mount& m, std::vector<StorageStack> stacks, const std::map<std::string, Finding>& findings) {
  PathTarget t;
  t.mount = m;
  t.mountpoint = unescape_mount_path(m.mountpoint);
  t.stacks = std::move(stacks);
  for (const StorageStack& s : t.stacks) {
    if (s.controller_bdf && std::none_of(t.controllers.begin(), t.controllers.end(),
                                         [&](const TargetController& c) { return c.bdf == *s.controller_bdf; }))
      t.controllers.push_back({s.controller, *s.controller_bdf});
    for (const StorageLayer& l : s.layers)
      if (blocks_fastpath(l.kind) &&
          std::none_of(t.stacked.begin(), t.stacked.end(), [&](const StorageLayer& o) { return o.device == l.device; }))
        t.stacked.push_back(l);
  }
  if (auto f = findings.find(t.stacks.front().layers.front().device); f != findings.end()) t.stack_finding = f->second;
  return t;
}

std::string mount_words(const Mount& m) {
  return m.fstype + " mounted on " + unescape_mount_path(m.mountpoint) + " (device " + unescape_mount_path(m.device) +
         ")";
}

}  // namespace

std::string unescape_mount_path(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && octal(text[i + 1]) && octal(text[i + 2]) && octal(text[i + 3])) {
      out += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0'));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool path_under(std::string_view path, std::string_view dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path == dir || (path.size() > dir.size() && path.substr(0, dir.size()) == dir && path[dir.size()] == '/');
}

const Mount* mount_holding(const std::vector<Mount>& mounts, std::string_view path) {
  const Mount* best = nullptr;
  size_t best_len = 0;
  for (const Mount& m : mounts) {
    std::string mp = unescape_mount_path(m.mountpoint);
    if (path_under(path, mp) && (!best || mp.size() >= best_len)) {
      best = &m;
      best_len = mp.size();
    }
  }
  return best;
}

bool is_path_selector(std::string_view text) {
  if (text == "." || text == "..") return true;
  if (text.find('/') == std::string_view::npos) return false;
  if (text.substr(0, 5) == "/dev/" && parse_nvme_name(text.substr(5))) return false;
  return true;
}

// Linear in the components walked: the path so far is kept as one string (a component added is
// appended, a ".." or a link cuts it back), and every path and link target is bounded by PATH_MAX,
// as in the kernel, so 40 links cannot expand into 80,000 components each rebuilt whole.
std::string resolve_in_source(Source& source, std::string_view path, const std::string& named_by) {
  auto too_long = [&](const std::string& what) {
    return UsageError(named_by + ": " + what + " longer than PATH_MAX (" + std::to_string(kMaxPathBytes) +
                      " bytes), which no Linux path is");
  };
  if (path.size() > kMaxPathBytes) throw too_long("a path");
  std::string done;               // "/a/b"; "" is "/"
  std::vector<std::size_t> ends;  // done's length before each of its components
  std::deque<std::string> todo;
  for (auto& c : components(path)) todo.push_back(std::move(c));
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      if (!ends.empty()) done.resize(ends.back()), ends.pop_back();  // "/.." is "/", as in the kernel
      continue;
    }
    ends.push_back(done.size());
    done += '/' + c;
    if (done.size() > kMaxPathBytes) throw too_long("the path with its links followed is");
    std::optional<std::string> target = source.link_target(done);
    if (!target) continue;
    if (++links > kMaxLinks) throw UsageError(named_by + ": too many levels of symbolic links (a loop?)");
    if (target->size() > kMaxPathBytes) throw too_long("a link's target is");
    done.resize(ends.back()), ends.pop_back();
    if (!target->empty() && (*target)[0] == '/') done.clear(), ends.clear();
    std::vector<std::string> more = components(*target);
    todo.insert(todo.begin(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return done.empty() ? "/" : done;
}

std::string mounts_unknown_why(const Machine& machine, const StorageLayout& layout) {
  // What the input says it cannot carry (a plan) wins over a mount table read beside it.
  if (!layout.mounts_not_carried.empty()) return layout.mounts_not_carried;
  if (machine.mounts_known && !machine.mounts.empty()) return "";
  for (const char* file : {"/proc/mounts", "/proc/self/mounts"})
    if (auto it = machine.unread.find(file); it != machine.unread.end()) return it->second;
  return "empty";
}

PathTarget resolve_path_target(Source& source, const std::string& typed, const Machine& machine,
                               const StorageLayout& layout, const std::string& named_by) {
  // A path no kernel would take (130 KB of components) is named by its start.
  const std::string label =
      named_by + " " + (typed.size() > 200 ? std::string(utf8_prefix(typed, 200)) + "..." : typed);
  if (std::string why = mounts_unknown_why(machine, layout); !why.empty())
    throw UsageError(label + ": which NVMe holds it is unknown: the mount table is " + why +
                     "; name the NVMe by PCI address or nvme name instead");
  const std::string path = resolve_in_source(source, typed, label);
  if (source.is_live() && !source.exists(path))
    throw UsageError(label + ": no such file or directory (" + path +
                     "); name an existing file or directory, or its mount point");
  const Mount* m = mount_holding(machine.mounts, path);
  if (!m) throw UsageError(label + ": no mounted file system holds " + path + " in the mount table");
  const auto index = stacks_by_mount(layout);
  const auto below = index.find(*m);
  std::vector<StorageStack> stacks = below == index.end() ? std::vector<StorageStack>{} : stacks_of(*m, below->second);
  if (stacks.empty()) {
    if (!layout.block_known)
      throw UsageError(label + ": " + path + " is on " + mount_words(*m) +
                       "; which NVMe is below it is unknown: the block layer is " +
                       (layout.block_not_carried.empty() ? "unreadable" : layout.block_not_carried));
    throw UsageError(label + ": " + path + " is on " + mount_words(*m) +
                     ", which is not on an NVMe (no NVMe namespace below it in the block layer)");
  }
  PathTarget t = target_of(*m, std::move(stacks), storage_stack_findings(layout));
  t.typed = typed;
  t.path = path;
  t.existence_checked = source.is_live();
  if (t.controllers.empty()) {
    std::vector<std::string> bottoms;
    for (const auto& s : t.stacks) bottoms.push_back(s.nvme);
    throw UsageError(label + ": " + path + " is on " + mount_words(*m) + " on " + join(bottoms, ", ") +
                     ", which has no local PCIe NVMe controller (NVMe over fabrics?)");
  }
  return t;
}

std::vector<PathTarget> mounted_nvme_targets(const Machine& machine, const StorageLayout& layout) {
  std::vector<PathTarget> out;
  const auto index = stacks_by_mount(layout);
  const auto findings = storage_stack_findings(layout);
  // One target per file system: its mounts have the same stacks below them, so a bind mount adds a
  // line to the target it shares, not a copy of the stack and its finding (100,000 on a container host).
  std::map<std::vector<const StorageStack*>, std::size_t> target_of_stacks;
  for (const Mount& m : machine.mounts) {
    auto it = index.find(m);
    if (it == index.end() || it->second.empty()) continue;
    auto [at, fresh] = target_of_stacks.try_emplace(it->second, out.size());
    if (!fresh) {
      out[at->second].more_mounts.push_back(m);
      continue;
    }
    PathTarget t = target_of(m, stacks_of(m, it->second), findings);
    t.typed = t.path = t.mountpoint;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace p2pcheck
