// `p2pcheck watch`: registration and the modes that only read the kernel's BTF (--hooks,
// --save-btf); watching and replaying are watch_run.cc.
#pragma once

#include "options.h"

namespace p2pcheck::cli {

Command add_watch_command(CLI::App& app, const GlobalOptions& o);

}  // namespace p2pcheck::cli
