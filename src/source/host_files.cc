// Opening and reading host files beneath a directory descriptor (host_files.h).
#include "p2pcheck/source/host_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <vector>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

namespace {

// Set once openat2 turned out to be missing (ENOSYS) or filtered (EPERM from a seccomp profile).
std::atomic<bool> no_openat2{false};

Fd walk_beneath(int dir, std::string_view rel, int flags) {
  std::vector<std::string> parts = split(rel, '/');
  Fd here(openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!here.ok()) return here;
  if (parts.empty()) return Fd(openat(here.get(), ".", flags | O_CLOEXEC));
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "." || parts[i] == "..") {
      errno = EXDEV;
      return Fd();
    }
    bool last = i + 1 == parts.size();
    int how = last ? flags | O_NOFOLLOW | O_CLOEXEC : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    Fd next(openat(here.get(), parts[i].c_str(), how));
    if (!next.ok()) return next;
    here = std::move(next);
  }
  return here;
}

}  // namespace

Fd open_beneath(int dir, std::string_view rel, int flags, bool walk) {
  if (!walk && !no_openat2.load(std::memory_order_relaxed)) {
    std::string path = rel.empty() ? std::string(".") : std::string(rel);
    struct open_how how = {};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how);
    if (fd >= 0) return Fd(static_cast<int>(fd));
    if (errno != ENOSYS && errno != EPERM) return Fd();
    no_openat2 = true;
  }
  return walk_beneath(dir, rel, flags);
}

namespace {

// Reads `fd` to its end, at most `cap` bytes: until a read of 0, or until `whole` bytes (a size known
// to be all of it, 0 when none is), or with `short_read_ends` until a read shorter than asked and
// than a page.
FileRead read_to_end(int fd, std::uint64_t cap, const std::string& where, std::uint64_t whole, bool short_read_ends) {
  FileRead result{ReadStatus::kOk, "", ""};
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      return {err == EACCES || err == EPERM ? ReadStatus::kDenied : ReadStatus::kFailed, "", std::strerror(err)};
    }
    if (n == 0) break;
    result.bytes.append(buf, static_cast<size_t>(n));
    if (result.bytes.size() > cap)
      throw Error(where,
                  "file is larger than " + std::to_string(cap >> 20) + " MiB; no file p2pcheck reads is that large");
    if (whole > 0 && result.bytes.size() == whole) break;
    if (short_read_ends && static_cast<size_t>(n) < sizeof buf && n < 4096) break;
  }
  return result;
}

}  // namespace

FileRead read_capped(int fd, std::uint64_t cap, const std::string& where) {
  struct stat st;
  if (fstat(fd, &st) != 0) return {ReadStatus::kFailed, "", std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return {ReadStatus::kFailed, "", "not a regular file"};
  // All st_size bytes are in: no read for the end of file. A sysfs attribute never holds more
  // than its st_size (a page; usually less, so it takes the extra read); procfs says 0.
  return read_to_end(fd, cap, where, st.st_size > 0 ? static_cast<std::uint64_t>(st.st_size) : 0, false);
}

FileRead read_known_file(int fd, std::uint64_t cap, const std::string& where, bool short_read_ends,
                         std::uint64_t whole) {
  return read_to_end(fd, cap, where, whole, short_read_ends);
}

std::optional<std::vector<DirEntry>> list_entries(Fd dir) {
  if (!dir.ok()) return std::nullopt;
  // getdents64 itself rather than fdopendir/readdir: those add an fstat and an fcntl per listing,
  // and drop nothing we need (d_type comes with each entry).
  alignas(struct dirent64) char buf[32768];
  std::vector<DirEntry> entries;
  for (;;) {
    ssize_t n = getdents64(dir.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    if (n == 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const struct dirent64*>(buf + at);
      at += e->d_reclen;
      std::string_view name = e->d_name;
      if (name != "." && name != "..") entries.push_back({std::string(name), e->d_type});
    }
  }
  return entries;
}

std::optional<std::vector<std::string>> list_names(Fd dir) {
  auto entries = list_entries(std::move(dir));
  if (!entries) return std::nullopt;
  std::vector<std::string> names;
  names.reserve(entries->size());
  for (auto& e : *entries) names.push_back(std::move(e.name));
  return names;
}

namespace {

void load_dir(int dir_fd, const std::string& host, const std::string& rel, MemoryTree& tree,
              const std::function<bool(const std::string&)>& keep, int depth, int max_depth) {
  // A descriptor of its own for the listing: the walk below keeps using `dir_fd`.
  auto names = list_names(Fd(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
  if (!names) throw Error(host + rel, std::string("cannot read directory: ") + std::strerror(errno));
  for (const auto& name : *names) {
    std::string child = rel + "/" + name;
    if (!keep(child)) continue;
    struct stat st;
    if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[kMaxPathBytes];
      ssize_t n = readlinkat(dir_fd, name.c_str(), target, sizeof target);
      if (n > 0) tree.add_link(child, std::string(target, static_cast<size_t>(n)));
    } else if (S_ISDIR(st.st_mode)) {
      // Opened again without following links: a directory swapped for a link since fstatat fails here.
      Fd sub(openat(dir_fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub.ok()) continue;
      tree.add_dir(child);
      if (depth < max_depth) load_dir(sub.get(), host, child, tree, keep, depth + 1, max_depth);
    } else if (S_ISREG(st.st_mode)) {
      if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) continue;  // a log, never a fact we read
      Fd file(openat(dir_fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
      if (!file.ok()) continue;
      FileRead r = read_capped(file.get(), kMaxFileBytes, host + child);
      if (r.ok()) tree.add_file(child, std::move(r.bytes));
    }
  }
}

}  // namespace

void load_host_tree(const std::string& dir, MemoryTree& tree, const std::function<bool(const std::string&)>& keep,
                    int max_depth) {
  Fd top(open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!top.ok()) throw Error(dir, std::string("cannot read directory: ") + std::strerror(errno));
  load_dir(top.get(), dir, "", tree, keep, 0, max_depth);
}

}  // namespace p2pcheck
