// What to do about one pair, once: the structured fix behind the text's "fix" line and JSON's
// `fix` (kind, kernel command line, devices, words), and the pair's stable `rule_id`.
#pragma once

#include <string>
#include <vector>

#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// The stable name of the rule that decided a pair (docs/json.md "rule_id"), from DecidedBy and,
// when it could not decide, the fact that was missing.
const char* rule_id(const PairDecision& d);

struct PairFix {
  // docs/json.md: disable_acs_redir, same_host_bridge, same_switch, kernel_with_p2pdma,
  // other_kernel, supply_facts, full_config_space, kernel_config; empty when nothing is to be done.
  std::string kind;
  std::string kernel_cmdline;   // disable_acs_redir: "pci=disable_acs_redir=0000:40:01.1;..."
  std::vector<Bdf> devices;     // the devices the fix acts on (the ports, or the GPU and NVMe to move)
  std::string text;             // one line, as the text report prints it after "fix"
  bool moves_the_pair = false;  // `devices` are the pair's own GPU and NVMe (same_host_bridge, same_switch)
  bool empty() const { return kind.empty(); }
};

// `machine` says which facts the source's format could not carry (supply_facts: --cpu,
// --assume-kernel). Known-bad kernels get other_kernel here; the text prints that once for all pairs.
PairFix pair_fix(const PairDecision& d, const KernelRules& rules, const Machine& machine);

}  // namespace p2pcheck
