// Reading files below a host directory (a --root tree, an unpacked dump, the live `/`) so that
// nothing a stranger's tree holds, or swaps in while we read, leads outside it: every open is
// relative to a descriptor of the directory and follows no symlink (the Source resolves links
// itself, inside the root), nothing is checked by path and then re-opened, and every read is capped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/source/memory_source.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

// An open file descriptor, closed when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// Opens `rel` ("sys/bus/pci", no "." or "..", "" for `dir` itself) below the directory `dir`
// with open(2) `flags`, following no symlink anywhere on the way (ELOOP, or ENOTDIR for a link
// where a directory was expected): openat2(RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS) where the kernel
// has it (5.6+), else one O_NOFOLLOW openat per component. `walk` forces the second (for tests).
// Returns a closed Fd with errno set on failure.
Fd open_beneath(int dir, std::string_view rel, int flags, bool walk = false);

// Reads the whole regular file `fd`, at most `cap` bytes; it stops at st_size bytes without asking
// for the end of file, and reads on to end of file below it (sysfs reports a page for any
// attribute, procfs 0). A fifo, device or socket is kFailed "not a regular file" (opened with
// O_NONBLOCK, it never blocks); a file past `cap` throws Error naming `where`.
FileRead read_capped(int fd, std::uint64_t cap, const std::string& where);

// read_capped for a file the caller already knows is a regular file or a sysfs attribute (a
// listing or an lstat said so, and it was opened O_NONBLOCK following no link), without its fstat:
// a read returning less than asked and less than a page is the end of the file (all of a regular
// file's bytes come when asked for; a sysfs attribute comes whole, a binary one a page at a time).
// `short_read_ends` false reads on to a read of 0, for a live /proc, whose seq files hand out
// their records a page or so per read. `whole`, when not 0, is a size known to be all of the file
// (an lstat's st_size): reading stops there without the read that would return 0.
FileRead read_known_file(int fd, std::uint64_t cap, const std::string& where, bool short_read_ends,
                         std::uint64_t whole = 0);

// An entry of a directory with its type as getdents reported it: DT_REG, DT_DIR, DT_LNK ... where
// the file system fills d_type (sysfs, procfs, tmpfs, ext4 do), DT_UNKNOWN where it does not.
struct DirEntry {
  std::string name;
  unsigned char type = 0;  // DT_UNKNOWN
};

// The entries of the directory `dir` (taken and closed), without "." and "..", in the order the
// file system gives them; nullopt with errno set when it is not an open directory.
std::optional<std::vector<DirEntry>> list_entries(Fd dir);
// Their names alone.
std::optional<std::vector<std::string>> list_names(Fd dir);

// Loads the host directory `dir` into `tree` ("/name/..." paths): regular files up to
// kMaxFileBytes (larger ones, logs, are skipped), symlinks as links (resolved later inside the
// tree), directories to `max_depth`; nothing else. `keep` is asked for each path before it is
// opened, so a sosreport's logs are never read. Throws Error when `dir` cannot be read.
void load_host_tree(const std::string& dir, MemoryTree& tree, const std::function<bool(const std::string&)>& keep,
                    int max_depth = 32);

}  // namespace p2pcheck
