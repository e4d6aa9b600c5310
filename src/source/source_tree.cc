// Tree backend: a directory laid out like a Linux root. The live machine is the tree at `/`.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/host_files.h"
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

  std::string describe() const override { return live_ ? "live /" : "tree " + root_; }
  bool is_live() const override { return live_; }

 protected:
  NodeType node_type(const std::string& path) override {
    struct stat st;
    if (!lstat_beneath(path, st)) return NodeType::kMissing;
    if (S_ISLNK(st.st_mode)) return NodeType::kLink;
    if (S_ISDIR(st.st_mode)) return NodeType::kDir;
    if (S_ISREG(st.st_mode)) return NodeType::kFile;
    return NodeType::kOther;
  }

  std::string node_link(const std::string& path) override {
    // A stack buffer: a 4 KiB string per link, kept by the Source's cache, cost 15 MB at 1,000 devices.
    char buf[kMaxPathBytes];
    int parent = parent_of(path);
    ssize_t n = parent >= 0 ? readlinkat(parent, last_part(path).c_str(), buf, sizeof buf) : -1;
    if (n < 0) throw Error(path, std::string("cannot read symlink: ") + std::strerror(errno));
    return std::string(buf, static_cast<size_t>(n));
  }

  FileRead node_read(const std::string& path) override {
    // From the directory node_type just looked in (a walk of one component, not of the whole
    // path), following no link. O_NONBLOCK: a fifo swapped in after node_type said "file" must
    // not hang the read.
    int parent = parent_of(path);
    if (parent < 0) return failure(errno);
    Fd fd = open_beneath(parent, last_part(path), O_RDONLY | O_NONBLOCK);
    if (!fd.ok()) return failure(errno);
    return read_capped(fd.get(), kMaxFileBytes, path);
  }

  std::vector<std::string> node_list(const std::string& path) override {
    return list_names(open_beneath(root_fd_.get(), relative(path), O_RDONLY | O_DIRECTORY))
        .value_or(std::vector<std::string>{});
  }

 private:
  // "/sys/bus" -> "sys/bus"; "/" -> "".
  static std::string relative(const std::string& path) { return path.empty() ? path : path.substr(1); }
  static std::string last_part(const std::string& path) { return path.substr(path.rfind('/') + 1); }
  // The parent directory of `path`, opened beneath the root; the last one is kept, since a
  // function's attributes are asked one after another (half the opens of a fabric's tree).
  // lstat, readlink and file opens go through it (each one component below it, no link followed).
  int parent_of(const std::string& path) {
    std::string dir = path.substr(0, path.rfind('/'));
    if (!parent_fd_.ok() || dir != parent_path_) {
      parent_fd_ = open_beneath(root_fd_.get(), relative(dir), O_PATH | O_DIRECTORY);
      parent_path_ = parent_fd_.ok() ? dir : std::string();
    }
    return parent_fd_.ok() ? parent_fd_.get() : -1;
  }
  bool lstat_beneath(const std::string& path, struct stat& st) {
    if (path == "/") return fstat(root_fd_.get(), &st) == 0;
    int parent = parent_of(path);
    return parent >= 0 && fstatat(parent, last_part(path).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  }

  static FileRead failure(int err) {
    if (err == ENOENT) return {};
    ReadStatus status = (err == EACCES || err == EPERM) ? ReadStatus::kDenied : ReadStatus::kFailed;
    return {status, "", std::strerror(err)};
  }

  std::string root_;  // for messages
  Fd root_fd_;
  bool live_;
  Fd parent_fd_;             // parent_of()'s last directory
  std::string parent_path_;  // and its path; empty when none is open
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
