#include "p2pcheck/report.h"

#include <cstdio>

namespace p2pcheck {
namespace {

using json = nlohmann::ordered_json;

std::string hex(std::uint64_t value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(value));
  return buf;
}

json opt_bdf(const std::optional<Bdf>& bdf) { return bdf ? json(bdf->str()) : json(nullptr); }

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json link_json(const LinkInfo& link) {
  return {{"max_speed_gts", opt(link.max_speed)}, {"max_width", opt(link.max_width)},
          {"speed_gts", opt(link.cur_speed)},     {"width", opt(link.cur_width)},
          {"downtrained", link.downtrained()}};
}

json acs_json(const Acs& acs) {
  json j = {{"presence", to_string(acs.presence)}};
  if (acs.presence == Presence::kPresent) {
    j["capability"] = "0x" + hex(acs.capability, 4);
    j["control"] = "0x" + hex(acs.control, 4);
    j["enabled"] = acs_bits_str(acs.control);
    j["redirect"] = acs.redirect();
  } else {
    j["redirect"] = acs.presence == Presence::kAbsent ? json(false) : json(nullptr);
  }
  return j;
}

std::string colored(const TextStyle& style, const char* code, const std::string& text) {
  return style.color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
}

}  // namespace

std::string function_label(const Function& fn) {
  std::string label = fn.bdf.str() + " [" + hex(fn.vendor, 4) + ":" + hex(fn.device, 4) + "]";
  if (!fn.device_name.empty()) {
    label += " " + (fn.vendor_name.empty() ? "" : fn.vendor_name + " ") + fn.device_name;
  } else if (!fn.vendor_name.empty()) {
    label += " " + fn.vendor_name + " device";
  }
  return label;
}

std::string link_text(const LinkInfo& link) {
  if (!link.cur_speed && !link.max_speed) return "";
  auto part = [](const std::optional<double>& s, const std::optional<int>& w) {
    return (s ? format_speed(*s) : std::string("?")) + " x" + (w ? std::to_string(*w) : std::string("?"));
  };
  std::string text = part(link.cur_speed, link.cur_width);
  if (link.downtrained()) text += " (DOWNTRAINED, capable " + part(link.max_speed, link.max_width) + ")";
  return text;
}

std::string acs_text(const Acs& acs) {
  switch (acs.presence) {
    case Presence::kAbsent: return "";
    case Presence::kUnknown: return "ACS unknown";
    case Presence::kPresent:
      return "ACS " + std::string(acs.redirect() ? "redirect " : "") + "[" + acs_bits_str(acs.control) + "]";
  }
  return "";
}

json function_json(const Function& fn, const Inventory& inv) {
  json bars = json::array();
  for (const Bar& bar : fn.bars)
    bars.push_back({{"index", bar.index}, {"start", "0x" + hex(bar.start, 16)}, {"size", bar.size},
                    {"flags", "0x" + hex(bar.flags, 8)}, {"io", bar.is_io()}, {"prefetchable", bar.prefetchable()},
                    {"64bit", bar.is_64bit()}});
  json rebar = {{"presence", to_string(fn.rebar_presence)}, {"bars", json::array()}};
  for (const auto& r : fn.rebar)
    rebar["bars"].push_back({{"bar", r.bar}, {"current_size", r.current_size}, {"supported_sizes", r.supported_sizes}});
  json j = {
      {"bdf", fn.bdf.str()},
      {"parent", opt_bdf(fn.parent)},
      {"host_bridge", fn.host_bridge},
      {"sysfs_path", fn.sysfs_path},
      {"vendor", hex(fn.vendor, 4)},
      {"device", hex(fn.device, 4)},
      {"subsystem_vendor", hex(fn.subsystem_vendor, 4)},
      {"subsystem_device", hex(fn.subsystem_device, 4)},
      {"class", hex(fn.class_code, 6)},
      {"revision", hex(fn.revision, 2)},
      {"header_type", opt(fn.header_type)},
      {"vendor_name", fn.vendor_name},
      {"device_name", fn.device_name},
      {"driver", fn.driver.empty() ? json(nullptr) : json(fn.driver)},
      {"numa_node", fn.numa_node},
      {"iommu_group", opt(fn.iommu_group)},
      {"role", role_of(fn, inv)},
      {"port_type", to_string(fn.port_type)},
      {"config_size", fn.config_size},
      {"config_note", fn.config_note.empty() ? json(nullptr) : json(fn.config_note)},
      {"link", link_json(fn.link)},
      {"acs", acs_json(fn.acs)},
      {"bars", bars},
      {"resizable_bar", rebar},
      {"sriov", fn.sriov_presence == Presence::kPresent
                    ? json{{"presence", "present"}, {"total_vfs", fn.sriov.total_vfs}, {"num_vfs", fn.sriov.num_vfs},
                           {"vf_device", hex(fn.sriov.vf_device, 4)}}
                    : json{{"presence", to_string(fn.sriov_presence)}}},
      {"physfn", opt_bdf(fn.physfn)},
  };
  if (fn.p2pmem)
    j["p2pmem"] = {{"size", opt(fn.p2pmem->size)}, {"available", opt(fn.p2pmem->available)},
                   {"published", opt(fn.p2pmem->published)}, {"allocate", fn.p2pmem->has_allocate}};
  else
    j["p2pmem"] = nullptr;
  return j;
}

