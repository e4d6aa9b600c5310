// Tree backend: a directory laid out like a Linux root. The live machine is the tree at `/`.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {
namespace {

class TreeSource : public Source {
 public:
  TreeSource(std::string root, bool live) : root_(std::move(root)), live_(live) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
    if (root_ == "/") root_.clear();
  }

  std::string describe() const override { return live_ ? "live /" : "tree " + root_; }
  bool is_live() const override { return live_; }

 protected:
  NodeType node_type(const std::string& path) override {
    struct stat st;
    if (lstat(host(path).c_str(), &st) != 0) return NodeType::kMissing;
    if (S_ISLNK(st.st_mode)) return NodeType::kLink;
    if (S_ISDIR(st.st_mode)) return NodeType::kDir;
    if (S_ISREG(st.st_mode)) return NodeType::kFile;
    return NodeType::kOther;
  }

  std::string node_link(const std::string& path) override {
    // A stack buffer: a 4 KiB string per link, kept by the Source's cache, cost 15 MB at 1,000 devices.
    char buf[4096];
    ssize_t n = readlink(host(path).c_str(), buf, sizeof buf);
    if (n < 0) throw Error(path, std::string("cannot read symlink: ") + std::strerror(errno));
    return std::string(buf, static_cast<size_t>(n));
  }

  FileRead node_read(const std::string& path) override {
    // Sysfs attributes report a size of 4096 whatever they hold: read until EOF, never trust st_size.
    int fd = open(host(path).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return failure(errno);
    FileRead result{ReadStatus::kOk, "", ""};
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        close(fd);
        return failure(err);
      }
      if (n == 0) break;
      result.bytes.append(buf, static_cast<size_t>(n));
      if (result.bytes.size() > kMaxFileBytes) {
        close(fd);
        throw Error(path, "file is larger than " + std::to_string(kMaxFileBytes >> 20) +
                              " MiB; no file p2pcheck reads is that large");
      }
    }
    close(fd);
    return result;
  }

  std::vector<std::string> node_list(const std::string& path) override {
    std::vector<std::string> names;
    DIR* dir = opendir(host(path).c_str());
    if (!dir) return names;
    while (struct dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    closedir(dir);
    return names;
  }

 private:
  std::string host(const std::string& path) const { return root_ + path; }

  static FileRead failure(int err) {
    if (err == ENOENT) return {};
    ReadStatus status = (err == EACCES || err == EPERM) ? ReadStatus::kDenied : ReadStatus::kFailed;
    return {status, "", std::strerror(err)};
  }

  std::string root_;  // host path prefix; empty for `/`
  bool live_;
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
