// Whether the user's locale says the terminal cannot show UTF-8 (LANG=C, LC_ALL=en_US.ISO-8859-1):
// text output is then plain ASCII, as with --ascii. No locale variable at all keeps UTF-8: that is
// how services and CI jobs run, and systemd treats an unset locale the same way.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace p2pcheck::cli {

inline bool locale_wants_ascii() {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"})  // POSIX's order: the first one set decides
    if (const char* value = std::getenv(name); value && *value) {
      std::string lower(value);
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      return lower.find("utf-8") == std::string::npos && lower.find("utf8") == std::string::npos;
    }
  return false;
}

}  // namespace p2pcheck::cli
