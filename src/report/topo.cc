#include "p2pcheck/report/topo.h"

#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>
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

// What follows a function's label on its line, each a piece of its own so the line can break between them.
std::vector<std::string> annotations(const Topology& topo, const Function& fn, const Inventory& inv) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& s) {
    if (!s.empty()) out.push_back(s);
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
  if (!fn.driver.empty()) add("driver " + printable(fn.driver));
  return out;
}

// Columns a text without colour takes: its UTF-8 code points.
std::size_t columns(std::string_view text) {
  std::size_t n = 0;
  for (unsigned char c : text)
    if ((c & 0xc0) != 0x80) ++n;
  return n;
}

// The byte offset after the first `n` columns of `text` (UTF-8: a column per character).
std::size_t bytes_of_columns(const std::string& text, std::size_t n) {
  std::size_t end = 0;
  for (std::size_t i = 0; end < text.size() && i < n; ++i) do
      ++end;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80);
  return end;
}

// `text` in `room` columns, its middle replaced by an ellipsis ("…", "..." for --ascii): a model
// name says most at its end ("... Controller PM9A1/PM9A3/980PRO", "... [Instinct MI300X]").
std::string cut_middle(const std::string& text, std::size_t room, bool unicode) {
  const std::size_t have = columns(text);
  if (have <= room) return text;
  const std::string ellipsis = unicode ? "…" : "...";
  const std::size_t keep = room > columns(ellipsis) ? room - columns(ellipsis) : 0;
  // The first word whole where it is short ("NVMe…ntroller PM174X"), else a third.
  const std::size_t first_word = columns(text.substr(0, text.find(' ')));
  const std::size_t head = first_word <= keep / 2 ? first_word : keep / 3;
  return text.substr(0, bytes_of_columns(text, head)) + ellipsis +
         text.substr(bytes_of_columns(text, have - (keep - head)));
}

// What people call the vendor: pci.ids' own short name in brackets ("Advanced Micro Devices,
// Inc. [AMD/ATI]" -> "AMD/ATI"), else its first word ("Samsung Electronics Co Ltd" -> "Samsung").
std::string short_vendor(const std::string& vendor) {
  std::size_t open = vendor.rfind('['), close = vendor.rfind(']');
  if (open != std::string::npos && close != std::string::npos && close > open + 1)
    return vendor.substr(open + 1, close - open - 1);
  std::string first = vendor.substr(0, vendor.find(' '));
  return first.ends_with(',') ? first.substr(0, first.size() - 1) : first;
}

// The " Vendor Device" part of function_label() in `room` columns: the vendor's short name, then the
// device's name with its middle cut, so both whose it is and which model stay readable.
std::string name_in(const Function& fn, std::size_t room, bool unicode) {
  std::string vendor = pci_vendor_name(fn.vendor), device = pci_device_name(fn.vendor, fn.device);
  if (device.empty() && !vendor.empty()) device = "device";
  std::string whole = vendor.empty() ? device : vendor + " " + device;
  if (whole.empty() || columns(whole) + 1 <= room) return whole.empty() ? "" : " " + whole;
  if (room < 2) return "";
  std::string brief = vendor.empty() ? "" : short_vendor(vendor) + " ";
  constexpr std::size_t kDeviceKept = 10;  // below this the device's name says too little to cut it
  if (brief.empty() || room < 1 + columns(brief) + kDeviceKept)
    return " " + cut_middle(brief + device, room - 1, unicode);
  return " " + brief + cut_middle(device, room - 1 - columns(brief), unicode);
}

// Pieces longer than a continuation line split at their spaces (a long role or reason).
std::vector<std::string> fit_pieces(const std::vector<std::string>& items, std::size_t room) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    if (columns(item) <= room) {
      out.push_back(item);
      continue;
    }
    std::string piece;
    for (const std::string& word : split(item, ' ')) {
      if (!piece.empty() && columns(piece) + 1 + columns(word) > room) out.push_back(std::exchange(piece, ""));
      piece += (piece.empty() ? "" : " ") + word;
    }
    if (!piece.empty()) out.push_back(piece);
  }
  return out;
}

