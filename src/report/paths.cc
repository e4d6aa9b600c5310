#include "p2pcheck/report/paths.h"

#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/model/route.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/pair_route.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

using namespace report_detail;

json paths_json(const Topology& topo) {
  return {{"schema", "p2pcheck.paths"},
          {"schema_version", kPathsJsonSchemaVersion},
          {"tool_version", kToolVersion},
          {"source", topo.source_description},
          {"config_space_complete", !topo.config_truncated},
          {"pairs", json::array()}};
}

namespace {

// "allowed (BUS_ADDR)", "REFUSED (NOT_SUPPORTED)", "UNDECIDED (path THRU_HOST_BRIDGE)": the check's
// verdict of the pair, then its rule.
std::string verdict_words(const PairDecision& d, const std::string& rule, const TextStyle& style) {
  std::string word = d.verdict == Verdict::kSupported      ? "allowed"
                     : d.verdict == Verdict::kNotSupported ? "REFUSED"
                                                           : "UNDECIDED";
  const char* color = d.verdict == Verdict::kSupported ? "32" : d.verdict == Verdict::kNotSupported ? "1;31" : "35";
  return colored(style, color, word) + " (" + to_string(d.map_type) + ") — " + rule;
}

// How the traffic goes, in words: where it turns, or up to which host bridge and why.
std::string route_text(const PairDecision& d) {
  const PairWalk& walk = d.walk;
  const std::string hbs = join(walk.host_bridges, " and ");
  std::string out;
  switch (walk.route) {
    case RouteKind::kBelowCommonBridge:
      out = "turns at the common upstream bridge " + d.walk.common->bdf.str() + ": it never reaches the root complex";
      break;
    case RouteKind::kRedirected:
      out = "ACS redirect on " + join_bdfs(d.walk.acs_redirect, ", ") + " sends it up to host bridge " + hbs +
            " and back down: it does not turn at the common bridge " + d.walk.common->bdf.str();
      break;
    case RouteKind::kRedirectUnknown:
      out = "turns at the common bridge " + d.walk.common->bdf.str() + ", or goes up to host bridge " + hbs +
            " if a port whose ACS could not be read redirects it";
      break;
    case RouteKind::kRootComplex:
      out = "no common upstream bridge: through host bridge" + std::string(walk.host_bridges.size() > 1 ? "s " : " ") +
            hbs;
      break;
  }
  if (d.verdict == Verdict::kNotSupported) out = "would go (the kernel refuses it, so no P2P traffic moves): " + out;
  return out;
}

// One hop line: arrow, function, its role, link and ACS.
std::string hop_line(const Function& fn, const Inventory& inv, const char* arrow, const std::string& note) {
  std::string line = "    " + std::string(arrow) + function_label(fn) + "  <" + role_of(fn, inv) + note + ">";
  if (std::string link = link_text(fn.link); !link.empty()) line += "  " + link;
  if (std::string acs = acs_text(fn.acs); !acs.empty()) line += "  " + acs;
  return line + "\n";
}

// The hops the traffic takes, GPU first: up its side, (up to the host bridge and back when ACS
// redirects), down the NVMe's side.
std::string hops_text(const Inventory& inv, const PairWalk& walk, const TextStyle& style) {
  const char* arrow = style.unicode ? "→ " : "> ";
  std::string out;
  const std::vector<const Function*>& up = walk.provider_side;
  for (std::size_t i = 0; i < up.size(); ++i) out += hop_line(*up[i], inv, i == 0 ? "  " : arrow, "");
  if (walk.common) {
    const bool redirected = walk.route == RouteKind::kRedirected;
    out += hop_line(*walk.common, inv, arrow, redirected ? ", common: redirected up" : ", common");
    if (redirected || walk.route == RouteKind::kRedirectUnknown) {
      const char* maybe = redirected ? "" : " (only if redirected)";
      for (const Function* above : walk.above_common) out += hop_line(*above, inv, arrow, maybe);
      out += "    " + std::string(arrow) + "host bridge " + walk.common->host_bridge + maybe + "\n";
      out += "    " + std::string(arrow) + "back down to " + walk.common->bdf.str() + maybe + "\n";
    }
  } else {
    for (const std::string& hb : walk.host_bridges) out += "    " + std::string(arrow) + "host bridge " + hb + "\n";
  }
  const std::vector<const Function*>& down = walk.client_side;
  for (auto it = down.rbegin(); it != down.rend(); ++it) out += hop_line(**it, inv, arrow, "");
  return out;
}

}  // namespace

std::string paths_text(const CheckReport& r, const TextStyle& style) {
  std::string out;
  out += "p2pcheck " + std::string(kToolVersion) + " — " + r.topo.source_description + "\n";
  out += std::to_string(r.pairs.size()) +
         " GPU–NVMe pair(s), each with the check's verdict and the way its "
         "traffic goes\n";
  if (r.topo.config_truncated)
    out += "note: config space beyond 64 bytes not readable (not root): ACS on these paths is unknown\n";
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const PairDecision d = r.pairs[i];
    const Function& gpu = r.topo.at(d.walk.pair().gpu);
    const Function& nvme = r.topo.at(d.walk.pair().nvme);
    const std::string nvme_prefix = nvme_name_prefix(r.inv, nvme.bdf);
    out += "\n" +
           colored(style, "1",
                   "GPU " + name_prefix(gpu) + gpu.bdf.str() + " <-> " + nvme_prefix +
                       (nvme_prefix.empty() ? name_prefix(nvme) : "") + nvme.bdf.str()) +
           ": " + verdict_words(d, rule_text(d), style) + "\n";
    out += "    route    " + route_text(d) + "; path distance " + std::to_string(d.walk.distance) + "\n";
    // Beside the route: how near the pair sits (model/locality.h), as nvidia-smi topo -m says it.
    out += "    locality " + printable(locality_text(pair_locality(r, i))) + "\n";
    out += hops_text(r.inv, d.walk, style);
  }
  return out;
}

}  // namespace p2pcheck