json topology_json(const Topology& topo, const Inventory& inv) {
  json bridges = json::array();
  for (const auto& [id, hb] : topo.host_bridges) {
    json roots = json::array();
    for (const Bdf& b : hb.root_devices) roots.push_back(b.str());
    bridges.push_back({{"id", id}, {"domain", hb.domain}, {"bus", hb.bus}, {"sysfs_path", hb.sysfs_path},
                       {"root_devices", roots}, {"bridge_device", opt_bdf(hb.bridge_device)},
                       {"bridge_device_unknown", hb.bridge_device_unknown}});
  }
  json functions = json::array();
  for (const auto& [bdf, fn] : topo.functions) functions.push_back(function_json(fn, inv));
  json gpus = json::array();
  for (const Bdf& g : inv.gpus) gpus.push_back(g.str());
  json nvmes = json::array();
  for (const auto& c : inv.nvmes) {
    json nss = json::array();
    for (const auto& ns : c.namespaces)
      nss.push_back({{"name", ns.name}, {"size_bytes", ns.size_bytes}, {"partitions", ns.partitions}});
    nvmes.push_back({{"name", c.name.empty() ? json(nullptr) : json(c.name)}, {"bdf", c.bdf.str()}, {"model", c.model},
                     {"serial", c.serial}, {"firmware", c.firmware}, {"namespaces", nss}});
  }
  json ignored = json::array();
  for (const auto& i : inv.ignored) ignored.push_back({{"bdf", i.bdf.str()}, {"reason", i.reason}});
  return {{"schema", "p2pcheck.topo"}, {"schema_version", kJsonSchemaVersion}, {"tool_version", kToolVersion},
          {"source", topo.source_description}, {"config_space_complete", !topo.config_truncated},
          {"host_bridges", bridges}, {"functions", functions}, {"gpus", gpus}, {"nvme", nvmes}, {"ignored", ignored}};
}

json path_json(const PairPath& path, const Inventory& inv) {
  json hops = json::array();
  for (const Hop& hop : path.hops) {
    if (hop.function) {
      hops.push_back({{"bdf", hop.function->bdf.str()}, {"host_bridge", nullptr}, {"role", hop.role},
                      {"common", hop.function == path.walk.common}, {"acs", acs_json(hop.function->acs)},
                      {"link", link_json(hop.function->link)}});
    } else {
      hops.push_back({{"bdf", nullptr}, {"host_bridge", hop.host_bridge}, {"role", hop.role}, {"common", false}});
    }
  }
  auto bdfs = [](const std::vector<const Function*>& fns) {
    json arr = json::array();
    for (const Function* f : fns) arr.push_back(f->bdf.str());
    return arr;
  };
  const NvmeController* nvme = inv.nvme_at(path.pair.nvme);
  return {{"gpu", path.pair.gpu.str()},
          {"nvme", path.pair.nvme.str()},
          {"nvme_name", nvme && !nvme->name.empty() ? json(nvme->name) : json(nullptr)},
          {"common_bridge", path.walk.common ? json(path.walk.common->bdf.str()) : json(nullptr)},
          {"distance", path.walk.distance},
          {"host_bridges", path.host_bridges},
          {"hops", hops},
          {"acs_redirect", bdfs(path.walk.acs_redirect)},
          {"acs_unknown", bdfs(path.walk.acs_unknown)}};
}

json paths_json(const Topology& topo, const Inventory& inv, const std::vector<PairPath>& paths) {
  json pairs = json::array();
  for (const auto& p : paths) pairs.push_back(path_json(p, inv));
  return {{"schema", "p2pcheck.paths"}, {"schema_version", kJsonSchemaVersion}, {"tool_version", kToolVersion},
          {"source", topo.source_description}, {"config_space_complete", !topo.config_truncated}, {"pairs", pairs}};
}

