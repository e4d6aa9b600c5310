// What to do about one pair, once: the structured fix behind the text's "fix" line and JSON's
// `fix` (kind, kernel command line, devices, words), made from the decision's structured reasons.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/explain/vocabulary.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

struct PairFix {
  FixKind kind = FixKind::kNone;
  std::string kernel_cmdline;  // kDisableAcsRedir: "pci=disable_acs_redir=0000:40:01.1;..."
  std::vector<Bdf> devices;    // the devices the fix acts on (the ports, or the GPU and NVMe to move)
  std::string text;            // one line, as the text report prints it after "fix"
  bool empty() const { return kind == FixKind::kNone; }
  // `devices` are the pair's own GPU and NVMe (same_host_bridge, same_switch).
  bool moves_the_pair() const { return row(kind).moves_the_pair; }
  // `devices` are the pair's ACS redirect ports and `kernel_cmdline` their parameter (disable_acs_redir).
  bool acts_on_acs_ports() const { return kind == FixKind::kDisableAcsRedir; }
  // What it costs, where that is a fact of its own (the ACS list's IOMMU isolation); "" when none.
  std::string cost() const { return row(kind).cost ? row(kind).cost : ""; }
};

// `machine` says which facts the source's format could not carry (supply_facts: --cpu,
// --assume-kernel). Known-bad kernels get other_kernel here; the text prints that once for all pairs.
// Needs the pair's whole decision (its walk), not only its class's. With PortNames::kListed a
// disable_acs_redir fix names no port (no devices, no command line; words for the pair's listed
// ports): check --json's decisions rows.
PairFix pair_fix(const PairDecision& d, const KernelRules& rules, const Machine& machine,
                 PortNames names = PortNames::kAddresses);

// The kernel parameter that clears ACS redirect on `ports`, then on the vendor:device `ids` (the
// "pci:10b5:8747" entries a booted list keeps): "pci=disable_acs_redir=0000:03:09.0;pci:10b5:8747".
std::string disable_acs_redir_param(const std::vector<Bdf>& ports,
                                    const std::set<std::pair<unsigned, unsigned>>& ids = {});

}  // namespace p2pcheck
