#include "p2pcheck/report/paths.h"

#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

using namespace report_detail;

json paths_json(const Topology& topo) {
  return {{"schema", "p2pcheck.paths"},
          {"schema_version", kJsonSchemaVersion},
          {"tool_version", kToolVersion},
          {"source", topo.source_description},
          {"config_space_complete", !topo.config_truncated},
          {"pairs", json::array()}};
}

std::string paths_text(const Topology& topo, const Inventory& inv, const std::vector<PairPath>& paths,
                       const TextStyle& style) {
  std::string out;
  out += "p2pcheck " + std::string(kToolVersion) + " — " + topo.source_description + "\n";
  out += std::to_string(paths.size()) + " GPU–NVMe pair(s)\n";
  if (topo.config_truncated)
    out += "note: config space beyond 64 bytes not readable (not root): ACS on these paths is unknown\n";
  for (const PairPath& p : paths) {
    const Function& gpu = topo.at(p.pair.gpu);
    out += "\n" + colored(style, "1",
                          "GPU " + name_prefix(gpu) + gpu.bdf.str() + " <-> " + nvme_name_prefix(inv, p.pair.nvme) +
                              (nvme_name_prefix(inv, p.pair.nvme).empty() ? name_prefix(topo.at(p.pair.nvme)) : "") +
                              p.pair.nvme.str());
    if (p.common)
      out += ": common upstream bridge " + p.common->bdf.str() + " (" + role_of(*p.common, inv) + ")";
    else
      out += ": no common upstream bridge, through host bridge" + std::string(p.host_bridges.size() > 1 ? "s " : " ") +
             p.host_bridges.front() + (p.host_bridges.size() > 1 ? " and " + p.host_bridges.back() : "");
    out += ", distance " + std::to_string(p.distance) + "\n";
    // Beside the route: how near the pair sits (model/locality.h), as nvidia-smi topo -m says it.
    out += "    locality " + printable(locality_text(classify_locality(topo, gpu, topo.at(p.pair.nvme)))) + "\n";
    std::vector<Hop> hops = path_hops(inv, p);
    for (size_t i = 0; i < hops.size(); ++i) {
      const Hop& hop = hops[i];
      const char* arrow = i == 0 ? "  " : (style.unicode ? "→ " : "> ");
      if (!hop.function) {
        out += "    " + std::string(arrow) + "host bridge " + hop.host_bridge + "\n";
        continue;
      }
      std::string line = "    " + std::string(arrow) + function_label(*hop.function) + "  <" + hop.role +
                         (hop.function == p.common ? ", common" : "") + ">";
      std::string link = link_text(hop.function->link);
      if (!link.empty()) line += "  " + link;
      std::string acs = acs_text(hop.function->acs);
      if (!acs.empty()) line += "  " + acs;
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace p2pcheck
