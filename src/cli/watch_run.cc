// `p2pcheck watch` running: load the probe, run the user's command (or wait for --duration or
// Ctrl-C), print a line per interval, then the summary; or judge a --replay recording.
#include "watch_run.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <iostream>
#include <sys/wait.h>

#include "output_file.h"
#include "p2pcheck/live/device_actions.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/rules/kernel_rules.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/watch/watch_environment.h"
#include "p2pcheck/watch/watch_json.h"
#include "p2pcheck/watch/watch_recording.h"
#include "p2pcheck/watch/watch_report.h"
#include "p2pcheck/watch/watch_text.h"

namespace p2pcheck::cli {
namespace {

volatile sig_atomic_t g_stop = 0;  // the stop signal's number, 0 while none came
void on_stop_signal(int sig) { g_stop = sig; }

int exit_for(WatchResult result) {
  switch (result) {
    case WatchResult::kP2pSeen: return kExitOk;
    case WatchResult::kFail: return kExitFail;
    case WatchResult::kUnknown: return kExitUnknown;
    case WatchResult::kNoP2p: return kExitNoPair;
  }
  return kExitUnknown;
}

WatchFilter filter_of(const GlobalOptions& o, const WatchOptions& w) {
  WatchFilter f;
  f.gpu = o.selection.gpu;
  f.nvme = o.selection.nvme;
  f.pid = w.pid;
  if (!w.comm.empty()) f.comm = w.comm;
  f.all = w.all;
  return f;
}

std::string clock_text() {
  std::time_t now = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&now));
  return buf;
}

// SIGCHLD stays blocked in p2pcheck so the loop can sleep in sigtimedwait() until the command ends
// or the interval is up, with no wakeups between; the command gets the mask it would have had.
sigset_t child_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  return set;
}

// The user's command in a child process; -1 (with `error`) when it could not start. The child
// waits for `go` before it execs, so the probe follows it (WatchProbe::follow) before it can start
// anything of its own.
pid_t start_command(const std::vector<std::string>& command, WatchProbe& probe, std::string& error) {
  int fds[2], go[2];
  if (pipe2(fds, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  const sigset_t chld = child_signal();
  sigset_t before;
  sigprocmask(SIG_BLOCK, &chld, &before);
  pid_t pid = fork();
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &before, nullptr);
    close(go[1]);
    char ok = 0;
    if (read(go[0], &ok, 1) != 1) _exit(127);  // watch could not follow it: never run unwatched
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    int e = errno;
    (void)!write(fds[1], &e, sizeof e);
    _exit(127);
  }
  close(fds[1]);
  close(go[0]);
  std::string not_followed = pid > 0 ? probe.follow(static_cast<std::uint32_t>(pid)) : "";
  if (pid > 0 && not_followed.empty()) (void)!write(go[1], "1", 1);
  close(go[1]);
  int e = 0;
  ssize_t n = pid > 0 ? read(fds[0], &e, sizeof e) : 0;
  close(fds[0]);
  if (pid < 0 || !not_followed.empty() || n == static_cast<ssize_t>(sizeof e)) {
    error = !not_followed.empty() ? not_followed : printable(command[0]) + ": " + std::strerror(pid < 0 ? errno : e);
    if (pid > 0) waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

struct Watched {
  std::vector<WatchSnapshot> snapshots;
  std::optional<int> command_status;  // the command's exit status (128+N for a signal)
  pid_t still_running = -1;           // the command, left running when watch stopped
};

// Sleeps until `until`, or until the command `child` ends (its exit status then), or, unless
// `through_stop`, a stop signal (its handler interrupts the wait; g_stop says so).
std::optional<int> wait_for_child(pid_t child, std::chrono::steady_clock::time_point until, bool through_stop = false) {
  const sigset_t chld = child_signal();
  for (;;) {
    if (child > 0) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    const auto left = until - std::chrono::steady_clock::now();
    if ((g_stop && !through_stop) || left <= std::chrono::steady_clock::duration::zero()) return std::nullopt;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    struct timespec ts {
      static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)
    };
    sigtimedwait(&chld, nullptr, &ts);  // SIGCHLD, the timeout, or EINTR from a stop signal
  }
}

// Watch stopped while the command runs. After --duration the command is the user's and keeps
// running. After a stop signal: Ctrl-C reached the whole process group, so the command ends on its
// own; a signal sent to p2pcheck alone (kill, timeout, systemd) is passed on after a moment. Either
// way watch never waits without bound: a command that outlives that is reported still running.
void finish_command(pid_t child, Watched& out) {
  using namespace std::chrono_literals;
  auto wait = [&](std::chrono::seconds s) {
    out.command_status = wait_for_child(child, std::chrono::steady_clock::now() + s, true);
    return out.command_status.has_value();
  };
  if (g_stop && !wait(2s)) {
    kill(child, g_stop);
    wait(10s);
  }
  if (!out.command_status) out.still_running = child;
}

// Polls the probe every interval until the command ends, --duration passes or a signal arrives.
Watched watch_loop(WatchProbe& probe, const GlobalOptions& o, const WatchOptions& w, const WatchFacts& facts,
                   const MachineState& state, const KernelRules& rules, pid_t child) {
  Watched out;
  WatchSnapshot previous = probe.poll();
  const auto start = std::chrono::steady_clock::now();
  bool header_printed = false;
  const WatchFilter filter = filter_of(o, w);
  while (!g_stop) {
    const auto tick =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(w.interval_s));
    if (std::optional<int> status = wait_for_child(child, std::chrono::steady_clock::now() + tick)) {
      out.command_status = status;
      child = -1;
    }
    WatchSnapshot current = probe.poll();
    WatchReport interval = build_watch_report(watch_delta(previous, current), facts, state, rules, filter);
    if (w.json_lines) {
      std::cout << json_text(watch_interval_json(interval, current.seconds), -1) << "\n" << std::flush;
    } else if (!o.json) {
      std::string lines = watch_interval_text(interval, clock_text());
      if (!lines.empty() && !header_printed) {
        std::cout << watch_interval_header();
        header_printed = true;
      }
      std::cout << lines << std::flush;
    }
    // Past the recording's bound only the newest is kept: the counters are cumulative.
    if (out.snapshots.size() >= kMaxRecordedSnapshots) out.snapshots.pop_back();
    out.snapshots.push_back(current);
    previous = std::move(current);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (out.command_status || (w.duration_s && elapsed >= *w.duration_s)) break;
  }
  if (child > 0) {
    finish_command(child, out);
    out.snapshots.push_back(probe.poll());
  }
  return out;
}

