// The topology as Graphviz DOT. Deterministic (functions in address order), so it has goldens.
#include "p2pcheck/report/topo_dot.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "p2pcheck/report/common.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// What the pairs over a node or an edge add up to.
struct Tally {
  int supported = 0, refused = 0, unknown = 0;
  void add(Verdict v) { (v == Verdict::kSupported ? supported : v == Verdict::kNotSupported ? refused : unknown)++; }
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

std::string ids(const Function& fn) { return hex(fn.vendor, 4) + ":" + hex(fn.device, 4); }

std::string short_name(const Function& fn) {
  std::string name = pci_device_name(fn.vendor, fn.device);
  if (name.empty()) name = ids(fn);
  return name.size() > 40 ? std::string(utf8_prefix(name, 37)) + "..." : name;
}

std::string verdict_word(Verdict v) {
  return v == Verdict::kSupported ? "supported" : v == Verdict::kNotSupported ? "refused" : "unknown";
}

class DotWriter {
 public:
  explicit DotWriter(const CheckReport& report) : r_(report) {}

  std::string write() {
    select_nodes();
    tally_pairs();
    std::string out = "graph p2pcheck {\n";
    out += "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=10, labelloc=b, label=" + legend() + "];\n";
    out += "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n";
    out += "  edge [fontname=\"Helvetica\", fontsize=9, color=grey60];\n";
    if (cpu_used_.used()) out += "  cpu [shape=octagon, label=" + label({"CPU fabric", cpu_text()}) + "];\n";
    for (const auto& [id, bridge] : r_.topo.host_bridges)
      if (shown_bridges_.count(id)) out += "  " + host_bridge_node(bridge) + "\n";
    for (const Function* fn : shown_)
      if (!in_switch(*fn)) out += "  " + function_node(*fn) + "\n";
    for (const auto& [bdf, ports] : switches_) {
      const Function& usp = r_.topo.at(bdf);
      out += "  subgraph cluster_" + node_id(usp) + " {\n    label=" + dot_string("switch " + ids(usp)) +
             "; labelloc=t; style=rounded; color=grey40;\n";
      out += "    " + function_node(usp) + "\n";
      for (const Function* port : ports) out += "    " + function_node(*port) + "\n";
      out += "  }\n";
    }
    out += edges();
    out += pair_edges();
    return out + "}\n";
  }

 private:
  // GPUs, NVMe, and every bridge with one of them below it; the host bridges they hang from.
  void select_nodes() {
    std::set<Bdf> keep;
    for (const auto& [bdf, fn] : r_.topo.functions) {
      if (!is_device(fn)) continue;
      for (const Function* f : r_.topo.upstream_chain(fn)) keep.insert(f->bdf);
    }
    for (const Bdf& bdf : keep) {
      const Function& fn = r_.topo.at(bdf);
      shown_.push_back(&fn);
      shown_bridges_.insert(fn.host_bridge);
      if (fn.port_type == PortType::kDownstreamPort)
        if (const Function* up = r_.topo.upstream_bridge(fn); up && up->port_type == PortType::kUpstreamPort)
          switches_[up->bdf].push_back(&fn);
    }
    for (const auto& [usp, ports] : switches_) {
      switch_ports_.insert(usp);
      for (const Function* p : ports) switch_ports_.insert(p->bdf);
    }
    hidden_ = r_.topo.functions.size() - shown_.size();
  }

  bool is_device(const Function& fn) const {
    return std::find(r_.inv.gpus.begin(), r_.inv.gpus.end(), fn.bdf) != r_.inv.gpus.end() || r_.inv.nvme_at(fn.bdf);
  }
  bool in_switch(const Function& fn) const { return switch_ports_.count(fn.bdf) != 0; }

  // Which nodes and edges each checked pair uses: both sides up to the common bridge, or up to
  // their host bridges (and across the CPU fabric between two).
  void tally_pairs() {
    for (const PairDecision& d : r_.pairs) {
      auto side = [&](const std::vector<const Function*>& chain) {
        for (std::size_t i = 0; i < chain.size(); ++i) {
          node_use_[chain[i]->bdf].add(d.verdict);
          std::string upper = i + 1 < chain.size() ? node_id(*chain[i + 1])
                              : d.walk.common      ? node_id(*d.walk.common)
                                                   : host_bridge_id(chain[i]->host_bridge);
          edge_use_[{upper, node_id(*chain[i])}].add(d.verdict);
        }
      };
      side(d.walk.provider_side);
      side(d.walk.client_side);
      if (d.walk.common) {
        node_use_[d.walk.common->bdf].add(d.verdict);
      } else if (!d.walk.provider_side.empty() && !d.walk.client_side.empty()) {
        const std::string& a = d.walk.provider_side.back()->host_bridge;
        const std::string& b = d.walk.client_side.back()->host_bridge;
        bridge_use_[a].add(d.verdict);
        bridge_use_[b].add(d.verdict);
        if (a != b) {
          cpu_used_.add(d.verdict);
          edge_use_[{"cpu", host_bridge_id(a)}].add(d.verdict);
          edge_use_[{"cpu", host_bridge_id(b)}].add(d.verdict);
        }
      }
    }
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
      lines.push_back(ids(dev) + " " + short_name(dev));
    } else {
      lines.push_back(bridge.bridge_device_unknown ? "host bridge device unknown" : "no host bridge device");
    }
    auto use = bridge_use_.find(bridge.id);
    std::string attrs =
        "shape=box3d, style=filled, fillcolor=" + dot_string(use != bridge_use_.end() ? use->second.fill() : "white");
    return host_bridge_id(bridge.id) + " [" + attrs + ", label=" + label(lines) + "];";
  }

