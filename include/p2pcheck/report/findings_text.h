// The "Kernel and stack" part of `check`'s text: its findings, problems first.
#pragma once

#include <string>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

// FAIL, then UNKNOWN, then WARN, each with its evidence and fix; PASS and INFO only when
// `verbose`.
std::string findings_text(const CheckReport& r, const TextStyle& style, bool verbose);

}  // namespace p2pcheck
