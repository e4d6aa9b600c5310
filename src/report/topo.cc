#include "p2pcheck/report/topo.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "p2pcheck/model/route.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

using namespace report_detail;

json topology_json(const Topology& topo, const Inventory& inv) {
  json bridges = json::array();
  for (const auto& [id, hb] : topo.host_bridges) {
    json roots = json::array();
    for (const Bdf& b : hb.root_devices) roots.push_back(b.str());
    bridges.push_back({{"id", id},
                       {"domain", hb.domain},
                       {"bus", hb.bus},
                       {"sysfs_path", hb.sysfs_path},
                       {"root_devices", std::move(roots)},
                       {"bridge_device", opt_bdf(hb.bridge_device)},
                       {"bridge_device_unknown", hb.bridge_device_unknown}});
  }
  json functions = json::array();
  for (const auto& [bdf, fn] : topo.functions) functions.push_back(function_json(topo, fn, inv));
  json gpus = json::array();
  for (const Bdf& g : inv.gpus) gpus.push_back(g.str());
  json nvmes = json::array();
  for (const auto& c : inv.nvmes) {
    json nss = json::array();
    for (const auto& ns : c.namespaces)
      nss.push_back({{"name", ns.name},
                     {"size_bytes", ns.size_bytes ? json(*ns.size_bytes) : json(nullptr)},
                     {"partitions", ns.partitions}});
    nvmes.push_back({{"name", c.name.empty() ? json(nullptr) : json(c.name)},
                     {"bdf", c.bdf.str()},
                     {"model", c.model},
                     {"serial", c.serial},
                     {"firmware", c.firmware},
                     {"namespaces", std::move(nss)}});
  }
  json ignored = json::array();
  for (const auto& i : inv.ignored) ignored.push_back({{"bdf", i.bdf.str()}, {"reason", i.reason()}});
  return {{"schema", "p2pcheck.topo"},
          {"schema_version", kJsonSchemaVersion},
          {"tool_version", kToolVersion},
          {"source", topo.source_description},
          {"config_space_complete", !topo.config_truncated},
          {"host_bridges", std::move(bridges)},
          {"functions", std::move(functions)},
          {"gpus", std::move(gpus)},
          {"nvme", std::move(nvmes)},
          {"ignored", std::move(ignored)}};
}

namespace {

std::string annotations(const Topology& topo, const Function& fn, const Inventory& inv) {
  std::string out;
  auto add = [&out](const std::string& s) {
    if (!s.empty()) out += "  " + s;
  };
  std::string role = role_of(fn, inv);
  if (role == "NVMe") {
    const NvmeController* c = inv.nvme_at(fn.bdf);
    role += c && !c->name.empty() ? " " + c->name : " (no controller registered)";
  }
  for (const auto& i : inv.ignored)
    if (i.bdf == fn.bdf) role = "ignored: " + i.reason();
  add("<" + role + ">");
  add(link_text(fn.link));
  if (check_link(topo, fn).downtrained) add("DOWNTRAINED");
  add(acs_text(fn.acs));
  if (fn.is_virtfn()) add("VF of " + fn.physfn->str());
  if (fn.p2pmem && fn.p2pmem->size) add("p2pmem " + format_size(*fn.p2pmem->size));
  if (!fn.driver.empty()) add("driver " + fn.driver);
  return out;
}

// Each function's children in BDF order, by Bdf::key() of the parent: found once for the whole tree
// (a search of every function per node made the tree quadratic in the machine's size).
using ChildIndex = std::unordered_map<std::uint64_t, std::vector<const Function*>>;

ChildIndex children_of_all(const Topology& topo) {
  ChildIndex children;
  for (const auto& [bdf, fn] : topo.functions)
    if (fn.parent) children[fn.parent->key()].push_back(&fn);
  return children;
}

void tree_lines(const Topology& topo, const Inventory& inv, const ChildIndex& children, const Function& fn,
                const std::string& prefix, bool last, const TextStyle& style, std::string& out) {
  const char* branch = style.unicode ? (last ? "└─ " : "├─ ") : (last ? "`- " : "|- ");
  const char* stem = style.unicode ? (last ? "   " : "│  ") : (last ? "   " : "|  ");
  std::string label = function_label(fn);
  std::string role = role_of(fn, inv);
  if (role == "GPU")
    label = colored(style, "1;32", label);
  else if (role == "NVMe")
    label = colored(style, "1;36", label);
  out += prefix + branch + label + annotations(topo, fn, inv) + "\n";
  auto found = children.find(fn.bdf.key());
  if (found == children.end()) return;
  const std::vector<const Function*>& kids = found->second;
  for (size_t i = 0; i < kids.size(); ++i)
    tree_lines(topo, inv, children, *kids[i], prefix + stem, i + 1 == kids.size(), style, out);
}

}  // namespace