  std::string function_node(const Function& fn) const {
    std::vector<std::string> lines;
    std::string attrs;
    bool gpu = std::find(r_.inv.gpus.begin(), r_.inv.gpus.end(), fn.bdf) != r_.inv.gpus.end();
    if (gpu) {
      lines = {"GPU " + fn.bdf.str(), short_name(fn)};
    } else if (r_.inv.nvme_at(fn.bdf)) {
      lines = {nvme_name_prefix(r_.inv, fn.bdf) + fn.bdf.str(), short_name(fn)};
      attrs = "shape=cylinder, ";
    } else {
      lines = {fn.bdf.str() + " " + role_of(fn, r_.inv)};
    }
    if (fn.acs.redirect()) {
      lines.push_back("ACS redirect [" + acs_bits_str(fn.acs.control) + "]");
      // SVG: Graphviz writes `id` on the node's <g> (and `class` from 2.44 on), so pages and tests find it.
      attrs +=
          "color=red3, penwidth=2, peripheries=2, id=\"acs-redirect-" + node_id(fn) + "\", class=\"acs-redirect\", ";
    } else if (fn.acs.presence == Presence::kUnknown && !gpu && !r_.inv.nvme_at(fn.bdf)) {
      lines.push_back("ACS unknown");
      attrs += "style=\"rounded,filled,dashed\", ";
    }
    auto use = node_use_.find(fn.bdf);
    if (use != node_use_.end() && (gpu || r_.inv.nvme_at(fn.bdf)))
      attrs += "fillcolor=" + dot_string(use->second.fill()) + ", ";
    return node_id(fn) + " [" + attrs + "label=" + label(lines) + "];";
  }

  std::string edges() const {
    std::string out;
    auto edge = [&](const std::string& upper, const std::string& lower, const std::string& text) {
      std::string attrs;
      if (!text.empty()) attrs = "label=" + dot_string(text);
      auto use = edge_use_.find({upper, lower});
      if (use != edge_use_.end())
        attrs += std::string(attrs.empty() ? "" : ", ") + "color=" + use->second.colour() + ", penwidth=2.5";
      out += "  " + upper + " -- " + lower + (attrs.empty() ? "" : " [" + attrs + "]") + ";\n";
    };
    for (const auto& [id, bridge] : r_.topo.host_bridges)
      if (cpu_used_.used() && shown_bridges_.count(id) && edge_use_.count({"cpu", host_bridge_id(id)}))
        edge("cpu", host_bridge_id(id), "");
    for (const Function* fn : shown_) {
      const Function* up = r_.topo.upstream_bridge(*fn);
      edge(up ? node_id(*up) : host_bridge_id(fn->host_bridge), node_id(*fn), link_text(fn->link));
    }
    return out;
  }

  // Each pair as its own dashed edge, when there are few enough to read.
  std::string pair_edges() const {
    if (r_.pairs.size() > kDotPairEdges) return "";
    std::string out;
    for (const PairDecision& d : r_.pairs) {
      const Function& gpu = r_.topo.at(d.path.pair.gpu);
      const Function& nvme = r_.topo.at(d.path.pair.nvme);
      Tally t;
      t.add(d.verdict);
      out += "  " + node_id(gpu) + " -- " + node_id(nvme) + " [style=dashed, constraint=false, color=" + t.colour() +
             ", fontcolor=" + t.colour() +
             ", label=" + dot_string(verdict_word(d.verdict) + " " + to_string(d.map_type)) + "];\n";
    }
    return out;
  }

  std::string legend() const {
    std::string text = std::to_string(r_.pairs.size()) + " pair(s): green supported, red refused, grey unknown, " +
                       "orange mixed; double red border: ACS redirect";
    if (r_.pairs.size() > kDotPairEdges) text += "; pairs summarised on their hops (p2pcheck explain shows each)";
    if (hidden_) text += "; " + std::to_string(hidden_) + " other PCI function(s) not drawn";
    return dot_string(text);
  }

  const CheckReport& r_;
  std::vector<const Function*> shown_;
  std::set<std::string> shown_bridges_;
  std::map<Bdf, std::vector<const Function*>> switches_;  // upstream port -> its downstream ports
  std::set<Bdf> switch_ports_;
  std::size_t hidden_ = 0;
  std::map<Bdf, Tally> node_use_;
  std::map<std::string, Tally> bridge_use_;
  std::map<std::pair<std::string, std::string>, Tally> edge_use_;
  Tally cpu_used_;
};

}  // namespace

std::string topology_dot(const CheckReport& report) { return DotWriter(report).write(); }

}  // namespace p2pcheck
