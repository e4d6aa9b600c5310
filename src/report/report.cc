#include "p2pcheck/report/report.h"
#include "p2pcheck/source/version.h"

#include <cstdio>
#include <set>

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

// An empty object with room for `keys` members, filled with j["key"] = ...: an ordered_map that
// grows copies (never moves) what it holds, since its pairs have a const key; so does every
// {{"key", value}, ...} list, one growth per power of two.
json object_for(std::size_t keys) {
  json j(json::value_t::object);
  j.get_ref<json::object_t&>().reserve(keys);
  return j;
}

json link_json(const Topology& topo, const Function& fn) {
  const LinkInfo& link = fn.link;
  LinkCheck check = check_link(topo, fn);
  json j = object_for(7);
  j["max_speed_gts"] = opt(link.max_speed);
  j["max_width"] = opt(link.max_width);
  j["speed_gts"] = opt(link.cur_speed);
  j["width"] = opt(link.cur_width);
  j["capable_speed_gts"] = opt(check.capable_speed);
  j["capable_width"] = opt(check.capable_width);
  j["downtrained"] = check.downtrained;
  return j;
}

json acs_json(const Acs& acs) {
  json j = object_for(5);
  j["presence"] = to_string(acs.presence);
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

json function_json(const Topology& topo, const Function& fn, const Inventory& inv) {
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
      {"link", link_json(topo, fn)},
      {"acs", acs_json(fn.acs)},
      {"bars", std::move(bars)},
      {"resizable_bar", std::move(rebar)},
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
                       {"root_devices", std::move(roots)}, {"bridge_device", opt_bdf(hb.bridge_device)},
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
      nss.push_back({{"name", ns.name}, {"size_bytes", ns.size_bytes}, {"partitions", ns.partitions}});
    nvmes.push_back({{"name", c.name.empty() ? json(nullptr) : json(c.name)}, {"bdf", c.bdf.str()}, {"model", c.model},
                     {"serial", c.serial}, {"firmware", c.firmware}, {"namespaces", std::move(nss)}});
  }
  json ignored = json::array();
  for (const auto& i : inv.ignored) ignored.push_back({{"bdf", i.bdf.str()}, {"reason", i.reason}});
  return {{"schema", "p2pcheck.topo"}, {"schema_version", kJsonSchemaVersion}, {"tool_version", kToolVersion},
          {"source", topo.source_description}, {"config_space_complete", !topo.config_truncated},
          {"host_bridges", std::move(bridges)}, {"functions", std::move(functions)}, {"gpus", std::move(gpus)},
          {"nvme", std::move(nvmes)}, {"ignored", std::move(ignored)}};
}

namespace {

// The hop by hop part of a path, shared by path_json and decision_json.
json hops_json(const Topology& topo, const PairPath& path) {
  json hops = json::array();
  for (const Hop& hop : path.hops) {
    json h = object_for(6);
    if (hop.function) {
      h["bdf"] = hop.function->bdf.str();
      h["host_bridge"] = nullptr;
      h["role"] = hop.role;
      h["common"] = hop.function == path.walk.common;
      h["acs"] = acs_json(hop.function->acs);
      h["link"] = link_json(topo, *hop.function);
    } else {
      h["bdf"] = nullptr;
      h["host_bridge"] = hop.host_bridge;
      h["role"] = hop.role;
      h["common"] = false;
    }
    hops.push_back(std::move(h));
  }
  return hops;
}

json bdfs_json(const std::vector<const Function*>& fns) {
  json arr = json::array();
  for (const Function* f : fns) arr.push_back(f->bdf.str());
  return arr;
}

json nvme_name_json(const PairPath& path, const Inventory& inv) {
  const NvmeController* nvme = inv.nvme_at(path.pair.nvme);
  return nvme && !nvme->name.empty() ? json(nvme->name) : json(nullptr);
}

json common_bridge_json(const PairPath& path) {
  return path.walk.common ? json(path.walk.common->bdf.str()) : json(nullptr);
}

}  // namespace

json path_json(const Topology& topo, const PairPath& path, const Inventory& inv) {
  json j = object_for(9);
  j["gpu"] = path.pair.gpu.str();
  j["nvme"] = path.pair.nvme.str();
  j["nvme_name"] = nvme_name_json(path, inv);
  j["common_bridge"] = common_bridge_json(path);
  j["distance"] = path.walk.distance;
  j["host_bridges"] = path.host_bridges;
  j["hops"] = hops_json(topo, path);
  j["acs_redirect"] = bdfs_json(path.walk.acs_redirect);
  j["acs_unknown"] = bdfs_json(path.walk.acs_unknown);
  return j;
}

