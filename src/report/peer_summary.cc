#include "p2pcheck/report/peer_summary.h"

#include "p2pcheck/source/printable.h"

namespace p2pcheck {
namespace {

int verdict_order(Verdict v) { return v == Verdict::kSupported ? 0 : v == Verdict::kNotSupported ? 1 : 2; }
const char* verdict_word(int order) { return order == 0 ? "allowed" : order == 1 ? "refused" : "unknown"; }

}  // namespace

std::string PeerSummaries::peer_name(const Bdf& peer, bool peer_is_gpu) const {
  if (!peer_is_gpu)
    if (const NvmeController* c = inv_.nvme_at(peer); c && !c->name.empty()) return printable(c->name);
  return peer.short_str();
}

void PeerSummaries::add_side(const Bdf& device, const Bdf& peer, bool device_is_gpu, int verdict,
                             const std::string& route) {
  Device& d = devices_[device];
  d.gpu = device_is_gpu;
  d.groups[{verdict, route}].peers.push_back(peer_name(peer, !device_is_gpu));
  ++d.peers;
}

void PeerSummaries::add(const PairDecision& decision) {
  int verdict = verdict_order(decision.verdict);
  std::string words = route_words(decision.walk);
  add_side(decision.walk.pair().gpu, decision.walk.pair().nvme, true, verdict, words);
  add_side(decision.walk.pair().nvme, decision.walk.pair().gpu, false, verdict, words);
}

std::vector<std::string> PeerSummaries::lines(const Bdf& device) const {
  std::vector<std::string> out;
  auto found = devices_.find(device);
  if (found == devices_.end()) return out;
  const Device& d = found->second;
  for (const auto& [key, group] : d.groups) {
    std::string peers;
    const std::size_t n = group.peers.size();
    if (n == d.peers && n > 1) {
      peers = "all " + std::to_string(n) + (d.gpu ? " NVMe" : " GPUs");
    } else {
      for (std::size_t i = 0; i < n && i < kNamesShown; ++i) peers += (i ? ", " : "") + group.peers[i];
      if (n > kNamesShown) peers += " +" + std::to_string(n - kNamesShown);
    }
    out.push_back(std::string(verdict_word(key.first)) + " " + key.second + ": " + peers);
  }
  return out;
}

}  // namespace p2pcheck
