#include "p2pcheck/report/common.h"

#include <algorithm>
#include <cstdio>

#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

std::string ascii_text(std::string_view text) {
  static const std::pair<std::string_view, std::string_view> kSpelled[] = {
      {"—", "-"},     {"–", "-"},     {"→", "->"}, {"←", "<-"}, {"↔", "<->"},   {"…", "..."}, {"×", "x"},
      {"≥", ">="},    {"≤", "<="},    {"µ", "u"},  {"“", "\""}, {"”", "\""},    {"‘", "'"},   {"’", "'"},
      {"└─ ", "`- "}, {"├─ ", "|- "}, {"│", "|"},  {"─", "-"},  {"\u00a0", " "}};
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      out += text[i++];
      continue;
    }
    bool spelled = false;
    for (const auto& [from, to] : kSpelled)
      if (text.substr(i, from.size()) == from) {
        out += to;
        i += from.size();
        spelled = true;
        break;
      }
    if (spelled) continue;
    // One "?" per character: skip the UTF-8 continuation bytes (10xxxxxx) after the lead byte.
    out += '?';
    for (++i; i < text.size() && (static_cast<unsigned char>(text[i]) & 0xc0) == 0x80;) ++i;
  }
  return out;
}

nlohmann::ordered_json json_envelope(const std::string& schema, const std::string& source) {
  nlohmann::ordered_json j = report_detail::object_for(24);
  j["schema"] = schema;
  j["schema_version"] = kJsonSchemaVersion;
  j["tool_version"] = kToolVersion;
  j["source"] = source;
  return j;
}

