// A decision's explanation, from its structured reasons (rules/verdict.h), never from its words.
#include "p2pcheck/explain/explanation.h"

#include <algorithm>
#include <utility>

#include "p2pcheck/explain/rule_text.h"

namespace p2pcheck {

namespace {

Rule rule_of_unknown(UnknownFact fact) {
  switch (fact) {
    case UnknownFact::kAcsControl: return Rule::kUnknownAcs;
    case UnknownFact::kCpu: return Rule::kUnknownCpu;
    case UnknownFact::kHostBridgeDevice: return Rule::kUnknownHostBridgeDevice;
    case UnknownFact::kP2pdmaConfig: return Rule::kUnknownP2pdmaConfig;
    case UnknownFact::kKernelTable: return Rule::kUnknownKernelTable;
  }
  return Rule::kUnknown;
}

// A path's verdict ranks above the overall one: the kernel itself made it worse.
int rank(Verdict v) { return v == Verdict::kSupported ? 2 : v == Verdict::kUnknown ? 1 : 0; }

// What blocks an allowed path: the kernel itself (no P2PDMA, known-bad, its config unread).
std::vector<Blocker> blocked_by_of(const PairDecision& d) {
  std::vector<Blocker> out;
  if (d.decided_by == DecidedBy::kNoP2pdmaConfig) out.push_back(Blocker::kKernelWithoutP2pdma);
  if (d.known_bad) out.push_back(Blocker::kKnownBadKernel);
  for (const Unknown& u : d.unknowns)
    if (u.fact == UnknownFact::kP2pdmaConfig) out.push_back(Blocker::kP2pdmaConfigUnknown);
  return out;
}

}  // namespace

Rule rule_of(const PairDecision& d) {
  switch (d.decided_by) {
    case DecidedBy::kCommonBridge: return Rule::kCommonBridge;
    case DecidedBy::kCpuAllows: return Rule::kCpuAllows;
    case DecidedBy::kAllowlistAllows: return Rule::kAllowlistAllows;
    case DecidedBy::kHostCheckFails: return Rule::kHostBridgeRefused;
    case DecidedBy::kEitherWay: return Rule::kEitherWay;
    case DecidedBy::kNoP2pdmaConfig: return Rule::kNoP2pdmaConfig;
    case DecidedBy::kCannotDecide: break;
  }
  return d.undecided_by ? rule_of_unknown(d.undecided_by->fact) : Rule::kUnknown;
}

PairFacts pair_facts(const PairDecision& d) {
  return {d.verdict,     d.path_verdict, blocked_by_of(d), !d.walk.acs_redirect.empty(), !d.walk.acs_unknown.empty(),
          d.host_checked};
}

Cause pair_cause(const PairFacts& p) {
  if (p.verdict == Verdict::kSupported) return Cause::kNone;
  // The path is better than the verdict: the kernel itself blocks it, and its finding is the cause.
  if (rank(p.path) > rank(p.verdict))
    for (const BlockerRow& b : blocker_rows())
      if (b.verdict == p.verdict &&
          std::find(p.blocked_by.begin(), p.blocked_by.end(), b.blocker) != p.blocked_by.end())
        return b.cause;
  if (p.verdict == Verdict::kNotSupported)
    return p.acs_redirect ? Cause::kAcsRedirect : p.host_checked ? Cause::kHostBridge : Cause::kNotSupported;
  return p.acs_unknown ? Cause::kAcsUnknown : Cause::kPathUnknown;
}

std::vector<Bdf> acs_redirect_ports(const PairDecision& d) {
  std::vector<Bdf> ports;
  if (d.walk.common)
    for (const Function* port : d.walk.acs_redirect) ports.push_back(port->bdf);
  return ports;
}

std::string PairExplanation::acs_cmdline() const { return acs_ports.empty() ? "" : disable_acs_redir_param(acs_ports); }

PairExplanation explain_pair(const PairDecision& d, const KernelRules& rules, const Machine& machine, PortNames names) {
  PairExplanation e;
  e.rule = rule_of(d);
  e.rule_text = rule_text(d, names);
  PairFacts facts = pair_facts(d);
  e.cause = pair_cause(facts);
  e.blocked_by = std::move(facts.blocked_by);
  e.fix = pair_fix(d, rules, machine, names);
  e.acs_ports = acs_redirect_ports(d);
  return e;
}

}  // namespace p2pcheck
