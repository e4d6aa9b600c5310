// Levels and their order: every layer that sums findings up (checks, report, verify) uses these.
#include "p2pcheck/model/finding.h"

namespace p2pcheck {

const char* to_string(Level level) {
  switch (level) {
    case Level::kPass: return "PASS";
    case Level::kInfo: return "INFO";
    case Level::kWarn: return "WARN";
    case Level::kFail: return "FAIL";
    case Level::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

int severity(Level l) {
  switch (l) {
    case Level::kPass: return 0;
    case Level::kInfo: return 1;
    case Level::kWarn: return 2;
    case Level::kUnknown: return 3;
    case Level::kFail: return 4;
  }
  return 0;
}

Level worst(const std::vector<Finding>& findings) {
  Level w = Level::kPass;
  for (const auto& f : findings)
    if (severity(f.level) > severity(w)) w = f.level;
  return w;
}

}  // namespace p2pcheck
