#include "svg_render.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <vector>

#include "p2pcheck/source/error.h"

extern char** environ;

namespace p2pcheck::cli {
namespace {

// Removes a temporary file unless it was renamed into place.
struct TempFile {
  std::string path;
  ~TempFile() {
    if (!path.empty()) unlink(path.c_str());
  }
};

std::string directory_of(const std::string& file) {
  auto slash = file.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
}

TempFile make_temp(const std::string& dir, const std::string& file, const char* what) {
  std::string pattern = dir + "/.p2pcheck-" + what + "-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) throw Error(file, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  close(fd);
  return TempFile{name.data()};
}

}  // namespace

void render_svg(const std::string& dot_text, const std::string& file) {
  std::string dir = directory_of(file);
  TempFile dot_file = make_temp(dir, file, "dot");
  TempFile svg_file = make_temp(dir, file, "svg");
  if (FILE* f = std::fopen(dot_file.path.c_str(), "w")) {
    bool ok = std::fwrite(dot_text.data(), 1, dot_text.size(), f) == dot_text.size();
    if (std::fclose(f) != 0 || !ok) throw Error(file, "cannot write the DOT text to a temporary file");
  } else {
    throw Error(file, std::string("cannot write a temporary file beside it: ") + std::strerror(errno));
  }

  std::string out_arg = "-o" + svg_file.path;
  std::vector<char*> argv = {const_cast<char*>("dot"), const_cast<char*>("-Tsvg"), out_arg.data(), dot_file.path.data(),
                             nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ);
  if (rc == ENOENT)
    throw UsageError(
        "--svg needs Graphviz's `dot`, which is not installed (apt-get install graphviz); "
        "`p2pcheck topo --dot` writes the DOT text without it");
  if (rc != 0) throw Error(file, std::string("cannot run dot: ") + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(file, std::string("waiting for dot: ") + std::strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(file, "dot -Tsvg failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                          "); nothing was written");
  // mkstemp makes the file 0600; an SVG for a web page or a ticket is read by others.
  chmod(svg_file.path.c_str(), 0644);
  if (std::rename(svg_file.path.c_str(), file.c_str()) != 0)
    throw Error(file, std::string("cannot put the SVG in place: ") + std::strerror(errno));
  svg_file.path.clear();
}

}  // namespace p2pcheck::cli