// Below a name this short the annotations move to the next line rather than cut it further.
constexpr std::size_t kShortestName = 16;

// One function's line fitted to the width: its name cut first, then its annotations carried on to
// further lines (`cont`: the tree's stems, so the branches below stay drawn).
struct TreeLine {
  std::string head, cont;  // prefix and branch; prefix, stem and the bar to the children
  const char* colour = nullptr;
};
std::string fitted(const TreeLine& t, const Function& fn, std::vector<std::string> items, const TextStyle& style) {
  const std::size_t width = style.width;
  std::string id = fn.bdf.str() + " [" + hex(fn.vendor, 4) + ":" + hex(fn.device, 4) + "]";
  std::size_t used = columns(t.head) + columns(id);
  std::size_t first = items.empty() ? 0 : 2 + columns(items[0]);
  std::size_t whole = columns(function_label(fn)) - columns(id);  // " Vendor Device", or nothing
  std::size_t room = width > used + first ? width - used - first : 0;
  if (room < std::min(whole, kShortestName)) room = width > used ? width - used : 0;
  std::string name = name_in(fn, room, style.unicode);
  std::string label = t.colour ? colored(style, t.colour, id + name) : id + name;
  std::string out = t.head + label;
  std::size_t column = used + columns(name);
  for (const std::string& item : fit_pieces(items, width > columns(t.cont) ? width - columns(t.cont) : 1)) {
    if (column + 2 + columns(item) <= width) {
      out += "  " + item;
      column += 2 + columns(item);
    } else {
      out += "\n" + t.cont + item;
      column = columns(t.cont) + columns(item);
    }
  }
  return out + "\n";
}

// Each function's children in BDF order, by Bdf::key() of the parent: found once for the whole tree
// (a search of every function per node made the tree quadratic in the machine's size).
using ChildIndex = std::unordered_map<std::uint64_t, std::vector<const Function*>>;

ChildIndex children_of_all(const Topology& topo, const std::set<Bdf>* only) {
  ChildIndex children;
  for (const auto& [bdf, fn] : topo.functions)
    if (fn.parent && (!only || only->count(bdf))) children[fn.parent->key()].push_back(&fn);
  return children;
}

struct Tree {
  const Topology& topo;
  const Inventory& inv;
  const ChildIndex& children;
  const TextStyle& style;
};

void tree_lines(const Tree& tree, const Function& fn, const std::string& prefix, bool last, std::string& out) {
  const bool unicode = tree.style.unicode;
  const char* branch = unicode ? (last ? "└─ " : "├─ ") : (last ? "`- " : "|- ");
  const char* stem = unicode ? (last ? "   " : "│  ") : (last ? "   " : "|  ");
  auto found = tree.children.find(fn.bdf.key());
  const bool kids = found != tree.children.end();
  TreeLine line{prefix + branch, prefix + stem + (kids ? (unicode ? "│" : "|") : " ") + "  "};
  std::string role = role_of(fn, tree.inv);
  line.colour = role == "GPU" ? "1;32" : role == "NVMe" ? "1;36" : nullptr;
  out += fitted(line, fn, annotations(tree.topo, fn, tree.inv), tree.style);
  if (!kids) return;
  const std::vector<const Function*>& list = found->second;
  for (size_t i = 0; i < list.size(); ++i) tree_lines(tree, *list[i], prefix + stem, i + 1 == list.size(), out);
}

std::string host_bridge_line(const Topology& topo, const std::string& id, const HostBridge& hb) {
  std::string out = "host bridge " + id + (hb.name.empty() ? "" : " (" + printable(hb.name) + ")");
  if (hb.bridge_device)
    out += "  (kernel's host bridge device: " + function_label(topo.at(*hb.bridge_device)) + ")";
  else if (hb.bridge_device_unknown && !hb.bridge_device_not_carried.empty())
    out += "  (kernel's host bridge device: unknown, config space " + hb.bridge_device_not_carried + ")";
  else if (hb.bridge_device_unknown)
    out += topo.from_dump ? "  (kernel's host bridge device: unknown, config space not read as root)"
                          : "  (kernel's host bridge device: unknown, needs root)";
  else
    out += "  (no device at 00.0 or root port first: the kernel sees no host bridge device)";
  return out + "\n";
}

