// `p2pcheck --version` and `-V`: the tool's version and the git revision it was built from.
#pragma once

#include <string>

namespace p2pcheck::cli {

// "p2pcheck 0.1.0 (git 2f408bcf27e5)", "... (git 2f408bcf27e5, portable build)"; the revision comes from
// cmake/git-revision.cmake.
std::string version_text();

}  // namespace p2pcheck::cli
