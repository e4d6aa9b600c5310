// The kernel's P2PDMA path rules (drivers/pci/p2pdma.c), as a pure walk over the topology.
#pragma once

#include <vector>

#include "p2pcheck/model/topology.h"

namespace p2pcheck {

// What calc_map_type_and_dist() finds before any policy: the common upstream bridge, the distance
// and the devices whose ACS redirect bits it counts.
struct P2pWalk {
  const Function* provider = nullptr;
  const Function* client = nullptr;
  // The first device of the provider's pci_upstream_bridge() chain that is also on the client's
  // chain; nullptr when the chains never meet (different root ports or host bridges, root-bus devices).
  const Function* common = nullptr;
  int distance = 0;
  // provider, then its upstream bridges up to (without) `common`; the whole chain when none.
  std::vector<const Function*> provider_side;
  std::vector<const Function*> client_side;  // likewise from the client
  // Devices the kernel checks for ACS redirect, in the order it lists them in its warning:
  // provider side up to and including `common`, then the client side below `common`.
  // Only filled when a common bridge exists (without one the kernel does not consult ACS).
  std::vector<const Function*> acs_checked;
  std::vector<const Function*> acs_redirect;  // those with RR, CR or EC set in ACS Control
  std::vector<const Function*> acs_unknown;   // those whose ACS state could not be read (needs root)
};

// `provider` is the device whose memory is used (the GPU's VRAM BAR, an NVMe CMB), `client` the
// device that DMAs to it. The result is the same either way round except the order of acs_checked.
P2pWalk walk_p2p(const Topology& topo, const Function& provider, const Function& client);

}  // namespace p2pcheck