std::string nvme_lines(const Inventory& inv, const std::set<Bdf>* only) {
  std::string out;
  for (const auto& c : inv.nvmes) {
    if (only && !only->count(c.bdf)) continue;
    out += "  " + (c.name.empty() ? std::string("(no driver)") : c.name) + "  " + c.bdf.str();
    if (!c.model.empty()) out += "  " + c.model;
    for (const auto& ns : c.namespaces) {
      out += "  " + ns.name + " " + (ns.size_bytes ? format_size(*ns.size_bytes) : std::string("size unknown"));
      if (!ns.partitions.empty()) out += " (" + std::to_string(ns.partitions.size()) + " partitions)";
    }
    out += "\n";
  }
  // Functions out of the pairs because of how they are bound: their driver, never "(no driver)".
  std::string gpus;
  for (const UnusableEndpoint& u : inv.unusable)
    if (!only || only->count(u.bdf))
      (u.gpu ? gpus : out) += "  " + (u.driver.empty() ? std::string("(no driver)") : "(" + printable(u.driver) + ")") +
                              "  " + u.bdf.str() + "  not usable: " + printable(u.why()) + "\n";
  if (!out.empty()) out = "\nNVMe\n" + out;
  return gpus.empty() ? out : out + "\nGPUs not usable as bound\n" + gpus;
}

std::string header(const Topology& topo, const Inventory& inv, const std::set<Bdf>* only,
                   const MachineIdentity* identity) {
  std::string out = "p2pcheck " + std::string(kToolVersion) + " — " + topo.source_description + "\n";
  if (identity) out += identity_line(*identity);
  out += std::to_string(inv.gpus.size()) + " GPU(s), " + std::to_string(inv.nvmes.size()) + " NVMe controller(s), " +
         (inv.unusable.empty() ? "" : std::to_string(inv.unusable.size()) + " not usable as bound (listed below), ") +
         std::to_string(topo.functions.size()) + " PCI functions under " + std::to_string(topo.host_bridges.size()) +
         " host bridge(s)\n";
  if (only)
    out += "--paths: " + std::to_string(only->size()) + " functions on the pairs' routes, with the bridges above\n";
  if (topo.config_truncated)
    out +=
        "note: only 64 bytes of config space were readable (not root): port types, ACS and capabilities are "
        "unknown; " +
        std::string(topo.from_dump
                        ? "ask for a capture taken as root (`sudo p2pcheck capture`) or `sudo lspci -xxxx` output\n"
                        : "run as root\n");
  return out;
}

}  // namespace

std::string topology_text(const Topology& topo, const Inventory& inv, const TextStyle& style, const std::set<Bdf>* only,
                          const MachineIdentity* identity) {
  std::string out = fold_to_width(header(topo, inv, only, identity), style.width);
  const ChildIndex children = children_of_all(topo, only);
  const Tree tree{topo, inv, children, style};
  for (const auto& [id, hb] : topo.host_bridges) {
    std::vector<const Function*> roots;
    for (const Bdf& b : hb.root_devices)
      if (!only || only->count(b)) roots.push_back(&topo.at(b));
    for (const auto& [bdf, fn] : topo.functions)  // VFs on a root bus hang below the bus too
      if (fn.host_bridge == id && !fn.parent && fn.physfn && (!only || only->count(bdf))) roots.push_back(&fn);
    if (only && roots.empty()) continue;
    out += "\n" + fold_to_width(host_bridge_line(topo, id, hb), style.width);
    for (size_t i = 0; i < roots.size(); ++i) tree_lines(tree, *roots[i], "", i + 1 == roots.size(), out);
  }
  out += fold_to_width(nvme_lines(inv, only), style.width);
  if (inv.gpus.empty()) out += "\nno AMD or NVIDIA GPU found in " + topo.source_description + "\n";
  return out;
}

}  // namespace p2pcheck
