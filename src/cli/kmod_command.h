// `p2pcheck kmod status|load|unload`: the CLI side of kmod_control.h.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace p2pcheck::cli {

// Registers the subcommand; `run` is set to the code to execute when it was chosen.
CLI::App* add_kmod_command(CLI::App& app, std::function<int()>& run, const bool& json);

}  // namespace p2pcheck::cli
