#include "version.h"

// p2pcheck_revision.h is generated into the build tree at every build; only this file includes it,
// so a new revision recompiles one file.
#include "p2pcheck/source/version.h"
#include "p2pcheck_revision.h"

namespace p2pcheck::cli {

// The portable build (cmake/portable.cmake) names itself: its libraries are inside, not the system's.
#ifdef P2PCHECK_PORTABLE_BUILD
constexpr const char* kBuildKind = ", portable build";
#else
constexpr const char* kBuildKind = "";
#endif

std::string version_text() {
  return std::string("p2pcheck ") + kToolVersion + " (git " + P2PCHECK_GIT_REVISION + kBuildKind + ")";
}

}  // namespace p2pcheck::cli
