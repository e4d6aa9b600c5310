// Machines "of the same build": a hash of the PCI tree's shape and what sits in it, so forty
// identical servers (plain or redacted captures, different host names and serials) fall in one
// group and a server with a card in another slot does not.
#pragma once

#include <string>

#include "p2pcheck/model/topology.h"

namespace p2pcheck {

// The tree as text: each host bridge's subtree, each function as vendor:device, class and PCIe port
// type with its children inside, siblings in a canonical (sorted) order. Bus numbers, BDFs,
// serials, drivers, link state and ACS settings are left out: they differ between identical
// machines (enumeration, firmware settings) while the build is the same.
std::string topology_shape(const Topology& topo);
// 16 hex digits: FNV-1a (64 bit) of topology_shape().
std::string topology_fingerprint(const Topology& topo);

}  // namespace p2pcheck
