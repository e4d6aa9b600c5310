// Files the CLI writes for the user (fleet's --junit/--html, watch's --record and --save-btf).
#pragma once

#include <string>

namespace p2pcheck::cli {

// `text` at `path`, whole or not at all: written to a temporary file beside it, then renamed.
// Throws Error naming `path` (and saying it could not write the `what`).
void write_whole_file(const std::string& path, const std::string& text, const std::string& what = "report");

}  // namespace p2pcheck::cli
