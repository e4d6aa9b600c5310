#include "kmod_command.h"

#include <unistd.h>

#include <climits>
#include <iostream>
#include <nlohmann/json.hpp>

#include "p2pcheck/live/kmod_control.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck::cli {
namespace {

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("p2pcheck");
}

KmodStatus current_status() {
  auto live = open_live_source();
  Machine m = read_machine(*live);
  return kmod_status(*live, module_search_paths(self_exe(), m.kernel_release));
}

int print_status(const KmodStatus& s, const GlobalOptions& o) {
  if (o.json) {
    // The envelope every command's JSON has (docs/json.md); kmod status is always about this machine.
    nlohmann::ordered_json j = json_envelope("p2pcheck.kmod_status", open_live_source()->describe());
    j["loaded"] = s.loaded;
    j["state"] = s.state;
    j["device_present"] = s.device_present;
    j["modules_found"] = s.modules_found;
    j["kernel_p2pdma"] = s.p2pdma_in_kernel;
    if (s.info)
      j["module"] = {{"api_version", s.info->api_version},
                     {"version", s.info->module_version},
                     {"kernel_release", s.info->kernel_release},
                     {"p2pdma", s.info->p2pdma}};
    else
      j["module"] = nullptr;
    j["error"] = s.info_error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.info_error);
    std::cout << json_output(o, j) << "\n";
  } else {
    std::cout << "p2pprobe: " << (s.loaded ? "loaded (" + s.state + ")" : std::string("not loaded")) << "\n";
    std::cout << "/dev/p2pprobe: " << (s.device_present ? "present" : "absent") << "\n";
    if (s.info)
      std::cout << "module " << s.info->module_version << ", API " << s.info->api_version << ", kernel "
                << s.info->kernel_release
                << (s.info->p2pdma ? ", P2PDMA compiled in" : ", kernel WITHOUT CONFIG_PCI_P2PDMA") << "\n";
    if (!s.info_error.empty()) std::cout << "cannot ask it: " << s.info_error << "\n";
    if (s.modules_found.empty())
      std::cout << "no built p2pprobe.ko found (the p2pprobe-dkms package, or make -C kmod)\n";
    for (const auto& m : s.modules_found) std::cout << "module file: " << m << "\n";
  }
  return s.loaded && s.info ? 0 : 1;
}

int report(const KmodAction& a) {
  (a.ok ? std::cout : std::cerr) << (a.ok ? "" : "p2pcheck: ") << a.message << "\n";
  return a.ok ? 0 : 1;
}

}  // namespace

Command add_kmod_command(CLI::App& app, const GlobalOptions& o) {
  auto* kmod = app.add_subcommand("kmod", "the p2pprobe kernel module: status, load, unload (root)");
  kmod->require_subcommand(1);
  kmod->fallthrough();
  auto* status = kmod->add_subcommand("status", "is it loaded, does it answer, which module file would be used");
  auto* load = kmod->add_subcommand("load", "modprobe p2pprobe, else insmod the built kmod/p2pprobe.ko");
  auto* unload = kmod->add_subcommand("unload", "rmmod p2pprobe");
  // Static: CLI11 fills it during parse, after this function has returned.
  static std::string ko;
  load->add_option("--ko", ko, "the p2pprobe.ko file to insmod")->option_text("FILE");
  for (auto* sub : {status, load, unload}) sub->fallthrough();
  auto run = [&o, status, load, unload]() -> int {
    if (status->parsed()) return print_status(current_status(), o);
    auto runner = system_command_runner();
    if (load->parsed())
      return report(kmod_load(*runner, current_status(), ko.empty() ? std::nullopt : std::optional<std::string>(ko)));
    if (unload->parsed()) return report(kmod_unload(*runner, current_status()));
    return kExitUsage;
  };
  return {kmod, run};
}

}  // namespace p2pcheck::cli
