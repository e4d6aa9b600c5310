// `p2pcheck explain`: one pair hop by hop, which devices the kernel looked at, what each said,
// which rule decided. Its --json form is pair_decision_json (report/check.h).
#pragma once

#include <string>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

std::string explain_text(const CheckReport& report, const PairDecision& pair, const TextStyle& style);

}  // namespace p2pcheck
