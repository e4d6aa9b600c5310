// `p2pcheck kmod status|load|unload`: the CLI side of kmod_control.h.
#pragma once

#include "options.h"

namespace p2pcheck::cli {

// Registers `kmod` with its status, load and unload subcommands (--json applies to status).
Command add_kmod_command(CLI::App& app, const GlobalOptions& o);

}  // namespace p2pcheck::cli
