// What a user gets for a command line that cannot be parsed: the words as typed, the command or
// option most likely meant, and where to read more. CLI11's own text lists unexpected words in
// reverse order and suggests nothing.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace p2pcheck::cli {

// Levenshtein distance, for short command and option words only.
std::size_t edit_distance(const std::string& a, const std::string& b);

// For a mistyped command ("chek"): "unknown command 'chek'; did you mean 'check'?", or "".
std::string did_you_mean(const CLI::App& app, const std::vector<std::string>& extras);

// The message for a parse error that is not a request for help or the version; `args` is argv
// without the program name, as typed. Each line ends in "\n".
std::string usage_error_text(const CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args);

}  // namespace p2pcheck::cli
