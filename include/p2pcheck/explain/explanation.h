// One explanation per decision, which every view takes (check text and JSON, explain, paths,
// mounts, fleet, watch, verify): the rule that decided, what blocks an allowed path, the cause
// fleet groups by, and the fix, each as data from vocabulary.h's tables, with its words.
#pragma once

#include <string>
#include <vector>

#include "p2pcheck/explain/pair_fix.h"
#include "p2pcheck/explain/vocabulary.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

struct PairExplanation {
  Rule rule = Rule::kUnknown;
  std::string rule_text;            // the rule in words (rule_text.h)
  std::vector<Blocker> blocked_by;  // in blocked_by_of()'s order
  Cause cause = Cause::kNone;
  PairFix fix;
  // The ports whose ACS redirect sends a pair that meets below a switch up through the root complex
  // (JSON `acs_fix`), whatever the verdict; empty when none.
  std::vector<Bdf> acs_ports;
  std::string acs_cmdline() const;  // disable_acs_redir_param(acs_ports); "" when there are none
};

// The explanation of a pair's whole decision (PairList::operator[], decide_pair()): its words name
// the pair's route, so a class's shared decision (PairList::shared) is not enough. With
// PortNames::kListed its words and fix name no ACS redirect port (rule_text.h); acs_ports are kept.
PairExplanation explain_pair(const PairDecision& d, const KernelRules& rules, const Machine& machine,
                             PortNames names = PortNames::kAddresses);

// The rule a class's shared decision decides alone (for views of every pair of a fabric).
Rule rule_of(const PairDecision& d);
// The ports whose ACS redirect sends a pair that meets below a switch up through the root complex:
// PairExplanation::acs_ports, the disable_acs_redir fix's devices, fleet's ACS fix.
std::vector<Bdf> acs_redirect_ports(const PairDecision& d);

// What of a pair's decision its cause is taken from: the model's, or a saved check --json's members
// of the same names (verdict, path.verdict, blocked_by, acs_redirect, acs_unknown, host_check).
struct PairFacts {
  Verdict verdict = Verdict::kUnknown;
  Verdict path = Verdict::kUnknown;  // the PCI path alone under the kernel's rules
  std::vector<Blocker> blocked_by;
  bool acs_redirect = false, acs_unknown = false, host_checked = false;
};
PairFacts pair_facts(const PairDecision& d);  // needs the walk: a whole decision

// Why a pair that is not supported is not: the kernel's own cause (BlockerRow::cause) when the
// kernel blocks a path that is better than the pair's verdict, else the path's rule:
// kAcsRedirect, kHostBridge, kNotSupported, kAcsUnknown, kPathUnknown. kNone when supported.
Cause pair_cause(const PairFacts& pair);

}  // namespace p2pcheck