std::string topology_text(const Topology& topo, const Inventory& inv, const TextStyle& style,
                          const MachineIdentity* identity) {
  std::string out;
  out += "p2pcheck " + std::string(kToolVersion) + " — " + topo.source_description + "\n";
  if (identity) out += identity_line(*identity);
  out += std::to_string(inv.gpus.size()) + " GPU(s), " + std::to_string(inv.nvmes.size()) + " NVMe controller(s), " +
         std::to_string(topo.functions.size()) + " PCI functions under " + std::to_string(topo.host_bridges.size()) +
         " host bridge(s)\n";
  if (topo.config_truncated)
    out +=
        "note: only 64 bytes of config space were readable (not root): port types, ACS and capabilities are "
        "unknown; " +
        std::string(topo.from_dump
                        ? "ask for a capture taken as root (`sudo p2pcheck capture`) or `sudo lspci -xxxx` output\n"
                        : "run as root\n");
  const ChildIndex children = children_of_all(topo);
  for (const auto& [id, hb] : topo.host_bridges) {
    out += "\nhost bridge " + id + (hb.name.empty() ? "" : " (" + printable(hb.name) + ")");
    if (hb.bridge_device)
      out += "  (kernel's host bridge device: " + function_label(topo.at(*hb.bridge_device)) + ")";
    else if (hb.bridge_device_unknown)
      out += topo.from_dump ? "  (kernel's host bridge device: unknown, config space not read as root)"
                            : "  (kernel's host bridge device: unknown, needs root)";
    else
      out += "  (no device at 00.0 or root port first: the kernel sees no host bridge device)";
    out += "\n";
    std::vector<const Function*> roots;
    for (const Bdf& b : hb.root_devices) roots.push_back(&topo.at(b));
    for (const auto& [bdf, fn] : topo.functions)  // VFs on a root bus hang below the bus too
      if (fn.host_bridge == id && !fn.parent && fn.physfn) roots.push_back(&fn);
    for (size_t i = 0; i < roots.size(); ++i)
      tree_lines(topo, inv, children, *roots[i], "", i + 1 == roots.size(), style, out);
  }
  if (!inv.nvmes.empty()) {
    out += "\nNVMe\n";
    for (const auto& c : inv.nvmes) {
      out += "  " + (c.name.empty() ? std::string("(no driver)") : c.name) + "  " + c.bdf.str();
      if (!c.model.empty()) out += "  " + c.model;
      for (const auto& ns : c.namespaces) {
        out += "  " + ns.name + " " + (ns.size_bytes ? format_size(*ns.size_bytes) : std::string("size unknown"));
        if (!ns.partitions.empty()) out += " (" + std::to_string(ns.partitions.size()) + " partitions)";
      }
      out += "\n";
    }
  }
  if (inv.gpus.empty()) out += "\nno AMD or NVIDIA GPU found in " + topo.source_description + "\n";
  return out;
}

}  // namespace p2pcheck
