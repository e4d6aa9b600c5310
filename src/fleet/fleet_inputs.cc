// fleet's inputs: the command line's files and directories expanded into hosts (every file a host
// but notes and selection files), and the selection file kept beside an input (fleet.h).
#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <sys/stat.h>

#include "p2pcheck/fleet/fleet.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/input_kind.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"

namespace p2pcheck {

namespace {

bool is_dir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Directories of directories of captures are common (rack/host/...); deeper is a mistake or a loop.
constexpr int kMaxInputDepth = 8;

// Sorted names in `dir` without . and ..; nullopt with errno when it cannot be listed.
std::optional<std::vector<std::string>> entries_of(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::vector<std::string> names;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// A directory that is one machine for --dump: a captured root or a sosreport (at the top or in its
// one folder), or an lspci bundle, whose cpuinfo or lspci -t file is never an input alone.
bool is_one_machine(const std::string& dir, const std::vector<std::string>& names) {
  for (const char* marker : {"sys", "sos_commands"})
    if (std::find(names.begin(), names.end(), marker) != names.end()) return true;
  if (names.size() == 1 && (is_dir(dir + "/" + names[0] + "/sys") || is_dir(dir + "/" + names[0] + "/sos_commands")))
    return true;
  bool bundle_part = false;
  for (const auto& name : names) {
    std::string path = dir + "/" + name;
    if (is_dir(path)) return false;
    InputKind kind = identify_input(path).kind;
    bundle_part = bundle_part || kind == InputKind::kCpuinfo || kind == InputKind::kLspciTree;
  }
  return bundle_part;
}

// The directories a walk has entered, by device and inode: links may lead back up (ten links to
// "." made 10^8 inputs) or to a directory already read.
struct Walk {
  std::map<std::pair<dev_t, ino_t>, std::string> seen;  // -> the path it was first reached by
  std::set<std::pair<dev_t, ino_t>> open;               // the directories being walked now
  std::set<std::pair<dev_t, ino_t>> reported;           // loops already listed, each once
  std::vector<std::string>& out;
  std::vector<UnreadableInput>& bad;
  std::vector<std::string>& skipped;
};

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parent_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
}

// A --gpu/--nvme selection kept beside an input (selection_beside), never an input itself.
bool is_selection_file(const std::string& name) {
  return name == "args" || (name.size() > 5 && name.compare(name.size() - 5, 5, ".args") == 0);
}

// Notes people keep beside their captures: README, SOURCE, NOTES, LICENSE (any extension) and markdown.
// Every other file in a folder of hosts is a host: one that cannot be read is reported, never passed over.
bool is_notes_file(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string stem = lower.substr(0, lower.find('.'));
  for (const char* notes : {"readme", "source", "notes", "license", "copying", "changelog"})
    if (stem == notes) return true;
  return lower.size() > 3 && lower.compare(lower.size() - 3, 3, ".md") == 0;
}

void expand(const std::string& path, int depth, Walk& walk) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    walk.bad.push_back({path, std::string("cannot open: ") + std::strerror(errno)});
    return;
  }
  if (S_ISREG(st.st_mode)) {
    // A file named on the command line, or found in a folder of hosts, is an input whatever it
    // holds: a truncated upload or random bytes are an unreadable host whose error says what it is
    // not. Only notes and selection files beside the inputs are passed over, and counted.
    if (depth > 0 && (is_selection_file(base_name(path)) || is_notes_file(base_name(path)))) {
      if (!is_selection_file(base_name(path))) walk.skipped.push_back(path);
      return;
    }
    walk.out.push_back(path);
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    // A FIFO would block the read forever; devices and sockets are no input either.
    walk.bad.push_back({path, std::string(file_type_name(st.st_mode)) + ", not a regular file or directory"});
    return;
  }
  std::pair<dev_t, ino_t> key{st.st_dev, st.st_ino};
  if (auto [it, fresh] = walk.seen.emplace(key, path); !fresh) {
    // A loop is listed once; a second way into a directory outside the walk reads it once.
    if (walk.open.count(key) && walk.reported.insert(key).second)
      walk.bad.push_back({path, "a link back to " + it->second + ", which is being read: a loop, not followed"});
    return;
  }
  auto names = entries_of(path);
  if (!names) {
    walk.bad.push_back({path, std::string("cannot list the directory: ") + std::strerror(errno)});
    return;
  }
  if (is_one_machine(path, *names)) {
    walk.out.push_back(path);
    return;
  }
  if (depth >= kMaxInputDepth) {
    walk.bad.push_back({path, "directories nested deeper than " + std::to_string(kMaxInputDepth) + " levels"});
    return;
  }
  std::size_t before = walk.out.size() + walk.bad.size() + walk.skipped.size();
  std::string prefix = path.back() == '/' ? path : path + "/";
  walk.open.insert(key);
  for (const auto& name : *names)
    if (name[0] != '.') expand(prefix + name, depth + 1, walk);
  walk.open.erase(key);
  if (walk.out.size() + walk.bad.size() + walk.skipped.size() == before)
    walk.bad.push_back({path, "an empty directory: no capture, dump or check --json file in it"});
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& args, std::vector<UnreadableInput>& unreadable,
                                       std::vector<std::string>& skipped) {
  std::vector<std::string> out;
  Walk walk{{}, {}, {}, out, unreadable, skipped};
  for (const auto& arg : args) {
    if (arg.empty()) {
      unreadable.push_back({arg, "an empty name"});
      continue;
    }
    expand(arg, 0, walk);
  }
  return out;
}

std::optional<PairSelection> selection_beside(const std::string& input) {
  const std::string dir = parent_of(input), stem = file_stem(input);
  std::string file = dir + "/" + stem + ".args";
  struct stat st;
  if (stat(file.c_str(), &st) != 0) {
    file = dir + "/args";
    if (base_name(dir) != stem || stat(file.c_str(), &st) != 0) return std::nullopt;
  }
  const std::string text = read_input_file(file, 4096, "the selection file", "a --gpu/--nvme selection is shorter");
  auto bad = [&] { return Error(file, "expected --gpu LIST and --nvme LIST (the pairs to judge for " + input + ")"); };
  PairSelection selection;
  std::vector<std::string>* side = nullptr;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find_first_of(" \t\r\n", at);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (!side) {
      if (word != "--gpu" && word != "--nvme") throw bad();
      side = word == "--gpu" ? &selection.gpu : &selection.nvme;
      continue;
    }
    for (std::size_t from = 0, comma; from <= word.size(); from = comma + 1) {
      comma = std::min(word.find(',', from), word.size());
      if (comma == from) throw bad();
      if (side->size() == kMaxSelectors) throw Error(file, "more than " + std::to_string(kMaxSelectors) + " devices");
      side->push_back(word.substr(from, comma - from));
    }
    side = nullptr;
  }
  if (side || (selection.gpu.empty() && selection.nvme.empty())) throw bad();
  return selection;
}

}  // namespace p2pcheck
