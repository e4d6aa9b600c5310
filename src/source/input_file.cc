// Opening inputs named on the command line, regular files and directories only (input_file.h).
#include "p2pcheck/source/input_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

#include "p2pcheck/source/error.h"

namespace p2pcheck {

namespace {

[[noreturn]] void refuse(const std::string& path, mode_t mode, bool directory_too) {
  throw Error(path, std::string(file_type_name(mode)) + ", not a regular file" +
                        (directory_too ? " or directory" : "") + ": only those are read as input");
}

}  // namespace

const char* file_type_name(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO (named pipe)";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
  }
  return "a special file";
}

InputType input_type(const std::string& path, const std::string& what) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw Error(path, "cannot open " + what + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return InputType::kDirectory;
  if (!S_ISREG(st.st_mode)) refuse(path, st.st_mode, true);
  return InputType::kFile;
}

Fd open_input_file(const std::string& path, const std::string& what) {
  Fd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.ok()) throw Error(path, "cannot open " + what + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) throw Error(path, "cannot open " + what + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) refuse(path, st.st_mode, false);
  return fd;
}

std::string read_input_file(const std::string& path, std::uint64_t cap, const std::string& what,
                            const std::string& why) {
  Fd fd = open_input_file(path, what);
  std::string bytes;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path, "cannot read " + what + ": " + std::strerror(errno));
    if (n == 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
    if (bytes.size() > cap) throw Error(path, "larger than " + std::to_string(cap >> 20) + " MiB; " + why);
  }
  return bytes;
}

std::string read_input_head(const std::string& path, std::size_t bytes) {
  Fd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  struct stat st;
  if (!fd.ok() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::string head(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    ssize_t n = read(fd.get(), head.data() + got, bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  return head;
}

}  // namespace p2pcheck
