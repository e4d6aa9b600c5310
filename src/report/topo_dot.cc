// The topology as Graphviz DOT. Deterministic (functions in address order), so it has goldens.
#include "p2pcheck/report/topo_dot.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "p2pcheck/report/common.h"
#include "p2pcheck/report/pair_route.h"
#include "p2pcheck/report/peer_summary.h"
#include "p2pcheck/report/switch_groups.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// What the pairs over a node or a link add up to.
struct Tally {
  int supported = 0, refused = 0, unknown = 0;
  int certain = 0;  // uses that are not "only if an unreadable ACS redirects"
  void add(Verdict v, bool maybe = false) {
    (v == Verdict::kSupported ? supported : v == Verdict::kNotSupported ? refused : unknown)++;
    if (!maybe) ++certain;
  }
  bool used() const { return supported + refused + unknown > 0; }
  // green: all supported; red: all refused; grey: all unknown; orange: a mix.
  const char* colour() const {
    int kinds = (supported > 0) + (refused > 0) + (unknown > 0);
    if (kinds > 1) return "darkorange";
    return supported ? "forestgreen" : refused ? "red3" : "grey50";
  }
  const char* fill() const {
    int kinds = (supported > 0) + (refused > 0) + (unknown > 0);
    if (kinds > 1) return "#ffe4b5";
    return supported ? "#c8f0c8" : refused ? "#f8c8c8" : "#e0e0e0";
  }
};

// A DOT string literal: bounded at 200 bytes without cutting a UTF-8 character (Graphviz reads a
// file with one broken character as Latin-1), control characters escaped as every output shows
// names from input (printable.h), then quotes and backslashes escaped for DOT.
std::string dot_string(const std::string& text) {
  std::string out = "\"";
  for (char c : printable(utf8_prefix(text, 200))) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Labels join lines with DOT's own "\n" escape, added after quoting each line.
std::string label(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    std::string q = dot_string(line);
    out += (out.empty() ? "" : "\\n") + q.substr(1, q.size() - 2);
  }
  return "\"" + out + "\"";
}

std::string node_id(const Function& fn) {
  std::string id = "f_" + fn.bdf.str();
  for (char& c : id)
    if (c == ':' || c == '.') c = '_';
  return id;
}
std::string host_bridge_id(const std::string& hb) {
  std::string id = "hb_" + hb;
  for (char& c : id)
    if (c == ':') c = '_';
  return id;
}
std::string upper_id(const Function& lower, const Function* upper) {
  return upper ? node_id(*upper) : host_bridge_id(lower.host_bridge);
}

std::string ids(const Function& fn) { return hex(fn.vendor, 4) + ":" + hex(fn.device, 4); }

// The device's name from pci.ids, cut to keep the columns of the picture narrow.
std::string short_name(const Function& fn) {
  std::string name = pci_device_name(fn.vendor, fn.device);
  if (name.empty()) name = ids(fn);
  return name.size() > 32 ? std::string(utf8_prefix(name, 29)) + "..." : name;
}

int numa_of(const Function& fn) { return fn.numa_node >= 0 ? fn.numa_node : -1; }

// The legend under the picture (a Graphviz HTML label: our words and numbers only, no names).
std::string legend(std::size_t pairs, std::size_t hidden, bool paths_only) {
  auto swatch = [](const char* colour, const char* word) {
    return std::string("<font color=\"") + colour + "\"><b>&#9632; " + word + "</b></font>";
  };
  std::string first = std::to_string(pairs) + " pair(s); each link in the colour of the pairs that cross it: " +
                      swatch("forestgreen", "allowed") + " " + swatch("red3", "refused") + " " +
                      swatch("grey50", "unknown") + " " + swatch("darkorange", "some of each") +
                      "; dashed: crossed only if an unreadable ACS redirects";
  std::string second =
      "on each GPU and NVMe its peers by verdict and route: in switch (turns below the switch), redirected to host "
      "(ACS redirect sends it up through the root port),";
  std::string third =
      "via host bridge (no bridge in common), in switch or via host (ACS unread); red double border: ACS redirect; "
      "dashed box: NUMA node; (inferred): port type not in the input";
  std::string last = paths_only ? "only the functions on the pairs' routes are drawn"
                                : std::to_string(hidden) + " other PCI function(s) not drawn";
  return "<" + first + "<br align=\"left\"/>" + second + "<br align=\"left\"/>" + third + "<br align=\"left\"/>" +
         last + "<br align=\"left\"/>>";
}

class DotWriter {
 public:
  DotWriter(const CheckReport& report, const DotOptions& options)
      : r_(report), options_(options), summaries_(report.inv) {}

