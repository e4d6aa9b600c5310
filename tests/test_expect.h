// Assertions several test files share: what every non-PASS finding must carry, and the message of
// the UsageError an action throws.
#pragma once

#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck::testing {

// Every finding that is not a PASS shows its evidence; every FAIL and WARN says what to do.
inline void expect_evidence_on_non_pass(const std::vector<Finding>& fs) {
  for (const auto& f : fs) {
    if (f.level == Level::kPass) continue;
    EXPECT_FALSE(f.evidence.empty()) << f.id << " " << f.subject << ": " << f.message;
    if (f.level == Level::kFail || f.level == Level::kWarn) {
      EXPECT_FALSE(f.fix.empty()) << f.id << " " << f.subject;
    }
  }
}

// The UsageError `f` throws, or "" when it throws none.
inline std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace p2pcheck::testing