namespace {

std::string annotations(const Function& fn, const Inventory& inv) {
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
    if (i.bdf == fn.bdf) role = "ignored: " + i.reason;
  add("<" + role + ">");
  add(link_text(fn.link));
  add(acs_text(fn.acs));
  if (fn.is_virtfn()) add("VF of " + fn.physfn->str());
  if (fn.p2pmem && fn.p2pmem->size) add("p2pmem " + format_size(*fn.p2pmem->size));
  if (!fn.driver.empty()) add("driver " + fn.driver);
  return out;
}

void tree_lines(const Topology& topo, const Inventory& inv, const Function& fn, const std::string& prefix, bool last,
                const TextStyle& style, std::string& out) {
  const char* branch = style.unicode ? (last ? "└─ " : "├─ ") : (last ? "`- " : "|- ");
  const char* stem = style.unicode ? (last ? "   " : "│  ") : (last ? "   " : "|  ");
  std::string label = function_label(fn);
  std::string role = role_of(fn, inv);
  if (role == "GPU") label = colored(style, "1;32", label);
  else if (role == "NVMe") label = colored(style, "1;36", label);
  out += prefix + branch + label + annotations(fn, inv) + "\n";
  auto kids = topo.children(fn);
  for (size_t i = 0; i < kids.size(); ++i) tree_lines(topo, inv, *kids[i], prefix + stem, i + 1 == kids.size(), style, out);
}

}  // namespace

std::string topology_text(const Topology& topo, const Inventory& inv, const TextStyle& style) {
  std::string out;
  out += "p2pcheck " + std::string(kToolVersion) + " — " + topo.source_description + "\n";
  out += std::to_string(inv.gpus.size()) + " GPU(s), " + std::to_string(inv.nvmes.size()) + " NVMe controller(s), " +
         std::to_string(topo.functions.size()) + " PCI functions under " + std::to_string(topo.host_bridges.size()) +
         " host bridge(s)\n";
  if (topo.config_truncated)
    out += "note: only 64 bytes of config space were readable (not root): port types, ACS and capabilities are "
           "unknown; run as root\n";
  for (const auto& [id, hb] : topo.host_bridges) {
    out += "\nhost bridge " + id;
    if (hb.bridge_device) out += "  (kernel's host bridge device: " + function_label(topo.at(*hb.bridge_device)) + ")";
    else if (hb.bridge_device_unknown) out += "  (kernel's host bridge device: unknown, needs root)";
    else out += "  (no device at 00.0 or root port first: the kernel sees no host bridge device)";
    out += "\n";
    std::vector<const Function*> roots;
    for (const Bdf& b : hb.root_devices) roots.push_back(&topo.at(b));
    for (const auto& [bdf, fn] : topo.functions)  // VFs on a root bus hang below the bus too
      if (fn.host_bridge == id && !fn.parent && fn.physfn) roots.push_back(&fn);
    for (size_t i = 0; i < roots.size(); ++i) tree_lines(topo, inv, *roots[i], "", i + 1 == roots.size(), style, out);
  }
  if (!inv.nvmes.empty()) {
    out += "\nNVMe\n";
    for (const auto& c : inv.nvmes) {
      out += "  " + (c.name.empty() ? std::string("(no driver)") : c.name) + "  " + c.bdf.str();
      if (!c.model.empty()) out += "  " + c.model;
      for (const auto& ns : c.namespaces) {
        out += "  " + ns.name + " " + format_size(ns.size_bytes);
        if (!ns.partitions.empty()) out += " (" + std::to_string(ns.partitions.size()) + " partitions)";
      }
      out += "\n";
    }
  }
  if (inv.gpus.empty()) out += "\nno AMD or NVIDIA GPU found in " + topo.source_description + "\n";
  return out;
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
    const NvmeController* nvme = inv.nvme_at(p.pair.nvme);
    std::string nvme_name = nvme && !nvme->name.empty() ? nvme->name + " " : "";
    out += "\n" + colored(style, "1", "GPU " + gpu.bdf.str() + " <-> " + nvme_name + p.pair.nvme.str());
    if (p.walk.common)
      out += ": common upstream bridge " + p.walk.common->bdf.str() + " (" + role_of(*p.walk.common, inv) + ")";
    else
      out += ": no common upstream bridge, through host bridge" + std::string(p.host_bridges.size() > 1 ? "s " : " ") +
             p.host_bridges.front() + (p.host_bridges.size() > 1 ? " and " + p.host_bridges.back() : "");
    out += ", distance " + std::to_string(p.walk.distance) + "\n";
    for (size_t i = 0; i < p.hops.size(); ++i) {
      const Hop& hop = p.hops[i];
      const char* arrow = i == 0 ? "  " : (style.unicode ? "→ " : "> ");
      if (!hop.function) {
        out += "    " + std::string(arrow) + "host bridge " + hop.host_bridge + "\n";
        continue;
      }
      std::string line = "    " + std::string(arrow) + function_label(*hop.function) + "  <" + hop.role +
                         (hop.function == p.walk.common ? ", common" : "") + ">";
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
