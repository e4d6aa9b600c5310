// Tree backend: a directory laid out like a Linux root. The live machine is the tree at `/`.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <sys/stat.h>
#include <vector>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/host_files.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {
namespace {

// Every node is reached through a descriptor of the root opened once, never by host path: a tree
// whose directories are swapped for links between two reads cannot lead the next read outside it.
class TreeSource : public Source {
 public:
  TreeSource(const std::string& root, bool live) : root_(root), live_(live) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
    root_fd_ = Fd(open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd_.ok()) throw Error(root_, std::string("cannot open root directory: ") + std::strerror(errno));
  }

  std::string describe() const override { return live_ ? "live /" : "tree " + printable(root_); }
  bool is_live() const override { return live_; }

 protected:
  NodeType node_type(const std::string& path) override {
    struct stat st;
    if (!lstat_beneath(path, st)) return NodeType::kMissing;
    // A file's type is asked just before its first read: its size saves that read's last call
    // (a 4 KiB config space took a second read() to see the end).
    if (S_ISREG(st.st_mode)) {
      stat_path_ = path;
      stat_size_ = static_cast<std::uint64_t>(st.st_size);
    }
    return type_of_mode(st.st_mode);
  }

  NodeType node_type_expecting(const std::string& path, NodeType expected) override {
    if (path == "/" || (expected != NodeType::kDir && expected != NodeType::kLink)) return node_type(path);
    if (expected == NodeType::kDir) {
      // Opened as a directory following no link (what dir_fd() does for the reads below it): it
      // is one then. Anything else (a link, a file) is looked at as node_type() looks.
      if (dir_fd(path) >= 0) return NodeType::kDir;
      // A link met where a directory was expected (/sys/block/NAME): its text, which the walk
      // reads next, says so in the one call an lstat would have taken.
      if (errno == ELOOP && read_link_ahead(path)) return NodeType::kLink;
    } else if (read_link_ahead(path)) {
      return NodeType::kLink;
    }
    if (errno == ENOENT) return NodeType::kMissing;
    return node_type(path);
  }

  std::string node_link(const std::string& path) override {
    // Read ahead by node_type_expecting() for most links; read here for the others.
    if (path != link_path_ && !read_link_ahead(path))
      throw Error(path, std::string("cannot read symlink: ") + std::strerror(errno));
    link_path_.clear();
    return std::move(link_text_);
  }

  FileRead node_read(const std::string& path) override {
    // From the directory node_type just looked in (a walk of one component, not of the whole
    // path), following no link. O_NONBLOCK: a fifo swapped in after node_type said "file" must
    // not hang the read.
    int parent = parent_of(path);
    if (parent < 0) return failure(errno);
    Fd fd = open_beneath(parent, last_part(path), O_RDONLY | O_NONBLOCK);
    if (!fd.ok()) return failure(errno);
    // No fstat: node_type said it is a regular file, and O_NONBLOCK with no link followed keeps a
    // node swapped in since from hanging the read (making a device node needs root on this tree).
    // The size lstat just gave is all of it where it is not 0 (procfs): exact for a file on disk,
    // and a sysfs attribute holds at most its st_size (binary ones exactly, text ones less).
    std::uint64_t whole = stat_path_ == path ? stat_size_ : 0;
    stat_path_.clear();
    return read_known_file(fd.get(), kMaxFileBytes, path, !(live_ && path.starts_with("/proc/")), whole);
  }

