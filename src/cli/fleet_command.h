// `p2pcheck fleet` (fleet_command.cc): many machines in one report. A header of its own, like
// kmod's and verify's, so adding it did not touch what every other command includes.
#pragma once

#include "options.h"

namespace p2pcheck::cli {

Command add_fleet_command(CLI::App& app, const GlobalOptions& o);

}  // namespace p2pcheck::cli
