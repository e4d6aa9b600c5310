// Link health on every hop of every pair.
#include "p2pcheck/checks/links.h"

#include <algorithm>
#include <iterator>
#include <unordered_set>
#include <utility>
#include <vector>

namespace p2pcheck {

std::optional<double> path_ceiling(const PairWalk& walk) {
  std::optional<double> ceiling;
  for (const Function* fn : walk_functions(walk)) {
    const LinkInfo& l = fn->link;
    if (!l.cur_speed || !l.cur_width) continue;
    double bw = lane_bytes_per_second(*l.cur_speed) * *l.cur_width;
    if (!ceiling || bw < *ceiling) ceiling = bw;
  }
  return ceiling;
}

namespace {

// Each function once, in the order of the paths (walk_functions(): the GPU up to the common
// bridge, then down to the NVMe), read off the pair's chains without making its route.
std::vector<const Function*> hops_in_path_order(const PairList& pairs) {
  std::unordered_set<const Function*> seen;
  std::vector<const Function*> order;
  auto visit = [&](const Function* hop) {
    if (seen.insert(hop).second) order.push_back(hop);
  };
  // A side (a device up to where its chains meet another's) is the same for many pairs: once each.
  SidesSeen sides(pairs);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Function* common = pairs.common(i);
    if (sides.first(pairs.gpu_end(i), common)) {
      for (const Function* hop : pairs.gpu_chain(i)) {
        if (hop == common) break;
        visit(hop);
      }
      if (common) visit(common);  // a side walked before visited its common bridge then
    }
    if (!sides.first(pairs.nvme_end(i), common)) continue;
    const std::vector<const Function*>& down = pairs.nvme_chain(i);
    auto end = common ? std::find(down.begin(), down.end(), common) : down.end();
    for (auto it = std::make_reverse_iterator(end); it != down.rend(); ++it) visit(*it);
  }
  return order;
}

Finding downtrained_finding(const Function& fn, const LinkCheck& link, const Inventory& inv) {
  Finding f{"link.downtrained", Level::kWarn, fn.bdf.str(), "", {}, ""};
  f.message = "link above " + role_of(fn, inv) + " " + fn.bdf.str() + " runs at " + link_text(fn.link) +
              ", both ends can do " + (link.capable_speed ? format_speed(*link.capable_speed) : "?") + " x" +
              (link.capable_width ? std::to_string(*link.capable_width) : "?");
  f.evidence.push_back(
      {fn.sysfs_path + "/current_link_speed", fn.link.cur_speed ? format_speed(*fn.link.cur_speed) : "?"});
  f.evidence.push_back(
      {fn.sysfs_path + "/current_link_width", fn.link.cur_width ? std::to_string(*fn.link.cur_width) : "?"});
  f.fix =
      "reseat the card or riser, check the slot's wiring and BIOS link settings; a downtrained link caps every "
      "transfer through it";
  return f;
}

}  // namespace

std::vector<Finding> check_links(const Topology& topo, const Inventory& inv, const PairList& pairs) {
  std::vector<Finding> out;
  std::size_t known = 0, unknown = 0;
  const Function* first_known = nullptr;
  for (const Function* hop : hops_in_path_order(pairs)) {
    const Function& fn = *hop;
    LinkCheck link = check_link(topo, fn);
    if (link.applies && !link.downtrained) {
      link.known ? ++known : ++unknown;
      if (link.known && !first_known) first_known = &fn;
    }
    if (link.downtrained) out.push_back(downtrained_finding(fn, link, inv));
  }
  if (!out.empty() || pairs.empty() || known + unknown == 0) return out;
  // "Not downtrained" is only a PASS where every link's speeds were read; unread ones are no evidence.
  Finding health{"link.health", Level::kPass, "", "no downtrained link on any GPU–NVMe path", {}, ""};
  if (first_known)
    health.evidence.push_back({first_known->sysfs_path + "/current_link_speed",
                               format_speed(*first_known->link.cur_speed) + " x" +
                                   std::to_string(*first_known->link.cur_width) + "; " + std::to_string(known) +
                                   " link(s) on the paths at the speed and width both ends can do"});
  if (unknown) {
    health.level = Level::kInfo;
    health.state = Provenance::kUnreadable;
    health.message = "link speed and width unknown on " + std::to_string(unknown) + " of " +
                     std::to_string(known + unknown) +
                     " link(s) on the GPU–NVMe paths (not in this input or not readable)" +
                     (known ? "; none of the other " + std::to_string(known) + " is downtrained" : "");
    if (health.evidence.empty()) health.evidence.push_back({"current_link_speed", "not read"});
  }
  out.push_back(health);
  return out;
}

}  // namespace p2pcheck
