// `p2pcheck kmod status|load|unload`: helps the administrator get the p2pprobe module in place.
// Loading and unloading run modprobe/insmod/rmmod through a small runner interface tests fake.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

struct CommandResult {
  int exit_code = -1;  // -1: could not be started
  std::string output;  // stdout and stderr together
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual CommandResult run(const std::vector<std::string>& argv) = 0;
};
std::unique_ptr<CommandRunner> system_command_runner();

struct KmodStatus {
  bool loaded = false;                     // in /proc/modules
  std::string state;                       // "Live", "Loading", ...
  bool device_present = false;             // /dev/p2pprobe exists
  std::optional<ModuleInfo> info;          // what the module says about itself
  std::string info_error;                  // why it could not be asked (not root, old module)
  std::vector<std::string> modules_found;  // p2pprobe.ko files that `load` would use, best first
  bool p2pdma_in_kernel = false;           // CONFIG_PCI_P2PDMA of the running kernel, when known
};

// Where a built module may live: next to the binary's source tree (build/ -> ../kmod), an
// installed copy, and where DKMS (the p2pprobe-dkms package) installs it for the running kernel.
// `root` prefixes the system paths (tests).
std::vector<std::string> module_search_paths(const std::string& exe_path, const std::string& kernel_release,
                                             const std::string& root = "");

KmodStatus kmod_status(Source& live, const std::vector<std::string>& search_paths);

struct KmodAction {
  bool ok = false;
  std::string command;  // what was run
  std::string message;  // what happened, for the user
};

// modprobe p2pprobe (DKMS-installed) unless `ko` names a file; else insmod the first module found.
KmodAction kmod_load(CommandRunner& runner, const KmodStatus& status, const std::optional<std::string>& ko);
KmodAction kmod_unload(CommandRunner& runner, const KmodStatus& status);

// For `check` on the live machine: the client when /dev/p2pprobe answers, else null and why.
std::unique_ptr<P2pprobeClient> open_kernel_module(std::string& problem);

}  // namespace p2pcheck
