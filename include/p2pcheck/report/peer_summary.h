// What a picture writes on each GPU and NVMe instead of a label per pair: its peers grouped by
// verdict and route, a few lines such as "allowed in switch: nvme0" or "refused redirected to
// host: all 9 NVMe". Built from the same decisions and routes the links are coloured by.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/report/pair_route.h"

namespace p2pcheck {

class PeerSummaries {
 public:
  explicit PeerSummaries(const Inventory& inv) : inv_(inv) {}
  void add(const PairDecision& decision);
  // The device's lines, allowed first, then refused, then unknown; none for a device in no pair.
  std::vector<std::string> lines(const Bdf& device) const;

  // Names listed on a line before the rest are counted ("nvme0, nvme1 +7").
  static constexpr std::size_t kNamesShown = 2;

 private:
  struct Group {
    std::vector<std::string> peers;
  };
  struct Device {
    std::map<std::pair<int, std::string>, Group> groups;  // (verdict order, route words)
    std::size_t peers = 0;
    bool gpu = false;
  };
  std::string peer_name(const Bdf& peer, bool peer_is_gpu) const;
  void add_side(const Bdf& device, const Bdf& peer, bool device_is_gpu, int verdict, const std::string& route);

  const Inventory& inv_;
  std::map<Bdf, Device> devices_;
};

}  // namespace p2pcheck
