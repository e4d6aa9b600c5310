// Link health on every hop of every pair.
#include "p2pcheck/checks/links.h"

#include <set>

namespace p2pcheck {

std::optional<double> path_ceiling(const PairPath& path) {
  std::optional<double> ceiling;
  for (const Function* fn : path_functions(path)) {
    const LinkInfo& l = fn->link;
    if (!l.cur_speed || !l.cur_width) continue;
    double bw = lane_bytes_per_second(*l.cur_speed) * *l.cur_width;
    if (!ceiling || bw < *ceiling) ceiling = bw;
  }
  return ceiling;
}

std::vector<Finding> check_links(const Topology& topo, const Inventory& inv, const std::vector<PairDecision>& pairs) {
  std::vector<Finding> out;
  std::set<const Function*> seen;
  for (const auto& d : pairs) {
    for (const Function* hop : path_functions(d.path)) {
      if (!seen.insert(hop).second) continue;
      const Function& fn = *hop;
      LinkCheck link = check_link(topo, fn);
      if (!link.downtrained) continue;
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
      out.push_back(f);
    }
  }
  if (out.empty() && !pairs.empty())
    out.push_back({"link.health", Level::kPass, "", "no downtrained link on any GPU–NVMe path", {}, ""});
  return out;
}

}  // namespace p2pcheck
