// p2pcheck(1), made from the CLI11 registrations that --help prints and a roff template beside the
// code (src/cli/p2pcheck.1.in) holding the prose, exit codes and examples: an option added to a
// command lands in the page by itself, and a command without its section or example fails the build.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace p2pcheck::cli {

// In `source` (the template), `@COMMAND path@` (a subcommand path such as `kmod load`) starts that
// command's section (heading and description; its block runs to the next `@COMMAND` or `.SH`), and
// `@OPTIONS@` becomes the options of the command whose block it is in, or the app's own before any
// (a block without it gets its options at the end); `@VERSION@` becomes `version`. Throws Error (where = `source_name`)
// when a command has no `@COMMAND` line, a line names no command or one twice, a command's block has no example (.EX
// ... .EE) running it, or another line starts with `@`.
std::string man_page(const CLI::App& app, const std::string& source, const std::string& source_name,
                     const std::string& version);

}  // namespace p2pcheck::cli
