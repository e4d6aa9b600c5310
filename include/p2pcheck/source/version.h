// The tool's version, stamped into every JSON document, capture manifest and --version.
#pragma once

namespace p2pcheck {

inline constexpr const char* kToolVersion = "0.1.0";

}  // namespace p2pcheck
