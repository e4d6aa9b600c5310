// `p2pcheck slurm features|health`: the two programs Slurm runs on a node. `features` is a
// node_features/helpers Helper (slurmd runs it with no argument and reads one feature a line);
// `health` is a HealthCheckProgram that drains the node when its result got worse than a baseline
// and resumes it when fixed (fleet/slurm_health.h decides; scontrol is run here, by argv).
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "host_input.h"
#include "p2pcheck/fleet/node_features.h"
#include "p2pcheck/fleet/printable_summary.h"
#include "p2pcheck/fleet/slurm_health.h"
#include "p2pcheck/live/kmod_control.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"

namespace p2pcheck::cli {

namespace {

struct HealthOptions {
  std::string baseline, node, scontrol = "scontrol", unreadable = "drain";
  bool dry_run = false;
};

int run_features(const GlobalOptions& o, const std::vector<std::string>& asked) {
  // slurmd runs a Helper with a feature's name to switch the node to it (before a reboot): a P2P
  // verdict is the hardware's and the kernel's, not a mode, so that is refused.
  if (!asked.empty()) {
    std::cerr << "p2pcheck: slurm features: '" << printable(asked.front())
              << "' cannot be switched on: P2P features describe the PCI topology and the kernel; change those\n";
    return kExitFail;
  }
  try {
    std::cout << slurm_features_text(node_features(selected_host(o).summary));
    return kExitOk;
  } catch (const std::exception& e) {
    // Not known is a feature of its own: a job asking for p2p_gpu_nvme never lands here.
    std::cout << slurm_features_text(NodeFeatures{Result::kUnknown, P2pClass::kUnknown});
    std::cerr << "p2pcheck: slurm features: " << printable(e.what()) << "\n";
    return kExitInput;
  }
}

// slurmd names the node to its HealthCheckProgram in SLURMD_NODENAME; else the short host name.
std::string node_name() {
  if (const char* env = std::getenv("SLURMD_NODENAME"); env && *env) return env;
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) throw Error("", "cannot tell this node's name; give --node NAME");
  std::string name = buf;
  return name.substr(0, name.find('.'));
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  return printable(out);
}

// The drift, or why an input could not be read.
std::optional<DriftReport> judge(const GlobalOptions& o, const HealthOptions& h, std::string& unreadable) {
  try {
    HostSummary baseline = named_host(h.baseline, "baseline", o);
    HostSummary current = selected_host(o).summary;
    make_printable(baseline);
    make_printable(current);
    return compare_hosts(baseline, current);
  } catch (const Error& e) {
    unreadable = e.what();
  } catch (const UsageError& e) {
    unreadable = e.what();
  }
  return std::nullopt;
}

int run_health(const GlobalOptions& o, const HealthOptions& h) {
  const std::string node = h.node.empty() ? node_name() : h.node;
  std::string unreadable;
  std::optional<DriftReport> drift = judge(o, h, unreadable);
  auto runner = system_command_runner();
  CommandResult shown = runner->run({h.scontrol, "show", "node", "-o", node});
  HealthInput in{drift ? &*drift : nullptr, unreadable, shown.exit_code == 0 && drained_by_p2pcheck(shown.output),
                 h.unreadable == "drain"};
  HealthDecision d = health_decision(in);
  std::cout << "p2pcheck slurm health: node " << printable(node) << ": " << d.message << "\n";
  std::vector<std::string> argv;
  if (d.action == HealthAction::kDrain) argv = scontrol_drain(h.scontrol, node, d.reason);
  if (d.action == HealthAction::kResume) argv = scontrol_resume(h.scontrol, node);
  if (!argv.empty()) {
    if (h.dry_run) {
      std::cout << "would run: " << command_line(argv) << "\n";
    } else if (CommandResult r = runner->run(argv); r.exit_code != 0) {
      std::cerr << "p2pcheck: slurm health: " << command_line(argv) << " failed (exit " << r.exit_code
                << "): " << printable(r.output) << "\n";
      return kExitInput;
    } else {
      std::cout << "ran: " << command_line(argv) << "\n";
    }
  }
  if (d.unreadable) return kExitInput;
  return drift->overall == Change::kWorse ? kExitFail : kExitOk;
}

}  // namespace

Command add_slurm_command(CLI::App& app, const GlobalOptions& o) {
  auto* slurm = app.add_subcommand("slurm", "Slurm's node_features/helpers Helper and HealthCheckProgram");
  slurm->require_subcommand(1);
  slurm->fallthrough();
  auto* features = slurm->add_subcommand(
      "features", "print this node's P2P features, one a line (p2p_gpu_nvme, p2p_partial, p2p_none, ...)");
  auto* health = slurm->add_subcommand(
      "health", "drain this node when its result got worse than --baseline, resume it when fixed (scontrol)");
  // Static: CLI11 fills it during parse, after this function has returned.
  static HealthOptions h;
  static std::vector<std::string> asked;
  features->add_option("feature", asked, "(slurmd's request to switch to a feature: refused, exit 1)")
      ->option_text("[FEATURE]");
  health->add_option("--baseline", h.baseline, "the saved check --json (or capture) accepted for this node")
      ->required()
      ->option_text("FILE");
  health->add_option("--node", h.node, "the node's Slurm name (default: $SLURMD_NODENAME, else the short host name)")
      ->option_text("NAME");
  health->add_option("--scontrol", h.scontrol, "the scontrol to run (default: scontrol in PATH)")->option_text("PATH");
  health->add_option("--unreadable", h.unreadable, "when an input cannot be read: drain (default) or keep the node")
      ->check(CLI::IsMember({"drain", "keep"}))
      ->option_text("drain|keep");
  health->add_flag("--dry-run", h.dry_run, "say what scontrol would be run, run nothing");
  for (auto* sub : {features, health}) sub->fallthrough();
  auto run = [&o, features, health]() -> int {
    if (features->parsed()) return run_features(o, asked);
    if (health->parsed()) return run_health(o, h);
    return kExitUsage;
  };
  return {slurm, run};
}

}  // namespace p2pcheck::cli
