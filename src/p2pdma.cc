// The kernel's P2PDMA decision. Read beside drivers/pci/p2pdma.c (6.1 :449-542, 6.12 :575-668):
// the walk below mirrors calc_map_type_and_dist() loop for loop.
#include "p2pcheck/p2pdma.h"

#include <algorithm>

namespace p2pcheck {
namespace {

// pci_bridge_has_acs_redir(): ACS capability present and RR, CR or EC enabled in ACS Control.
void count_acs(P2pWalk& walk, const Function* dev) {
  walk.acs_checked.push_back(dev);
  if (dev->acs.presence == Presence::kUnknown) walk.acs_unknown.push_back(dev);
  else if (dev->acs.redirect()) walk.acs_redirect.push_back(dev);
}

}  // namespace

P2pWalk walk_p2p(const Topology& topo, const Function& provider, const Function& client) {
  P2pWalk walk;
  walk.provider = &provider;
  walk.client = &client;
  std::vector<const Function*> a_chain = topo.upstream_chain(provider);
  std::vector<const Function*> b_chain = topo.upstream_chain(client);

  // while (a) { for (bb = b; bb; bb = pci_upstream_bridge(bb)) if (a == bb) goto check_b_path_acs; ... }
  for (size_t dist_a = 0; dist_a < a_chain.size(); ++dist_a) {
    const Function* a = a_chain[dist_a];
    auto hit = std::find(b_chain.begin(), b_chain.end(), a);
    if (hit == b_chain.end()) continue;
    size_t dist_b = static_cast<size_t>(hit - b_chain.begin());
    walk.common = a;
    walk.distance = static_cast<int>(dist_a + dist_b);
    walk.provider_side.assign(a_chain.begin(), a_chain.begin() + static_cast<long>(dist_a));
    walk.client_side.assign(b_chain.begin(), hit);
    // The kernel counts ACS on every `a` it visits (provider side and the common bridge), then on
    // the client side below the common bridge (check_b_path_acs).
    for (size_t i = 0; i <= dist_a; ++i) count_acs(walk, a_chain[i]);
    for (const Function* bb : walk.client_side) count_acs(walk, bb);
    return walk;
  }
  // No common bridge: distance is both whole chains (dist_a + the last dist_b); ACS not consulted.
  walk.distance = static_cast<int>(a_chain.size() + b_chain.size());
  walk.provider_side = a_chain;
  walk.client_side = b_chain;
  return walk;
}

}  // namespace p2pcheck
