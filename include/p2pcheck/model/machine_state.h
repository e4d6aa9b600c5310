// The one load step every command starts from: the PCI tree, the roles in it and the facts outside
// it (kernel, CPU, OS), read through one Source. check, verify, capture and the CLI all call this,
// so what a command reads, and in which order, is decided here once.
#pragma once

#include <string>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

struct MachineState {
  std::string source;  // source.describe()
  Topology topo;
  Inventory inv;
  Machine machine;  // with Load::kPciOnly only its identity
};

// kEverything: every file any command reads (a capture records them all, so each command replays).
// kForCheck: the check's: the facts outside the tree, and of each function what the decisions and
// checks use (FunctionDetail::kForDecisions; BARs of the GPUs only). kPciOnly: topo and paths need
// only the PCI tree; reading /proc and /boot for them would make a replay of a bare PCI dump
// (lspci) report files it never needed.
enum class Load { kEverything, kForCheck, kPciOnly };

// Throws Error on unreadable input (naming the file), as the readers below it do.
MachineState load_machine_state(Source& source, Load what = Load::kEverything);

}  // namespace p2pcheck