  FileRead node_read_part(const std::string& path, std::uint64_t offset, std::size_t length) override {
    int parent = parent_of(path);
    if (parent < 0) return failure(errno);
    Fd fd = open_beneath(parent, last_part(path), O_RDONLY | O_NONBLOCK);
    if (!fd.ok()) return failure(errno);
    stat_path_.clear();
    FileRead r{ReadStatus::kOk, std::string(length, '\0'), ""};
    std::size_t got = 0;
    while (got < length) {
      ssize_t n = pread(fd.get(), r.bytes.data() + got, length - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return failure(errno == EAGAIN ? EIO : errno);
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    r.bytes.resize(got);
    return r;
  }

  std::vector<std::string> node_list(const std::string& path) override {
    std::vector<std::string> names;
    for (ListedEntry& entry : node_list_typed(path)) names.push_back(std::move(entry.name));
    return names;
  }

  std::vector<ListedEntry> node_list_typed(const std::string& path) override {
    // "." of the directory's descriptor: no second walk, and its entries are looked up through it next.
    int dir = path == "/" ? root_fd_.get() : dir_fd(path);
    auto entries = dir >= 0 ? list_entries(Fd(openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC))) : std::nullopt;
    std::vector<ListedEntry> listed;
    if (!entries) return listed;
    listed.reserve(entries->size());
    for (DirEntry& e : *entries) listed.push_back({std::move(e.name), type_of_dirent(e.type)});
    return listed;
  }

 private:
  static NodeType type_of_mode(mode_t mode) {
    if (S_ISLNK(mode)) return NodeType::kLink;
    if (S_ISDIR(mode)) return NodeType::kDir;
    if (S_ISREG(mode)) return NodeType::kFile;
    return NodeType::kOther;
  }
  // getdents' d_type, as node_type's lstat would say it; nullopt where the file system leaves it out.
  static std::optional<NodeType> type_of_dirent(unsigned char type) {
    switch (type) {
      case DT_LNK: return NodeType::kLink;
      case DT_DIR: return NodeType::kDir;
      case DT_REG: return NodeType::kFile;
      case DT_UNKNOWN: return std::nullopt;
      default: return NodeType::kOther;  // a fifo, socket or device node
    }
  }

  // "/sys/bus/class" -> "class" (a canonical path's last component: never "", "." or "..").
  static const char* last_part(const std::string& path) { return path.c_str() + path.rfind('/') + 1; }
  // The directory holding `path`; lstat, readlink and file opens go through it, each one component
  // below it and following no link.
  int parent_of(const std::string& path) { return dir_fd(std::string_view(path).substr(0, path.rfind('/'))); }

  // The directory `dir` (canonical; "" is the root) opened beneath the root, or -1 with errno set.
  // The last kMaxOpenDirs are kept: a walk meets a few directories over and over (the devices
  // list, a bridge, the function, its IOMMU group), and reopening them was half the opens. A
  // descriptor kept stays safe when the tree changes: it was opened below the root following no
  // link, and everything reached through it is one of its own entries (no "..", no link), so a
  // directory swapped for a link, or moved away, leads nowhere outside (at worst to its old entries).
  int dir_fd(std::string_view dir) {
    if (dir.empty()) return root_fd_.get();
    // A file's type, then its bytes, come from one directory, and so do the next files of the
    // same device: the last directory asked for is compared before the path is hashed.
    if (last_slot_ < open_dirs_.size() && open_dirs_[last_slot_].path == dir) {
      open_dirs_[last_slot_].used = ++clock_;
      return open_dirs_[last_slot_].fd.get();
    }
    std::size_t hash = std::hash<std::string_view>{}(dir);
    for (std::size_t i = 0; i < open_dirs_.size(); ++i) {
      OpenDir& open = open_dirs_[i];
      if (open.hash == hash && open.path == dir) {
        open.used = ++clock_;
        last_slot_ = i;
        return open.fd.get();
      }
    }
    // From the deepest ancestor open: the kernel walks only the components below it.
    int from = root_fd_.get();
    std::size_t skip = 0;
    for (const OpenDir& open : open_dirs_) {
      std::size_t n = open.path.size();
      if (n > skip && n < dir.size() && dir[n] == '/' && dir.starts_with(open.path)) {
        from = open.fd.get();
        skip = n;
      }
    }
    Fd fd = open_beneath(from, dir.substr(skip + 1), O_PATH | O_DIRECTORY);
    if (!fd.ok()) return -1;
    OpenDir* slot = nullptr;
    if (open_dirs_.size() < kMaxOpenDirs) {
      slot = &open_dirs_.emplace_back();
    } else {
      slot = &*std::min_element(open_dirs_.begin(), open_dirs_.end(),
                                [](const OpenDir& a, const OpenDir& b) { return a.used < b.used; });
    }
    slot->path.assign(dir);
    slot->hash = hash;
    slot->fd = std::move(fd);
    slot->used = ++clock_;
    last_slot_ = static_cast<std::size_t>(slot - open_dirs_.data());
    return slot->fd.get();
  }
  // readlink of `path`, its text kept for the node_link() that follows; false (errno set) when
  // it is not a link. A stack buffer: a 4 KiB string per link, kept by the Source's cache, cost
  // 15 MB at 1,000 devices.
  bool read_link_ahead(const std::string& path) {
    char buf[kMaxPathBytes];
    int parent = parent_of(path);
    ssize_t n = parent >= 0 ? readlinkat(parent, last_part(path), buf, sizeof buf) : -1;
    if (n < 0) return false;
    link_path_ = path;
    link_text_.assign(buf, static_cast<size_t>(n));
    return true;
  }
  bool lstat_beneath(const std::string& path, struct stat& st) {
    if (path == "/") return fstat(root_fd_.get(), &st) == 0;
    int parent = parent_of(path);
    return parent >= 0 && fstatat(parent, last_part(path), &st, AT_SYMLINK_NOFOLLOW) == 0;
  }

  static FileRead failure(int err) {
    if (err == ENOENT) return {};
    ReadStatus status = (err == EACCES || err == EPERM) ? ReadStatus::kDenied : ReadStatus::kFailed;
    return {status, "", std::strerror(err)};
  }

  struct OpenDir {
    std::string path;
    std::size_t hash = 0;
    Fd fd;
    std::uint64_t used = 0;  // clock_ when last asked for
  };
  static constexpr std::size_t kMaxOpenDirs = 16;

  std::string root_;  // for messages
  Fd root_fd_;
  bool live_;
  std::vector<OpenDir> open_dirs_;    // dir_fd()'s, at most kMaxOpenDirs
  std::size_t last_slot_ = SIZE_MAX;  // the one dir_fd() returned last (its path says if it still is)
  std::uint64_t clock_ = 0;
  // The regular file node_type() looked at last and its st_size, for the read that follows it.
  std::string stat_path_;
  std::uint64_t stat_size_ = 0;
  // The link node_type_expecting() read last and its text, for the node_link() that follows it.
  std::string link_path_;
  std::string link_text_;
};

}  // namespace

std::unique_ptr<Source> open_live_source() { return std::make_unique<TreeSource>("/", true); }

std::unique_ptr<Source> open_tree_source(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) throw Error(dir, std::string("cannot open root directory: ") + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) throw Error(dir, "--root expects a directory laid out like / (with sys/, proc/ ...)");
  std::string sys = dir + "/sys";
  if (stat(sys.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(dir, "no sys/ directory inside: expected a captured Linux root (DIR/sys/bus/pci/devices ...)");
  return std::make_unique<TreeSource>(dir, false);
}

}  // namespace p2pcheck
