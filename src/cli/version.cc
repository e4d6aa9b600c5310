#include "version.h"

// p2pcheck_revision.h is generated into the build tree at every build; only this file includes it,
// so a new revision recompiles one file.
#include "p2pcheck/source/version.h"
#include "p2pcheck_revision.h"

namespace p2pcheck::cli {

std::string version_text() { return std::string("p2pcheck ") + kToolVersion + " (git " + P2PCHECK_GIT_REVISION + ")"; }

}  // namespace p2pcheck::cli
