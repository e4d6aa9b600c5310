// The PCI tree's shape as one hash (fingerprint.h).
#include "p2pcheck/fleet/fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>

namespace p2pcheck {

namespace {

using Children = std::map<Bdf, std::vector<const Function*>>;

// One function and everything below it; children sorted so enumeration order does not matter.
std::string subtree(const Children& children, const Function& fn, int depth) {
  char head[64];
  std::snprintf(head, sizeof head, "%04x:%04x/%06x/%s", fn.vendor, fn.device, fn.class_code, to_string(fn.port_type));
  std::string out = head;
  // Real PCI trees are a handful of levels deep; a hostile one may claim more, so the walk stops.
  if (depth >= 32) return out + "(...)";
  std::vector<std::string> below;
  if (auto it = children.find(fn.bdf); it != children.end())
    for (const Function* child : it->second) below.push_back(subtree(children, *child, depth + 1));
  if (below.empty()) return out;
  std::sort(below.begin(), below.end());
  out += "(";
  for (std::size_t i = 0; i < below.size(); ++i) out += (i ? "," : "") + below[i];
  return out + ")";
}

}  // namespace

std::string topology_shape(const Topology& topo) {
  Children children;  // one pass, not Topology::children() per function
  for (const auto& [bdf, fn] : topo.functions)
    if (fn.parent) children[*fn.parent].push_back(&fn);
  std::vector<std::string> bridges;
  for (const auto& [id, hb] : topo.host_bridges) {
    std::vector<std::string> roots;
    for (const Bdf& bdf : hb.root_devices)
      if (const Function* fn = topo.find(bdf)) roots.push_back(subtree(children, *fn, 0));
    std::sort(roots.begin(), roots.end());
    std::string text = "[";
    for (std::size_t i = 0; i < roots.size(); ++i) text += (i ? "," : "") + roots[i];
    bridges.push_back(text + "]");
  }
  std::sort(bridges.begin(), bridges.end());
  std::string out;
  for (const auto& b : bridges) out += b;
  return out;
}

std::string topology_fingerprint(const Topology& topo) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a offset basis and prime (64 bit)
  for (unsigned char c : topology_shape(topo)) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace p2pcheck
