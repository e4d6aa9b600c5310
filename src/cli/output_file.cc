#include "output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

#include "p2pcheck/source/error.h"

namespace p2pcheck::cli {

void write_whole_file(const std::string& path, const std::string& text, const std::string& what) {
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  if (dir.empty()) dir = "/";
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  std::string tmp = dir + "/." + base + ".XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) throw Error(path, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  std::size_t done = 0;
  int err = 0;
  while (done < text.size() && !err) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n > 0)
      done += static_cast<std::size_t>(n);
    else if (n == 0 || errno != EINTR)
      err = n == 0 ? EIO : errno;
  }
  if (!err && fchmod(fd, 0644) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    unlink(tmp.c_str());
    throw Error(path, "cannot write the " + what + ": " + std::strerror(err));
  }
}

}  // namespace p2pcheck::cli