int print_summary(const GlobalOptions& o, const WatchOptions& w, const WatchReport& report) {
  if (o.json || w.json_lines) {
    nlohmann::ordered_json j = watch_json(report);
    std::cout << (w.json_lines ? json_text(j, -1) : json_output(o, j)) << "\n";
  } else {
    std::cout << watch_text(report, text_style(o));
  }
  return exit_for(report.result);
}

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int run_replay(const GlobalOptions& o, const WatchOptions& w) {
  if (!w.command.empty()) throw UsageError("--replay judges a recording: it runs no command");
  WatchRecording rec = load_watch_recording(w.replay);
  std::unique_ptr<Source> source = open_source(o);
  MachineState state = load_machine_state(*source);
  KernelRules rules = kernel_rules_for(state.machine, std::nullopt);
  return print_summary(o, w, replay_watch_report(rec, state, rules, filter_of(o, w)));
}

}  // namespace

// Long: the steps of a live watch in the order they can stop it (input, environment, hooks, the
// probe's load, the command's start), each ending in the same summary with its reason.
int run_watch(const GlobalOptions& o, const WatchOptions& w) {
  if (!w.replay.empty()) return run_replay(o, w);
  if (!o.root.empty() || !o.dump.empty() || !o.plan.empty())
    throw UsageError("watch watches this machine's kernel; --root, --dump and --plan are for --replay");
  std::unique_ptr<Source> source = open_live_source();
  WatchEnvironment env = read_watch_environment(*source);
  std::unique_ptr<DeviceActions> actions = open_live_device_actions();
  MachineState state = load_machine_state(*source);
  KernelRules rules = kernel_rules_for(state.machine, std::nullopt);
  WatchFacts facts;
  facts.kernel_release = env.kernel_release;
  facts.lockdown = env.lockdown;
  facts.nvidia_fs = env.nvidia_fs;
  facts.cannot_watch = cannot_watch_reason(env, actions->is_root());
  std::unique_ptr<WatchProbe> probe;
  if (!facts.cannot_watch) {
    facts.hooks = select_watch_hooks(*parse_btf(env.btf.bytes, kVmlinuxBtfPath));
    WatchStart start = actions->start_watch(facts.hooks);
    facts.hooks = start.hooks;
    if (start.probe)
      probe = std::move(start.probe);
    else
      facts.cannot_watch = watch_start_failure(start.error, start.error_number);
  }
  Watched watched;
  if (probe) {
    install_stop_signals();
    pid_t child = -1;
    std::string error;
    if (!w.command.empty()) {
      if ((child = start_command(w.command, *probe, error)) < 0) throw Error("watch", error);
      facts.command = WatchCommand{static_cast<std::uint32_t>(child), w.command[0]};
    }
    watched = watch_loop(*probe, o, w, facts, state, rules, child);
  }
  if (!probe && !w.command.empty())
    std::cerr << "p2pcheck: watch: " << printable(w.command[0]) << " was not run: nothing could watch it\n";
  WatchSnapshot last = watched.snapshots.empty() ? WatchSnapshot{} : watched.snapshots.back();
  WatchReport report = build_watch_report(last, facts, state, rules, filter_of(o, w));
  if (!w.record.empty())
    write_whole_file(w.record, json_text(watch_recording_json({facts, watched.snapshots}), 1) + "\n",
                     "watch recording");
  if (watched.command_status && !o.json && !w.json_lines)
    std::cout << "command exited with status " << *watched.command_status << "\n";
  if (watched.still_running > 0)
    std::cerr << "p2pcheck: watch: stopped watching; " << printable(w.command[0]) << " (pid " << watched.still_running
              << ") is still running\n";
  return print_summary(o, w, report);
}

}  // namespace p2pcheck::cli
