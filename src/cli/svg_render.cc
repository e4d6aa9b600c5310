#include "svg_render.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <vector>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

extern char** environ;

namespace p2pcheck::cli {
namespace {

// What a signal handler may touch while dot runs: the temporary files' names and the child, so
// Ctrl-C, a hang-up or a kill leaves no .p2pcheck-dot-* or .p2pcheck-svg-* behind and no dot running.
constexpr std::size_t kMaxName = 4096 + 64;
char g_temp[2][kMaxName];
volatile sig_atomic_t g_child = 0;
constexpr std::array<int, 4> kSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

extern "C" void remove_and_reraise(int sig) {
  for (auto& name : g_temp)
    if (name[0]) unlink(name);  // async-signal-safe, as are kill, signal and raise
  if (g_child > 0) kill(g_child, SIGKILL);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Removes a temporary file unless it was renamed into place; its name is the handler's until then.
struct TempFile {
  std::string path;
  int slot = -1;
  void release() {
    if (slot >= 0) g_temp[slot][0] = '\0';
    path.clear();
  }
  ~TempFile() {
    if (!path.empty()) unlink(path.c_str());
    if (slot >= 0) g_temp[slot][0] = '\0';
  }
};

// The handlers, installed for the render and the previous ones put back after it.
class SignalCleanup {
 public:
  SignalCleanup() {
    struct sigaction sa {};
    sa.sa_handler = remove_and_reraise;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      sigaction(kSignals[i], nullptr, &old_[i]);
      // A signal the caller ignores (nohup, a script's background job) stays ignored.
      if (old_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &sa, nullptr);
    }
  }
  ~SignalCleanup() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
    g_child = 0;
  }

 private:
  std::array<struct sigaction, kSignals.size()> old_{};
};

std::string directory_of(const std::string& file) {
  auto slash = file.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
}

void make_temp(TempFile& out, int slot, const std::string& dir, const std::string& file, const char* what) {
  std::string pattern = dir + "/.p2pcheck-" + what + "-XXXXXX";
  if (pattern.size() >= kMaxName) throw Error(file, "the directory's name is too long for a temporary file");
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  // Named for the handler before it exists: a signal between mkstemp and here would leave it.
  std::memcpy(g_temp[slot], name.data(), name.size());
  out.slot = slot;
  int fd = mkstemp(name.data());
  if (fd < 0) throw Error(file, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  std::memcpy(g_temp[slot], name.data(), name.size());
  close(fd);
  out.path = name.data();
}

// How long dot may take: $P2PCHECK_DOT_TIMEOUT seconds (1 to 86400), else 120 s; Graphviz's
// layout is superlinear, and a picture of tens of thousands of functions can run for hours.
int dot_timeout_seconds() {
  if (const char* env = std::getenv("P2PCHECK_DOT_TIMEOUT"))
    if (auto n = parse_dec(env); n && *n >= 1 && *n <= 86400) return static_cast<int>(*n);
  return 120;
}

// Waits for dot up to the time limit; past it dot is killed and nothing is written.
int wait_for_dot(pid_t pid, const std::string& file) {
  const int limit = dot_timeout_seconds();
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long pause_ms = 1;; pause_ms = std::min(pause_ms * 2, 100L)) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) throw Error(file, std::string("waiting for dot: ") + std::strerror(errno));
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec >= limit) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
      throw Error(file, "dot -Tsvg did not finish in " + std::to_string(limit) +
                            " s (P2PCHECK_DOT_TIMEOUT sets the limit); it was stopped and nothing was written; "
                            "`p2pcheck topo --dot` writes the DOT text");
    }
    timespec pause{0, pause_ms * 1000000L};
    nanosleep(&pause, nullptr);
  }
}

void write_dot(const std::string& dot_text, const std::string& path, const std::string& file) {
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    bool ok = std::fwrite(dot_text.data(), 1, dot_text.size(), f) == dot_text.size();
    if (std::fclose(f) != 0 || !ok) throw Error(file, "cannot write the DOT text to a temporary file");
  } else {
    throw Error(file, std::string("cannot write a temporary file beside it: ") + std::strerror(errno));
  }
}

}  // namespace

void render_svg(const std::string& dot_text, const std::string& file) {
  std::string dir = directory_of(file);
  SignalCleanup cleanup;
  TempFile dot_file, svg_file;
  make_temp(dot_file, 0, dir, file, "dot");
  make_temp(svg_file, 1, dir, file, "svg");
  write_dot(dot_text, dot_file.path, file);

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
  g_child = pid;
  int status = wait_for_dot(pid, file);
  g_child = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(file, "dot -Tsvg failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                          "); nothing was written");
  // mkstemp makes the file 0600; an SVG for a web page or a ticket is read by others.
  chmod(svg_file.path.c_str(), 0644);
  if (std::rename(svg_file.path.c_str(), file.c_str()) != 0)
    throw Error(file, std::string("cannot put the SVG in place: ") + std::strerror(errno));
  svg_file.release();
}

}  // namespace p2pcheck::cli
