#include "p2pcheck/live/kmod_control.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <sys/stat.h>
#include <sys/wait.h>

#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"
#include "uapi/p2pprobe.h"

namespace p2pcheck {
namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

class SystemRunner : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv) override {
    // posix popen would need a shell; build the argv by hand so nothing is ever interpreted.
    int pipefd[2];
    if (pipe(pipefd) != 0) return {};
    pid_t pid = fork();
    if (pid < 0) return {};
    if (pid == 0) {
      dup2(pipefd[1], 1);
      dup2(pipefd[1], 2);
      close(pipefd[0]);
      close(pipefd[1]);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(127);
    }
    close(pipefd[1]);
    CommandResult result;
    std::array<char, 4096> buf;
    ssize_t n;
    while ((n = read(pipefd[0], buf.data(), buf.size())) > 0) result.output.append(buf.data(), static_cast<size_t>(n));
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }
};

}  // namespace

std::unique_ptr<CommandRunner> system_command_runner() { return std::make_unique<SystemRunner>(); }

std::vector<std::string> module_search_paths(const std::string& exe_path, const std::string& kernel_release,
                                             const std::string& root) {
  std::string exe_dir = dirname(exe_path);
  std::string modules = root + "/lib/modules/" + kernel_release;
  return {
      exe_dir + "/../kmod/p2pprobe.ko",  // build/p2pcheck -> kmod/ of the source tree
      exe_dir + "/kmod/p2pprobe.ko",
      root + "/usr/lib/p2pcheck/p2pprobe.ko",
      // The p2pprobe-dkms package; DKMS compresses the module as the kernel's own are (xz on Debian 13).
      modules + "/updates/dkms/p2pprobe.ko",
      modules + "/updates/dkms/p2pprobe.ko.xz",
      modules + "/updates/dkms/p2pprobe.ko.zst",
      modules + "/updates/dkms/p2pprobe.ko.gz",
      modules + "/extra/p2pprobe.ko",
  };
}

KmodStatus kmod_status(Source& live, const std::vector<std::string>& search_paths) {
  KmodStatus status;
  if (FileRead r = live.read("/proc/modules"); r.ok()) {
    for (const std::string& line : split_lines(r.bytes)) {
      auto words = split_words(line);
      if (words.size() >= 5 && words[0] == "p2pprobe") {
        status.loaded = true;
        status.state = words[4];
      }
    }
  }
  Machine m = read_machine(live);
  if (auto v = m.config.get("CONFIG_PCI_P2PDMA")) status.p2pdma_in_kernel = *v == "y";
  status.device_present = live.exists(P2PPROBE_DEVICE_PATH);
  if (status.device_present) {
    try {
      P2pprobeClient client(open_ioctl_device(P2PPROBE_DEVICE_PATH));
      status.info = client.info();
    } catch (const Error& e) {
      status.info_error = e.what();
    }
  }
  for (const auto& path : search_paths)
    if (file_exists(path)) status.modules_found.push_back(path);
  return status;
}

KmodAction kmod_load(CommandRunner& runner, const KmodStatus& status, const std::optional<std::string>& ko) {
  KmodAction action;
  if (status.loaded) {
    action.ok = true;
    action.message = "p2pprobe is already loaded";
    return action;
  }
  std::vector<std::string> argv;
  if (ko) {
    if (!file_exists(*ko)) throw UsageError("--ko " + *ko + ": no such module file");
    argv = {"insmod", *ko};
  } else {
    // A DKMS-installed module is modprobe's to load; a built one needs insmod and its path.
    CommandResult probe = runner.run({"modprobe", "p2pprobe"});
    if (probe.exit_code == 0) {
      action.ok = true;
      action.command = "modprobe p2pprobe";
      action.message = "loaded p2pprobe with modprobe";
      return action;
    }
    if (status.modules_found.empty()) {
      action.command = "modprobe p2pprobe";
      action.message = "modprobe could not find p2pprobe (" + std::string(trim(probe.output)) +
                       ") and no built p2pprobe.ko was found: install the p2pprobe-dkms package (DKMS builds it "
                       "for each kernel with headers), build it with `make -C kmod` (kernel headers of the "
                       "running kernel needed), or pass --ko PATH";
      return action;
    }
    argv = {"insmod", status.modules_found.front()};
  }
  CommandResult r = runner.run(argv);
  action.command = argv[0] + " " + argv[1];
  action.ok = r.exit_code == 0;
  action.message = action.ok ? "loaded " + argv[1]
                             : argv[0] + " failed (exit " + std::to_string(r.exit_code) +
                                   "): " + std::string(trim(r.output)) +
                                   (r.output.find("Invalid module format") != std::string::npos
                                        ? " — the module was built for another kernel: rebuild it against this one"
                                        : "");
  return action;
}

KmodAction kmod_unload(CommandRunner& runner, const KmodStatus& status) {
  KmodAction action;
  if (!status.loaded) {
    action.ok = true;
    action.message = "p2pprobe is not loaded";
    return action;
  }
  CommandResult r = runner.run({"rmmod", "p2pprobe"});
  action.command = "rmmod p2pprobe";
  action.ok = r.exit_code == 0;
  action.message =
      action.ok ? "unloaded p2pprobe"
                : "rmmod failed: " + std::string(trim(r.output)) +
                      " (unbind devices bound to p2pprobe first: echo BDF > /sys/bus/pci/drivers/p2pprobe/unbind)";
  return action;
}

std::unique_ptr<P2pprobeClient> open_kernel_module(std::string& problem) {
  try {
    return std::make_unique<P2pprobeClient>(open_ioctl_device(P2PPROBE_DEVICE_PATH));
  } catch (const Error& e) {
    problem = e.what();
    return nullptr;
  }
}

}  // namespace p2pcheck
