// `topo --svg FILE`: DOT rendered by Graphviz's `dot`, spawned here (only the CLI runs programs).
#pragma once

#include <string>

namespace p2pcheck::cli {

// Runs `dot -Tsvg` (found on PATH) over `dot_text` and puts the SVG at `file` through a temporary
// file in the same directory and a rename: a failed render leaves no partial file. Throws
// UsageError when `dot` is not installed, Error(file, ...) when writing or rendering fails.
void render_svg(const std::string& dot_text, const std::string& file);

}  // namespace p2pcheck::cli