json paths_json(const Topology& topo, const Inventory& inv, const std::vector<PairPath>& paths) {
  json pairs = json::array();
  for (const auto& p : paths) pairs.push_back(path_json(topo, p, inv));
  return {{"schema", "p2pcheck.paths"}, {"schema_version", kJsonSchemaVersion}, {"tool_version", kToolVersion},
          {"source", topo.source_description}, {"config_space_complete", !topo.config_truncated},
          {"pairs", std::move(pairs)}};
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
    if (i.bdf == fn.bdf) role = "ignored: " + i.reason;
  add("<" + role + ">");
  add(link_text(fn.link));
  if (check_link(topo, fn).downtrained) add("DOWNTRAINED");
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
  out += prefix + branch + label + annotations(topo, fn, inv) + "\n";
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

namespace p2pcheck {
namespace {

using json = nlohmann::ordered_json;

json finding_json(const Finding& f) {
  json ev = json::array();
  for (const auto& e : f.evidence) ev.push_back({{"file", e.file}, {"value", e.value}});
  return {{"id", f.id}, {"level", to_string(f.level)}, {"subject", f.subject}, {"message", f.message},
          {"evidence", std::move(ev)}, {"fix", f.fix.empty() ? json(nullptr) : json(f.fix)}};
}

json flow_json(const Flow& f) {
  json j = object_for(3);
  j["verdict"] = to_string(f.verdict);
  j["reason"] = f.reason;
  j["hardware"] = f.hardware.empty() ? json(nullptr) : json(f.hardware);
  return j;
}

const char* level_color(Level l) {
  switch (l) {
    case Level::kPass: return "32";
    case Level::kInfo: return "0";
    case Level::kWarn: return "33";
    case Level::kFail: return "1;31";
    case Level::kUnknown: return "35";
  }
  return "0";
}

std::string cell(const PairDecision& d, const KernelRules& rules) {
  if (rules.p2pdma_enabled == false) return "NO / NO  no P2PDMA";
  if (rules.known_bad) return "BAD / BAD  " + std::string(to_string(d.map_type) == std::string("NOT_SUPPORTED") ? "refused" : "unsafe kernel");
  auto one = [](const Flow& f) {
    if (f.verdict == Verdict::kSupported) return std::string("ok");
    if (f.verdict == Verdict::kUnknown) return std::string("?");
    return std::string(f.hardware == "passes" ? "NO*" : "NO");
  };
  std::string how = d.map_type == MapType::kBusAddr          ? "switch"
                    : d.map_type == MapType::kThruHostBridge ? (d.path.walk.common ? "ACS->host" : "host bridge")
                    : d.map_type == MapType::kNotSupported   ? (d.path.walk.common && !d.path.walk.acs_redirect.empty() ? "ACS" : "host bridge")
                                                             : "unknown";
  return one(d.to_gpu) + " / " + one(d.from_gpu) + "  " + how;
}

std::string pad(const std::string& s, size_t width) {
  // Count UTF-8 code points so the columns line up.
  size_t len = 0;
  for (unsigned char c : s)
    if ((c & 0xc0) != 0x80) ++len;
  return len >= width ? s + " " : s + std::string(width - len, ' ');
}

}  // namespace

json decision_json(const Topology& topo, const PairDecision& d, const Inventory& inv) {
  // Built member by member in place: about 7 KB per pair, most of it hops, copied three times before.
  json out = object_for(19);
  out["gpu"] = d.path.pair.gpu.str();
  out["nvme"] = d.path.pair.nvme.str();
  out["nvme_name"] = nvme_name_json(d.path, inv);
  out["common_bridge"] = common_bridge_json(d.path);
  out["distance"] = d.distance ? json(*d.distance) : json(nullptr);
  out["path_distance"] = d.path.walk.distance;
  out["map_type"] = to_string(d.map_type);
  out["verdict"] = to_string(d.verdict);
  out["rule"] = d.rule;
  out["unknowns"] = d.unknowns;
  json flows = object_for(2);
  flows["to_gpu"] = flow_json(d.to_gpu);
  flows["from_gpu"] = flow_json(d.from_gpu);
  out["flows"] = std::move(flows);
  out["acs_fix"] = d.acs_fix.empty() ? json(nullptr) : json(d.acs_fix);
  out["later"] = d.later.empty() ? json(nullptr) : json(d.later);
  if (d.host_checked) {
    json bridges = json::array();
    for (const auto& b : d.host.bridges) {
      bridges.push_back({{"host_bridge", b.host_bridge},
                         {"device", b.device ? json(b.device->str()) : json(nullptr)},
                         {"device_unknown", b.device_unknown},
                         {"ids", b.device ? json(b.ids()) : json(nullptr)},
                         {"allowlist_entry", b.entry ? json(b.entry->name) : json(nullptr)},
                         {"passes", b.passes ? json(*b.passes) : json(nullptr)}});
    }
    auto tri = [](std::optional<bool> v) { return v ? json(*v) : json(nullptr); };
    out["host_check"] = {{"cpu_supports_p2pdma", tri(d.host.cpu_supports)},
                         {"same_host_bridge", d.host.same_host_bridge},
                         {"bridges", std::move(bridges)},
                         {"allowlisted", tri(d.host.allowlisted)},
                         {"allowed", tri(d.host.allowed)}};
  } else {
    out["host_check"] = nullptr;
  }
  out["hops"] = hops_json(topo, d.path);
  out["acs_redirect"] = bdfs_json(d.path.walk.acs_redirect);
  out["acs_unknown"] = bdfs_json(d.path.walk.acs_unknown);
  std::optional<double> ceiling = path_ceiling(d.path);
  out["bandwidth_ceiling_bytes_per_s"] = ceiling ? json(static_cast<std::uint64_t>(*ceiling)) : json(nullptr);
  if (d.kernel) {
    out["kernel"] = {{"distance", d.kernel->distance},
                     {"map_type", d.kernel->map_type == MapType::kUnknown ? json(nullptr) : json(to_string(d.kernel->map_type))},
                     {"map_note", d.kernel->map_note.empty() ? json(nullptr) : json(d.kernel->map_note)},
                     {"agrees", d.kernel_agrees.value_or(false)}};
  } else {
    out["kernel"] = nullptr;
  }
  return out;
}

json check_json(const CheckReport& r) {
  json findings = json::array();
  for (const auto& f : r.findings) findings.push_back(finding_json(f));
  json pairs = json::array();
  for (const auto& d : r.pairs) pairs.push_back(decision_json(r.topo, d, r.inv));
  json gpus = json::array();
  for (const Bdf& g : r.inv.gpus) gpus.push_back(g.str());
  json nvmes = json::array();
  for (const auto& c : r.inv.nvmes) nvmes.push_back({{"bdf", c.bdf.str()}, {"name", c.name.empty() ? json(nullptr) : json(c.name)}});
  return {{"schema", "p2pcheck.check"},
          {"schema_version", kJsonSchemaVersion},
          {"tool_version", kToolVersion},
          {"source", r.source},
          {"result", to_string(r.result)},
          {"kernel", {{"release", r.rules.release}, {"assumed", r.rules.assumed}, {"vendor_kernel", r.rules.vendor_kernel},
                      {"table", r.rules.table_note},
                      {"p2pdma_config", r.rules.p2pdma_enabled ? json(*r.rules.p2pdma_enabled) : json(nullptr)}}},
          {"cpu", {{"vendor", r.machine.cpu.vendor_id}, {"family", r.machine.cpu.family}, {"model", r.machine.cpu.model},
                   {"model_name", r.machine.cpu.model_name}, {"hypervisor", r.machine.cpu.hypervisor}}},
          {"config_space_complete", !r.topo.config_truncated},
          {"gpus", std::move(gpus)},
          {"nvme", std::move(nvmes)},
          {"findings", std::move(findings)},
          {"pairs", std::move(pairs)}};
}

std::string check_text(const CheckReport& r, const TextStyle& style) {
  std::string out;
  const Machine& m = r.machine;
  out += "p2pcheck " + std::string(kToolVersion) + " — kernel " + (r.rules.release.empty() ? "unknown" : r.rules.release);
  if (!m.os.pretty_name.empty()) out += " (" + m.os.pretty_name + ")";
  if (!m.cpu.model_name.empty()) out += ", " + m.cpu.model_name;
  out += ", " + std::to_string(r.inv.gpus.size()) + " GPU(s), " + std::to_string(r.inv.nvmes.size()) + " NVMe\n";
  out += "source: " + r.source + "\n\n";

  size_t ok = 0;
  for (const auto& d : r.pairs) ok += d.verdict == Verdict::kSupported;
  std::string result = std::string(to_string(r.result == Level::kPass ? Level::kPass : r.result));
  size_t failing = 0;
  for (const auto& f : r.findings) failing += f.level == Level::kFail;
  out += colored(style, level_color(r.result), "RESULT: " + result) + " — " + std::to_string(ok) + " of " +
         std::to_string(r.pairs.size()) + " GPU–NVMe pair(s) can use P2P DMA" +
         (failing ? "; " + std::to_string(failing) + " check(s) of the kernel and stack fail" : "") + "\n";
  if (r.topo.config_truncated)
    out += "note: only 64 bytes of config space were readable (not root): ACS and port types are unknown; run as root\n";
  if (r.inv.gpus.empty())
    out += "no AMD or NVIDIA GPU in " + r.source + (r.pairs.empty() ? "" : "; the pairs below were named with --gpu") + "\n";

  out += "\nKernel and stack\n";
  std::set<std::string> folded;
  for (const auto& f : r.findings) {
    // Per-device PASS lines of one check fold into one line; anything else is shown in full.
    if (f.level == Level::kPass && !f.subject.empty()) {
      if (!folded.insert(f.id).second) continue;
      std::vector<std::string> subjects;
      for (const auto& g : r.findings)
        if (g.id == f.id && g.level == Level::kPass && !g.subject.empty()) subjects.push_back(g.subject);
      if (subjects.size() > 1) {
        out += "  " + colored(style, level_color(f.level), pad("PASS", 8)) + f.message + " — and " +
               std::to_string(subjects.size() - 1) + " more (" + f.id + ": " + subjects.front() + " ... " +
               subjects.back() + ")\n";
        continue;
      }
    }
    std::string line = "  " + colored(style, level_color(f.level), pad(to_string(f.level), 8)) +
                       (f.subject.empty() ? "" : f.subject + ": ") + f.message;
    if (!f.evidence.empty()) line += "\n          evidence: " + f.evidence.front().file + " = " + f.evidence.front().value;
    for (size_t i = 1; i < f.evidence.size(); ++i) line += "; " + f.evidence[i].file + " = " + f.evidence[i].value;
    if (!f.fix.empty() && (f.level == Level::kFail || f.level == Level::kWarn || f.level == Level::kUnknown))
      line += "\n          fix: " + f.fix;
    out += line + "\n";
  }

  if (!r.pairs.empty()) {
    // The matrix: GPUs down, NVMe across; each cell "storage->GPU / GPU->storage  how".
    std::vector<Bdf> gpus, nvmes;
    for (const auto& d : r.pairs) {
      if (std::find(gpus.begin(), gpus.end(), d.path.pair.gpu) == gpus.end()) gpus.push_back(d.path.pair.gpu);
      if (std::find(nvmes.begin(), nvmes.end(), d.path.pair.nvme) == nvmes.end()) nvmes.push_back(d.path.pair.nvme);
    }
    const size_t first = 22, width = 26;
    out += "\nPairs (storage -> GPU / GPU -> storage)\n";
    for (size_t start = 0; start < nvmes.size(); start += 4) {
      size_t end = std::min(nvmes.size(), start + 4);
      std::string header = "  " + pad("", first);
      for (size_t i = start; i < end; ++i) {
        const NvmeController* c = r.inv.nvme_at(nvmes[i]);
        header += pad((c && !c->name.empty() ? c->name + " " : "") + nvmes[i].str(), width);
      }
      out += header + "\n";
      for (const Bdf& g : gpus) {
        std::string line = "  " + pad("GPU " + g.str(), first);
        for (size_t i = start; i < end; ++i) {
          auto it = std::find_if(r.pairs.begin(), r.pairs.end(), [&](const PairDecision& d) {
            return d.path.pair.gpu == g && d.path.pair.nvme == nvmes[i];
          });
          std::string c = it == r.pairs.end() ? "" : cell(*it, r.rules);
          const char* color = it == r.pairs.end() ? "0" : it->verdict == Verdict::kSupported ? "32" : it->verdict == Verdict::kUnknown ? "35" : "1;31";
          line += colored(style, color, pad(c, width));
        }
        out += line + "\n";
      }
    }
    out += "  ok = allowed   NO = the kernel refuses   NO* = refused, though pre-Zen AMD hardware passes this "
           "direction (writes)   BAD = never use P2PDMA on this kernel   ? = unknown (see below)\n";
  }

  if (r.rules.known_bad && !r.pairs.empty()) {
    out += "\nAll pairs: NOT SAFE on this kernel — " + std::string(r.rules.known_bad->name) +
           " kernels can corrupt memory with P2PDMA, whatever the path rules say (the kernel's own answers are in "
           "`p2pcheck explain`)\n  fix   boot another kernel before using the fastpath\n";
  }
  for (const auto& d : r.pairs) {
    bool disagreement = d.kernel_agrees == false;
    if (!disagreement && (d.verdict == Verdict::kSupported || (r.rules.known_bad && d.map_type != MapType::kNotSupported))) continue;
    const NvmeController* c = r.inv.nvme_at(d.path.pair.nvme);
    out += "\nGPU " + d.path.pair.gpu.str() + " <-> " + (c && !c->name.empty() ? c->name + " " : "") + d.path.pair.nvme.str() +
           ": " + colored(style, d.verdict == Verdict::kUnknown ? "35" : "1;31",
                          d.verdict == Verdict::kUnknown ? "UNKNOWN" : "NOT SUPPORTED") +
           " (" + to_string(d.map_type) + ")\n";
    out += "  why   " + d.rule + "\n";
    if (d.to_gpu.hardware == "passes") out += "        storage -> GPU: " + d.to_gpu.reason + "\n        GPU -> storage: " + d.from_gpu.reason + "\n";
    for (const auto& u : d.unknowns) out += "  unknown  " + u + "\n";
    if (!d.acs_fix.empty())
      out += "  fix   boot with " + d.acs_fix + " — costs IOMMU isolation for the devices below those ports (they may "
             "share an IOMMU group; VFIO passthrough loses isolation)\n";
    else if (d.map_type == MapType::kNotSupported && d.host_checked && r.rules.p2pdma_enabled != false &&
             !d.host.same_host_bridge && d.rule.find("REQ_SAME_HOST_BRIDGE") != std::string::npos)
      out += "  fix   put the GPU and the NVMe below the same host bridge (one root bus of one socket: " +
             d.host.bridges.front().host_bridge + " or " + d.host.bridges.back().host_bridge +
             "), or under one PCIe switch\n";
    else if (d.map_type == MapType::kNotSupported && d.host_checked && r.rules.p2pdma_enabled != false)
      out += "  fix   put the GPU and the NVMe under one PCIe switch (P2P then stays below it on any CPU), or use a "
             "platform whose CPU or host bridge the kernel allows\n";
    if (!d.later.empty()) out += "  later " + d.later + "\n";
    if (d.kernel)
      out += "  kernel says distance " + std::to_string(d.kernel->distance) +
             (d.kernel->map_type == MapType::kUnknown ? "" : std::string(", ") + to_string(d.kernel->map_type)) +
             (d.kernel_agrees == true ? " (agrees)" : " — DISAGREES with p2pcheck") + "\n";
    out += "  see   p2pcheck explain " + d.path.pair.gpu.str() + " " + d.path.pair.nvme.str() + "\n";
  }
  return out;
}

std::string explain_text(const CheckReport& r, const PairDecision& d, const TextStyle& style) {
  std::string out;
  const NvmeController* c = r.inv.nvme_at(d.path.pair.nvme);
  out += "GPU " + function_label(r.topo.at(d.path.pair.gpu)) + "\n";
  out += "NVMe " + (c && !c->name.empty() ? c->name + " " : "") + function_label(r.topo.at(d.path.pair.nvme)) + "\n";
  out += "kernel " + (r.rules.release.empty() ? std::string("unknown") : r.rules.release) + " — " + r.rules.table_note + "\n\n";
  out += "1. Walk (calc_map_type_and_dist: provider = GPU, client = NVMe)\n";
  const P2pWalk& w = d.path.walk;
  auto acs_of = [](const Function* f) {
    std::string t = acs_text(f->acs);
    return t.empty() ? std::string("no ACS capability") : t;
  };
  for (size_t i = 0; i < w.provider_side.size(); ++i)
    out += "   up    " + function_label(*w.provider_side[i]) + "  <" + role_of(*w.provider_side[i], r.inv) + ">  " + acs_of(w.provider_side[i]) + "\n";
  if (w.common) {
    out += "   meet  " + function_label(*w.common) + "  <common upstream bridge>  " + acs_of(w.common) + "\n";
  } else {
    out += "   —     no common upstream bridge: the chains end at different root-bus devices\n";
  }
  for (auto it = w.client_side.rbegin(); it != w.client_side.rend(); ++it)
    out += "   down  " + function_label(**it) + "  <" + role_of(**it, r.inv) + ">  " + acs_of(*it) + "\n";
  out += "   path distance " + std::to_string(w.distance) + "\n\n";
  out += "2. ACS redirect (RR, CR or EC in ACS Control)\n";
  if (!w.common) {
    out += "   not consulted: without a common bridge the traffic goes through the host bridge anyway\n";
  } else {
    for (const Function* f : w.acs_checked) out += "   " + f->bdf.str() + "  " + acs_of(f) + "\n";
    out += w.acs_redirect.empty() ? (w.acs_unknown.empty() ? "   none set: BUS_ADDR\n" : "   unknown on some devices\n")
                                  : "   redirect set: the kernel maps THRU_HOST_BRIDGE\n";
  }
  out += "\n3. Host check";
  if (!d.host_checked) {
    out += ": not needed (the traffic never reaches the root complex)\n";
  } else {
    out += " (cpu_supports_p2pdma() || host_bridge_whitelist())\n";
    out += "   CPU rule: " + std::string(d.host.cpu_supports == true ? "yes" : d.host.cpu_supports == false ? "no" : "unknown") +
           " (" + (r.machine.cpu.vendor_id.empty() ? "no cpuinfo" : r.machine.cpu.vendor_id + " family " + std::to_string(r.machine.cpu.family)) + ")\n";
    for (const auto& b : d.host.bridges) {
      out += "   host bridge " + b.host_bridge + ": " +
             (b.device ? "device " + b.device->str() + " [" + b.ids() + "] " : std::string(b.device_unknown ? "device unknown (needs root) " : "no host bridge device "));
      out += b.entry ? std::string("allowlisted (") + b.entry->name + (b.entry->req_same_host_bridge ? ", REQ_SAME_HOST_BRIDGE" : "") + ")"
                     : std::string("not allowlisted");
      out += b.passes == true ? " -> passes\n" : b.passes == false ? " -> fails\n" : " -> unknown\n";
    }
    out += std::string("   host check: ") +
           (d.host.allowed == true ? "passes" : d.host.allowed == false ? "fails" : "unknown") +
           (d.host.cpu_supports == true ? " (the CPU rule alone allows it)" : "") + "\n";
  }
  out += "\n" + colored(style, d.verdict == Verdict::kSupported ? "32" : "1;31", "Verdict: " + std::string(to_string(d.map_type)) + ", " + to_string(d.verdict)) +
         (d.distance ? ", distance " + std::to_string(*d.distance) : "") + "\n";
  out += "  rule  " + d.rule + "\n";
  out += "  storage -> GPU: " + std::string(to_string(d.to_gpu.verdict)) + " — " + d.to_gpu.reason + "\n";
  out += "  GPU -> storage: " + std::string(to_string(d.from_gpu.verdict)) + " — " + d.from_gpu.reason + "\n";
  for (const auto& u : d.unknowns) out += "  unknown: " + u + "\n";
  if (d.kernel)
    out += "  the running kernel (p2pprobe): distance " + std::to_string(d.kernel->distance) +
           (d.kernel->map_type == MapType::kUnknown ? " (map type not observed: " + d.kernel->map_note + ")"
                                                    : std::string(", ") + to_string(d.kernel->map_type)) +
           (d.kernel_agrees == true ? " — agrees" : " — DISAGREES") + "\n";
  if (!d.acs_fix.empty()) out += "  fix   " + d.acs_fix + " (weakens IOMMU isolation below those ports)\n";
  if (!d.later.empty()) out += "  later " + d.later + "\n";
  std::optional<double> ceiling = path_ceiling(d.path);
  if (ceiling) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f GB/s", *ceiling / 1e9);
    out += "  bandwidth ceiling of the path: " + std::string(buf) + " per direction (slowest hop, after encoding)\n";
  }
  return out;
}

}  // namespace p2pcheck