nlohmann::ordered_json identity_json(const MachineIdentity& id) {
  using nlohmann::ordered_json;
  auto value = [](const std::optional<std::string>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
  ordered_json j = {{"hostname", value(id.hostname)},
                    {"dmi_vendor", value(id.dmi_vendor)},
                    {"dmi_product", value(id.dmi_product)},
                    {"dmi_serial", value(id.dmi_serial)},
                    {"redacted", id.redacted}};
  // Why each null is null ("needs root" for the serial), so a fleet can tell unread from absent.
  ordered_json why = ordered_json::object();
  for (const auto& [key, reason] : id.why) why[key] = reason;
  j["unread"] = std::move(why);
  return j;
}

namespace {

// A value of the identity, or why it is not there ("unknown (not in this lspci output)").
std::string identity_value(const MachineIdentity& id, const std::optional<std::string>& value, const char* key) {
  if (value && !value->empty()) return *value;
  auto why = id.why.find(key);
  // Why: a read's error, which a capture's manifest records (`unreadable`) as any text it likes.
  return "unknown" + (why == id.why.end() || why->second.empty() ? std::string() : " (" + printable(why->second) + ")");
}

}  // namespace

std::string identity_line(const MachineIdentity& id) {
  // The model's names are made printable where they are read (model/machine.cc).
  std::string dmi;
  bool vendor = id.dmi_vendor && !id.dmi_vendor->empty(), product = id.dmi_product && !id.dmi_product->empty();
  if (vendor || product) {
    dmi = vendor && product ? *id.dmi_vendor + " " + *id.dmi_product
          : vendor          ? *id.dmi_vendor + ", product " + identity_value(id, id.dmi_product, "dmi_product")
                            : "vendor " + identity_value(id, id.dmi_vendor, "dmi_vendor") + ", " + *id.dmi_product;
  } else {
    dmi = "DMI " + identity_value(id, id.dmi_product, "dmi_product");
  }
  std::string host = "host " + identity_value(id, id.hostname, "hostname");
  if (id.redacted && id.hostname) host += " (redacted)";
  return "machine: " + dmi + ", " + host + "\n";
}

std::string name_prefix(const Function& fn) { return fn.name.empty() ? "" : printable(fn.name) + " "; }

nlohmann::ordered_json locality_json(const Locality& l, bool nodes) {
  using nlohmann::ordered_json;
  ordered_json j = {{"class", to_string(l.cls)},
                    {"nvidia_smi", *l.nvidia_smi ? ordered_json(l.nvidia_smi) : ordered_json(nullptr)}};
  if (nodes) {
    j["gpu_numa_node"] = l.gpu_node ? ordered_json(*l.gpu_node) : ordered_json(nullptr);
    j["nvme_numa_node"] = l.nvme_node ? ordered_json(*l.nvme_node) : ordered_json(nullptr);
  }
  j["why"] = l.why.empty() ? ordered_json(nullptr) : ordered_json(l.why);
  return j;
}

std::string nvme_name_prefix(const Inventory& inv, const Bdf& bdf) {
  const NvmeController* c = inv.nvme_at(bdf);
  return c && !c->name.empty() ? c->name + " " : "";
}

namespace report_detail {

json opt_bdf(const std::optional<Bdf>& bdf) { return bdf ? json(bdf->str()) : json(nullptr); }
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

std::string causes_line(const Causes& causes) {
  std::vector<std::string> parts;
  for (const auto& [id, subjects] : causes) {
    std::string part = id;
    if (subjects.size() > 3)
      part += " (" + subjects.front() + " and " + std::to_string(subjects.size() - 1) + " more)";
    else if (!subjects.empty())
      part += " (" + join(subjects, ", ") + ")";
    parts.push_back(part);
  }
  return join(parts, ", ");
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

json hops_json(const Topology& topo, const Inventory& inv, const PairWalk& walk) {
  json hops = json::array();
  for (const Hop& hop : walk_hops(inv, walk)) {
    json h = object_for(6);
    if (hop.function) {
      h["bdf"] = hop.function->bdf.str();
      h["host_bridge"] = nullptr;
      h["role"] = hop.role;
      h["common"] = hop.function == walk.common;
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

json nvme_name_json(const PairWalk& walk, const Inventory& inv) {
  const NvmeController* nvme = inv.nvme_at(walk.client->bdf);
  return nvme && !nvme->name.empty() ? json(nvme->name) : json(nullptr);
}

json common_bridge_json(const PairWalk& walk) { return walk.common ? json(walk.common->bdf.str()) : json(nullptr); }

std::string colored(const TextStyle& style, const char* code, const std::string& text) {
  return style.color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
}

std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (unsigned char c : text)
    if ((c & 0xc0) != 0x80) ++n;
  return n;
}

namespace {

// `text` less its ANSI colour sequences (ESC ... m), which take no column.
std::string without_colour(std::string_view text) {
  std::string plain;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b') {
      while (i < text.size() && text[i] != 'm') ++i;
      continue;
    }
    plain += text[i];
  }
  return plain;
}

std::size_t visible_width(std::string_view text) { return code_points(without_colour(text)); }

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ai = i, bj = j;
      while (ai < a.size() && a[ai] == '0') ++ai;
      while (bj < b.size() && b[bj] == '0') ++bj;
      std::size_t ae = ai, be = bj;
      while (ae < a.size() && digit(a[ae])) ++ae;
      while (be < b.size() && digit(b[be])) ++be;
      if (ae - ai != be - bj) return ae - ai < be - bj;
      if (int c = a.substr(ai, ae - ai).compare(b.substr(bj, be - bj)); c != 0) return c < 0;
      i = ae, j = be;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

std::string pad(const std::string& s, size_t width) {
  const size_t len = code_points(s);  // code points, so the columns line up
  return len >= width ? s + " " : s + std::string(width - len, ' ');
}

namespace {

// Where a folded line's next lines start: under the text after a label ("  FAIL    ", "  why   ",
// "evidence: ", "  - ", "1. "), else two columns in from the line's own indent.
std::size_t hanging_indent(std::string_view line) {
  const std::string plain = without_colour(line);
  const std::size_t lead = std::min(plain.find_first_not_of(' '), plain.size());
  const std::size_t token_end = std::min(plain.find(' ', lead), plain.size());
  const std::size_t text = std::min(plain.find_first_not_of(' ', token_end), plain.size());
  const std::string_view token = std::string_view(plain).substr(lead, token_end - lead);
  const bool label = text - token_end >= 2 || token == "-" || token.ends_with(':') || token.ends_with('.');
  if (!label || text == plain.size()) return lead + 2;
  return code_points(std::string_view(plain).substr(0, text));
}

}  // namespace

std::string wrap_line(std::string_view line, std::size_t width, std::size_t indent) {
  std::string out;
  std::size_t column = 0;
  bool first = true;
  for (std::size_t start = 0; start <= line.size();) {
    std::size_t end = std::min(line.find(' ', start), line.size());
    std::string_view word = line.substr(start, end - start);
    const std::size_t w = visible_width(word);
    if (first) {
      out += word;
      column = w;
      first = false;
    } else if (!word.empty() && column > indent && column + 1 + w > width) {
      // A break only once the line holds more than its indent: a long word gets a line of its own.
      while (!out.empty() && out.back() == ' ') out.pop_back();  // no trailing blank before the break
      out += "\n" + std::string(indent, ' ');
      out += word;
      column = indent + w;
    } else {
      out += ' ';
      out += word;
      column += 1 + w;
    }
    start = end + 1;
  }
  return out;
}

std::string fold_to_width(const std::string& text, std::size_t width) {
  if (width == 0) return text;
  std::string out;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line(text.data() + start, end - start);
    out += visible_width(line) > width ? wrap_line(line, width, hanging_indent(line)) : std::string(line);
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace report_detail

using namespace report_detail;

std::string function_label(const Function& fn) {
  std::string label = fn.bdf.str() + (fn.name.empty() ? "" : " (" + printable(fn.name) + ")") + " [" +
                      hex(fn.vendor, 4) + ":" + hex(fn.device, 4) + "]";
  std::string vendor_name = pci_vendor_name(fn.vendor), device_name = pci_device_name(fn.vendor, fn.device);
  if (!device_name.empty()) {
    label += " " + (vendor_name.empty() ? "" : vendor_name + " ") + device_name;
  } else if (!vendor_name.empty()) {
    label += " " + vendor_name + " device";
  }
  return label;
}

json function_json(const Topology& topo, const Function& fn, const Inventory& inv) {
  json bars = json::array();
  for (const Bar& bar : fn.bars)
    bars.push_back({{"index", bar.index},
                    {"start", "0x" + hex(bar.start, 16)},
                    {"size", bar.size},
                    {"flags", "0x" + hex(bar.flags, 8)},
                    {"io", bar.is_io()},
                    {"prefetchable", bar.prefetchable()},
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
      {"vendor_name", pci_vendor_name(fn.vendor)},
      {"device_name", pci_device_name(fn.vendor, fn.device)},
      {"driver", fn.driver.empty() ? json(nullptr) : json(fn.driver)},
      {"numa_node", fn.numa_unknown.empty() ? json(fn.numa_node) : json(nullptr)},
      {"iommu_group", opt(fn.iommu_group)},
      {"role", role_of(fn, inv)},
      {"port_type", to_string(fn.port_type)},
      {"config_size", fn.config_size},
      {"config_note", fn.config_note.empty() ? json(nullptr) : json(fn.config_note)},
      {"link", link_json(topo, fn)},
      {"acs", acs_json(fn.acs)},
      {"bars", std::move(bars)},
      {"resizable_bar", std::move(rebar)},
      {"sriov", fn.sriov_presence == Presence::kPresent ? json{{"presence", "present"},
                                                               {"total_vfs", fn.sriov.total_vfs},
                                                               {"num_vfs", fn.sriov.num_vfs},
                                                               {"vf_device", hex(fn.sriov.vf_device, 4)}}
                                                        : json{{"presence", to_string(fn.sriov_presence)}}},
      {"physfn", opt_bdf(fn.physfn)},
  };
  if (fn.p2pmem)
    j["p2pmem"] = {{"size", opt(fn.p2pmem->size)},
                   {"available", opt(fn.p2pmem->available)},
                   {"published", opt(fn.p2pmem->published)},
                   {"allocate", fn.p2pmem->has_allocate}};
  else
    j["p2pmem"] = nullptr;
  return j;
}

json tri_json(Tri value) {
  if (value == Tri::kUnknown) return json(nullptr);
  return json(value == Tri::kYes);
}

}  // namespace p2pcheck