  std::string write() {
    route_pairs();
    select_nodes();
    std::string out = "graph p2pcheck {\n";
    out +=
        "  graph [rankdir=LR, nodesep=0.12, ranksep=0.25, fontname=\"Helvetica\", fontsize=10, labelloc=b, "
        "labeljust=l, label=" +
        legend(r_.pairs.size(), hidden_, options_.paths_only) + "];\n";
    out += "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=9];\n";
    out += "  edge [color=grey60];\n";
    if (cpu_used_.used()) out += "  cpu [shape=octagon, label=" + label({"CPU fabric", cpu_text()}) + "];\n";
    std::set<int> numas = {-1};  // first: what is in no box
    for (const Function* fn : shown_) numas.insert(numa_of(*fn));
    for (int numa : numas) {
      if (numa < 0) {
        out += nodes_of(numa, "  ");
        continue;
      }
      out += "  subgraph cluster_numa_" + std::to_string(numa) +
             " {\n    label=" + dot_string("NUMA node " + std::to_string(numa)) +
             "; labelloc=t; style=dashed; color=grey50;\n";
      out += nodes_of(numa, "    ") + "  }\n";
    }
    return out + edges() + "}\n";
  }

 private:
  // Each pair's route: what it colours, what its ends say, and (--paths) which functions to draw.
  void route_pairs() {
    for (const PairDecision& d : r_.pairs) {
      const PairWalk& walk = d.walk;
      summaries_.add(d);
      node_use_[walk.provider->bdf].add(d.verdict);
      node_use_[walk.client->bdf].add(d.verdict);
      for (const RouteLink& link : route_links(walk)) {
        link_use_[{upper_id(*link.lower, link.upper), node_id(*link.lower)}].add(d.verdict, link.only_if_redirected);
      }
      bool maybe = walk.route == RouteKind::kRedirectUnknown;
      for (const std::string& hb : walk.host_bridges) bridge_use_[hb].add(d.verdict, maybe);
      if (walk.host_bridges.size() == 2) {  // across the CPU fabric between two host bridges
        cpu_used_.add(d.verdict);
        for (const std::string& hb : walk.host_bridges) link_use_[{"cpu", host_bridge_id(hb)}].add(d.verdict);
      }
    }
  }

  // --paths: the functions on the routes; else the GPUs, the NVMe and every bridge above them.
  void select_nodes() {
    std::set<Bdf> keep;
    if (options_.paths_only)
      keep = functions_on_routes(r_.topo, r_.pairs);
    else
      for (const auto& [bdf, fn] : r_.topo.functions)
        if (r_.inv.is_gpu(bdf) || r_.inv.nvme_at(bdf))
          for (const Function* f : r_.topo.upstream_chain(fn)) keep.insert(f->bdf);
    for (const Bdf& bdf : keep) {
      const Function& fn = r_.topo.at(bdf);
      shown_.push_back(&fn);
      shown_bridges_.insert(fn.host_bridge);
    }
    switches_ = switch_groups(r_.topo, shown_);
    for (const SwitchGroup& group : switches_) {
      in_switch_[group.upstream->bdf] = &group;
      for (const Function* port : group.downstream) in_switch_[port->bdf] = &group;
    }
    hidden_ = r_.topo.functions.size() - shown_.size();
  }

  // The host bridges, functions and switches of one NUMA node (-1: where it is not known).
  std::string nodes_of(int numa, const std::string& indent) const {
    std::string out;
    for (const auto& [id, bridge] : r_.topo.host_bridges)
      if (shown_bridges_.count(id) && bridge_numa(bridge) == numa) out += indent + host_bridge_node(bridge) + "\n";
    for (const Function* fn : shown_)
      if (!in_switch_.count(fn->bdf) && numa_of(*fn) == numa) out += indent + function_node(*fn) + "\n";
    for (const SwitchGroup& group : switches_)
      if (switch_numa(group) == numa) out += switch_cluster(group, indent);
    return out;
  }

  // The NUMA node of the host bridge's own device, when it has one and it is known.
  int bridge_numa(const HostBridge& bridge) const {
    if (!bridge.bridge_device) return -1;
    auto dev = r_.topo.functions.find(*bridge.bridge_device);
    return dev == r_.topo.functions.end() ? -1 : numa_of(dev->second);
  }
  // A switch goes in a NUMA box only when all its shown ports agree.
  static int switch_numa(const SwitchGroup& group) {
    int numa = numa_of(*group.upstream);
    for (const Function* port : group.downstream)
      if (numa_of(*port) != numa) return -1;
    return numa;
  }

  std::string switch_cluster(const SwitchGroup& group, const std::string& indent) const {
    const Function& usp = *group.upstream;
    std::vector<std::string> title = {"switch " + ids(usp)};
    if (!pci_device_name(usp.vendor, usp.device).empty()) title.push_back(short_name(usp));
    std::string out = indent + "subgraph cluster_" + node_id(usp) + " {\n" + indent + "  label=" + label(title) +
                      "; labelloc=t; style=rounded; color=grey40;\n";
    out += indent + "  " + function_node(usp) + "\n";
    for (const Function* port : group.downstream) out += indent + "  " + function_node(*port) + "\n";
    return out + indent + "}\n";
  }

