// The whole change one machine needs, once: one kernel command line (every refused pair's ACS
// ports merged with what the machine already boots with) and the other steps (kernel, drivers,
// storage, platform, facts to supply), each with what it costs. Made from the pairs' structured
// fixes (pair_fix.h) and the findings' fixes; check text and JSON print it, fleet groups by it.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/explain/vocabulary.h"
#include "p2pcheck/model/pci.h"

namespace p2pcheck {

struct HostFixStep {
  std::string kind;     // a pair fix kind (docs/json.md: same_switch, supply_facts, ...) or a finding id
  std::string subject;  // what it is about: "nvme6n1, nvme7n1", "8 pairs"; "" for the machine
  std::string text;     // what to do (a finding's fix says its cost in its own words)
  std::string cost;     // what it costs, where that is a fact of its own; "" when `text` says it
};

// The command line is held once, as data: the ports and ids its one parameter names; its text and
// cost are made from them (acs_param, acs_cost), never kept beside them.
struct HostFix {
  std::vector<Bdf> acs_ports;                       // pci=disable_acs_redir=: every port any refused pair needs
  std::set<std::pair<unsigned, unsigned>> acs_ids;  // and the vendor:device entries the booted list names
  std::vector<HostFixStep> steps;                   // everything else, in the order the report lists problems
  bool empty() const { return acs_ports.empty() && steps.empty(); }
};

HostFix host_fix(const CheckReport& report);
// The pci=disable_acs_redir= parameter of `fix` (its ports and ids): the whole kernel command line
// change; "" when it has no port.
std::string acs_param(const HostFix& fix);
// What that command line costs; "" when there is none.
std::string acs_cost(const HostFix& fix);
nlohmann::ordered_json host_fix_json(const HostFix& fix);
// "Fix for this host" and its lines, for the end of check's text; "" when nothing is to be done.
std::string host_fix_text(const HostFix& fix);
// Its lines alone ("- kernel command line: ...", "- storage.stack (nvme6n1): ..."), each after `indent`.
std::string host_fix_lines(const HostFix& fix, const std::string& indent);

}  // namespace p2pcheck
