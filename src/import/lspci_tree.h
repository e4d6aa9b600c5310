// `lspci -t` drawings: the kernel's own PCI hierarchy, as the lspci and nvidia-bug-report imports
// read it beside config space dumps or device lists.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "p2pcheck/model/pci.h"

namespace p2pcheck {

// `lspci -t` draws each bus's devices at the column where the bus's first connector stands; a
// bridge's "[sec-sub]" follows the bridge on the same line. Returns device -> upstream bridge
// (nullopt on a root bus). Throws Error naming `name` and the line (numbered from `first_line`) for a
// drawing it cannot follow or of more functions than a machine has.
std::map<Bdf, std::optional<Bdf>> parse_lspci_tree(const std::string& text, const std::string& name,
                                                   int first_line = 1);

}  // namespace p2pcheck
