// Each p2pcheck subcommand registers itself on the app and says what it runs; main only dispatches.
// One file each: <name>_command.cc (kmod and verify keep their own headers for their tests).
#pragma once

#include "options.h"

namespace p2pcheck::cli {

Command add_check_command(CLI::App& app, const GlobalOptions& o);
Command add_explain_command(CLI::App& app, const GlobalOptions& o);
Command add_topo_command(CLI::App& app, const GlobalOptions& o);
Command add_paths_command(CLI::App& app, const GlobalOptions& o);
Command add_capture_command(CLI::App& app, const GlobalOptions& o);
Command add_mounts_command(CLI::App& app, const GlobalOptions& o);
Command add_diff_command(CLI::App& app, const GlobalOptions& o);
Command add_slurm_command(CLI::App& app, const GlobalOptions& o);

}  // namespace p2pcheck::cli