  std::string cpu_text() const {
    const CpuInfo& cpu = r_.machine.cpu;
    if (cpu.vendor_id.empty()) return "CPU unknown";
    char family[16];
    std::snprintf(family, sizeof family, "0x%x", cpu.family);
    return cpu.vendor_id + " family " + family;
  }

  std::string host_bridge_node(const HostBridge& bridge) const {
    std::vector<std::string> lines = {"host bridge " + bridge.id};
    if (bridge.bridge_device) {
      const Function& dev = r_.topo.at(*bridge.bridge_device);
      std::string name = pci_device_name(dev.vendor, dev.device);
      lines.push_back(name.empty() ? ids(dev) : ids(dev) + " " + short_name(dev));
    } else {
      lines.push_back(bridge.bridge_device_unknown ? "host bridge device unknown" : "no host bridge device");
    }
    auto use = bridge_use_.find(bridge.id);
    std::string attrs =
        "shape=box3d, style=filled, fillcolor=" + dot_string(use != bridge_use_.end() ? use->second.fill() : "white");
    return host_bridge_id(bridge.id) + " [" + attrs + ", label=" + label(lines) + "];";
  }

  // A port's role; inside a switch's box "upstream port" or "downstream port" is enough, and
  // where the input has no port type the role says it was inferred from the tree.
  std::string role(const Function& fn) const {
    auto group = in_switch_.find(fn.bdf);
    if (group == in_switch_.end()) return role_of(fn, r_.inv);
    std::string role = group->second->upstream == &fn ? "upstream port" : "downstream port";
    return fn.port_type == PortType::kUnknown ? role + " (inferred)" : role;
  }

  std::string function_node(const Function& fn) const {
    std::vector<std::string> lines;
    std::string attrs;
    bool gpu = r_.inv.is_gpu(fn.bdf), nvme = r_.inv.nvme_at(fn.bdf) != nullptr;
    if (gpu || nvme) {
      lines = {(gpu ? "GPU " : nvme_name_prefix(r_.inv, fn.bdf)) + fn.bdf.str(), short_name(fn)};
      if (nvme) attrs = "shape=cylinder, ";
    } else {
      lines = {fn.bdf.str() + " " + role(fn)};
    }
    // A device below a port has a link: one the input does not tell is drawn unknown, not left out.
    std::string link = link_text(fn.link);
    if (!link.empty() || fn.parent) lines.push_back(link.empty() ? "link unknown" : link);
    if (fn.acs.redirect()) {
      lines.push_back("ACS redirect [" + acs_bits_str(fn.acs.control) + "]");
      // SVG: Graphviz writes `id` on the node's <g> (and `class` from 2.44 on), so pages and tests find it.
      attrs +=
          "color=red3, penwidth=2, peripheries=2, id=\"acs-redirect-" + node_id(fn) + "\", class=\"acs-redirect\", ";
    } else if (fn.acs.presence == Presence::kUnknown && !gpu && !nvme) {
      lines.push_back("ACS unknown");
      attrs += "style=\"rounded,filled,dashed\", ";
    }
    for (const std::string& line : summaries_.lines(fn.bdf)) lines.push_back(line);
    auto use = node_use_.find(fn.bdf);
    if (use != node_use_.end() && (gpu || nvme)) attrs += "fillcolor=" + dot_string(use->second.fill()) + ", ";
    return node_id(fn) + " [" + attrs + "label=" + label(lines) + "];";
  }

  // Links in the colour of the pairs over them; links no pair crosses stay thin and grey.
  std::string edges() const {
    std::string out;
    auto edge = [&](const std::string& upper, const std::string& lower) {
      std::string attrs;
      auto use = link_use_.find({upper, lower});
      if (use != link_use_.end()) {
        attrs = std::string(" [color=") + use->second.colour() + ", penwidth=2.5";
        if (use->second.certain == 0) attrs += ", style=dashed";
        attrs += ", id=" + dot_string("link-" + upper + "-" + lower) + "]";
      }
      out += "  " + upper + " -- " + lower + attrs + ";\n";
    };
    for (const auto& [id, bridge] : r_.topo.host_bridges)
      if (shown_bridges_.count(id) && link_use_.count({"cpu", host_bridge_id(id)})) edge("cpu", host_bridge_id(id));
    for (const Function* fn : shown_) edge(upper_id(*fn, r_.topo.upstream_bridge(*fn)), node_id(*fn));
    return out;
  }

  const CheckReport& r_;
  DotOptions options_;
  PeerSummaries summaries_;
  std::vector<const Function*> shown_;
  std::set<std::string> shown_bridges_;
  std::vector<SwitchGroup> switches_;
  std::map<Bdf, const SwitchGroup*> in_switch_;
  std::size_t hidden_ = 0;
  std::map<Bdf, Tally> node_use_;
  std::map<std::string, Tally> bridge_use_;
  std::map<std::pair<std::string, std::string>, Tally> link_use_;
  Tally cpu_used_;
};

}  // namespace

std::string topology_dot(const CheckReport& report, const DotOptions& options) {
  return DotWriter(report, options).write();
}

}  // namespace p2pcheck
