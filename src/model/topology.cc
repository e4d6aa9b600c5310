// Reads the PCI hierarchy from sysfs through the source layer.
#include "p2pcheck/model/topology.h"

#include <algorithm>
#include <bitset>
#include <tuple>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// A host bridge directory, "pci0000:40": its domain and root bus; nullopt for anything else.
struct HostBridgeDir {
  std::string domain, bus;
};
std::optional<HostBridgeDir> host_bridge_dir(std::string_view name) {
  if (name.substr(0, 3) != "pci") return std::nullopt;
  name.remove_prefix(3);
  size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon < 4 || colon > 8) return std::nullopt;
  std::string_view domain = name.substr(0, colon), bus = name.substr(colon + 1);
  if (!is_hex_digits(domain) || bus.size() != 2 || !is_hex_digits(bus)) return std::nullopt;
  return HostBridgeDir{std::string(domain), std::string(bus)};
}

std::uint64_t required_hex(Source& src, const std::string& path, std::uint64_t max) {
  FileRead r = src.read(path);
  if (!r.ok())
    throw Error(path,
                r.status == ReadStatus::kMissing ? "missing; every PCI function has it" : "cannot read: " + r.error);
  auto value = parse_hex(r.bytes);
  if (!value || *value > max)
    throw Error(path, "expected a hex number such as 0x1002, found '" + std::string(trim(r.bytes)).substr(0, 40) + "'");
  return *value;
}

std::optional<std::int64_t> optional_dec(Source& src, const std::string& path) {
  FileRead r = src.read(path);
  if (!r.ok()) return std::nullopt;
  auto value = parse_dec(r.bytes);
  if (!value) throw Error(path, "expected a decimal number, found '" + std::string(trim(r.bytes)).substr(0, 40) + "'");
  return value;
}

std::vector<Bar> parse_resource(const std::string& path, const std::string& text) {
  // Views into `text`: a resource file is ~17 lines of three 18-byte words, and copying each
  // (split_lines, split_words) was most of the time spent reading a function.
  // The kernel prints each line "0x%016llx 0x%016llx 0x%016llx" (resource_show()); most are an
  // unused BAR or window, all zeros, which makes no Bar: known at a glance, not parsed.
  constexpr std::string_view kUnused = "0x0000000000000000 0x0000000000000000 0x0000000000000000";
  std::vector<Bar> bars;
  int index = 0;
  for (std::string_view rest = text; !rest.empty();) {
    std::string_view line = next_line(rest);
    if (line == kUnused) {
      ++index;
      continue;
    }
    std::string_view words[3] = {next_word(line), next_word(line), next_word(line)};
    if (words[0].empty()) continue;
    if (words[2].empty() || !next_word(line).empty())
      throw Error(path, "line " + std::to_string(index + 1) + ": expected 'start end flags' in hex");
    auto start = parse_hex(words[0]), end = parse_hex(words[1]), flags = parse_hex(words[2]);
    if (!start || !end || !flags) throw Error(path, "line " + std::to_string(index + 1) + ": expected hex numbers");
    if (*end > *start || (*end == *start && *start != 0)) bars.push_back(Bar{index, *start, *end - *start + 1, *flags});
    ++index;
  }
  return bars;
}

void read_p2pmem(Source& src, const std::string& dir, Function& fn) {
  std::vector<std::string> names = src.list(path_in(dir, "p2pmem"));
  if (names.empty()) return;
  P2pmem p;
  if (auto v = optional_dec(src, path_in(dir, "p2pmem/size"))) p.size = static_cast<std::uint64_t>(*v);
  if (auto v = optional_dec(src, path_in(dir, "p2pmem/available"))) p.available = static_cast<std::uint64_t>(*v);
  if (auto v = optional_dec(src, path_in(dir, "p2pmem/published"))) p.published = *v != 0;
  p.has_allocate = std::find(names.begin(), names.end(), "allocate") != names.end();
  fn.p2pmem = p;
}

// Config files come in the sizes the kernel exposes; anything else is a broken capture.
void check_config_size(const std::string& path, size_t size) {
  if (size == 64 || size == 128 || size == 256 || size == 4096) return;
  throw Error(path, std::to_string(size) +
                        " bytes; expected 4096 (PCIe, read as root), 256 (conventional PCI) "
                        "or 64 (read without root)");
}

// The four link attributes as the files give them (nullopt where a file says "Unknown" or 0).
LinkInfo read_link_files(Source& src, const std::string& dir) {
  LinkInfo link;
  if (FileRead r = src.read(path_in(dir, "current_link_speed")); r.ok()) link.cur_speed = parse_link_speed(r.bytes);
  if (FileRead r = src.read(path_in(dir, "max_link_speed")); r.ok()) link.max_speed = parse_link_speed(r.bytes);
  if (auto w = optional_dec(src, path_in(dir, "current_link_width")); w && *w > 0)
    link.cur_width = static_cast<int>(*w);
  if (auto w = optional_dec(src, path_in(dir, "max_link_width")); w && *w > 0) link.max_width = static_cast<int>(*w);
  return link;
}

// What the attributes know wins, as it always has; what they leave unknown keeps what
// decode_config() read from Link Capabilities and Link Status.
void take_known(LinkInfo& into, const LinkInfo& attributes) {
  if (attributes.cur_speed) into.cur_speed = attributes.cur_speed;
  if (attributes.max_speed) into.max_speed = attributes.max_speed;
  if (attributes.cur_width) into.cur_width = attributes.cur_width;
  if (attributes.max_width) into.max_width = attributes.max_width;
}

// The config space decoded into `fn`, or why it could not be: the note each view shows.
void take_config(const PciDecoder& decoder, const FileRead& config, Function& fn) {
  if (config.ok()) {
    decoder.decode_config(fn, config.bytes);
  } else if (config.status == ReadStatus::kDenied) {
    fn.config_note = "config space not readable (" + config.error + "): needs root";
  } else if (config.status == ReadStatus::kNotCarried) {
    fn.config_note = "config space " + config.error;  // "not in this udev database"
    fn.config_not_carried = config.error;
  } else {
    fn.config_note =
        "config space not available: " + (config.error.empty() ? std::string("no config file") : config.error);
  }
}

// What an image of config space was made without (a plan states ACS only where it says it, and never
// Resizable BAR or SR-IOV without VFs): the input declares those registers not carried below the
// config file (".../config/acs", "/rebar", "/sriov"), so what the image lacks reads unknown, not
// absent, and for ACS the note says why.
void take_uncarried_capabilities(Source& src, const std::string& config_path, Function& fn) {
  const NotCarried& nc = src.not_carried();
  if (nc.empty() || nc.covers(config_path)) return;  // a format without config space says so of the file
  auto unknown = [&](const char* cap, Presence& presence) {
    if (presence != Presence::kAbsent || !nc.covers(config_path + "/" + cap)) return false;
    presence = Presence::kUnknown;
    return true;
  };
  if (unknown("acs", fn.acs.presence)) fn.config_note = "ACS " + nc.phrase;
  unknown("rebar", fn.rebar_presence);
  unknown("sriov", fn.sriov_presence);
}

Function read_function(Source& src, const PciDecoder& decoder, const std::string& link_name, const std::string& dir,
                       FunctionDetail detail) {
  Function fn;
  fn.sysfs_path = dir;
  auto bdf = Bdf::parse(link_name);
  if (!bdf) throw Error("/sys/bus/pci/devices/" + link_name, "entry is not named like a PCI address (dddd:bb:dd.f)");
  fn.bdf = *bdf;
  if (auto pf = src.link_target(path_in(dir, "physfn"))) {
    fn.physfn = Bdf::parse(basename(*pf));
    if (!fn.physfn) throw Error(path_in(dir, "physfn"), "link does not point at a PCI function: " + *pf);
  }
  // Config space first: where its bytes show what an attribute file says (config_attributes(): the
  // IDs, the revision, the link), that file is not read. Imports without config read them all.
  const std::string config_path = path_in(dir, "config");
  FileRead config = src.read(config_path);
  if (config.ok()) check_config_size(config_path, config.bytes.size());
  ConfigAttributes from_config = config.ok() ? config_attributes(config.bytes, fn.is_virtfn()) : ConfigAttributes{};
  fn.vendor = from_config.vendor ? *from_config.vendor
                                 : static_cast<std::uint16_t>(required_hex(src, path_in(dir, "vendor"), 0xffff));
  fn.device = from_config.device ? *from_config.device
                                 : static_cast<std::uint16_t>(required_hex(src, path_in(dir, "device"), 0xffff));
  // Always the file: early quirks rewrite pdev->class after it was read from config space
  // (drivers/pci/quirks.c), and a class the kernel refused reads 0.
  fn.class_code = static_cast<std::uint32_t>(required_hex(src, path_in(dir, "class"), 0xffffff));
  if (auto ids = from_config.subsystem(fn.class_code)) {
    std::tie(fn.subsystem_vendor, fn.subsystem_device) = *ids;
  } else {
    if (FileRead r = src.read(path_in(dir, "subsystem_vendor")); r.ok())
      fn.subsystem_vendor = static_cast<std::uint16_t>(parse_hex(r.bytes).value_or(0));
    if (FileRead r = src.read(path_in(dir, "subsystem_device")); r.ok())
      fn.subsystem_device = static_cast<std::uint16_t>(parse_hex(r.bytes).value_or(0));
  }
  if (from_config.revision)
    fn.revision = *from_config.revision;
  else if (FileRead r = src.read(path_in(dir, "revision")); r.ok())
    fn.revision = static_cast<std::uint8_t>(parse_hex(r.bytes).value_or(0));
  const std::string driver_path = path_in(dir, "driver");
  if (auto driver = src.link_target(driver_path))
    fn.driver = basename(*driver);
  else if (auto why = src.not_carried(driver_path))
    fn.driver_not_carried = *why;
  if (auto group = src.link_target(path_in(dir, "iommu_group")))
    fn.iommu_group = static_cast<int>(parse_dec(basename(*group)).value_or(-1));
  if (detail == FunctionDetail::kAll) {
    read_function_numa(src, fn);
    read_function_bars(src, fn);
  } else {
    fn.numa_unknown = kNumaNotRead;  // run_check() reads its pairs' ends'
  }

  take_config(decoder, config, fn);
  if (config.ok()) take_uncarried_capabilities(src, config_path, fn);
  take_known(fn.link, from_config.link ? *from_config.link : read_link_files(src, dir));
  read_p2pmem(src, dir, fn);
  return fn;
}

}  // namespace

void read_function_numa(Source& source, Function& fn) {
  const std::string path = path_in(fn.sysfs_path, "numa_node");
  FileRead r = source.read(path);
  fn.numa_node = -1;
  fn.numa_unknown.clear();
  if (r.ok()) {
    auto node = parse_dec(r.bytes);
    // The kernel prints an int: NUMA_NO_NODE (-1) or a node below MAX_NUMNODES (1 << 10).
    if (!node || *node < -1 || *node >= 1 << 10)
      throw Error(path, "expected a NUMA node (-1 to 1023), found '" + std::string(trim(r.bytes)).substr(0, 40) + "'");
    fn.numa_node = static_cast<int>(*node);
  } else if (r.status == ReadStatus::kNotCarried) {
    fn.numa_unknown = r.error;
  } else if (r.status != ReadStatus::kMissing) {
    fn.numa_unknown = "not readable (" + r.error + ")";
  }
  // Missing: the kernel has the attribute only with CONFIG_NUMA; without it there is one node,
  // which is what NUMA_NO_NODE (-1) says on a one-node machine.
}

void read_numa_nodes(Source& source, Topology& topo) {
  const std::string path = "/sys/devices/system/node/online";
  FileRead r = source.read(path);
  topo.numa_nodes.reset();
  topo.numa_nodes_unknown.clear();
  if (!r.ok()) {
    topo.numa_nodes_unknown = r.status == ReadStatus::kNotCarried ? r.error
                              : r.status == ReadStatus::kMissing  ? "no " + path
                                                                  : "not readable (" + r.error + ")";
    return;
  }
  // A node list as the kernel prints it (bitmap_print_to_pagebuf): "0", "0-3", "0,2-3".
  // The nodes as a set of the kernel's at most 1024 (NODES_SHIFT 10): a list repeating "0-1023" a
  // million times counts 1024 nodes, not a sum that wraps an int.
  std::bitset<1024> nodes;
  for (std::string_view range : split(trim(r.bytes), ',')) {
    std::size_t dash = range.find('-');
    auto first = parse_dec(range.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parse_dec(range.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first || *last >= 1 << 10)
      throw Error(path, "expected a node list such as 0-1, found '" + std::string(trim(r.bytes)).substr(0, 40) + "'");
    const std::bitset<1024> all = ~std::bitset<1024>();
    nodes |= (all << static_cast<std::size_t>(*first)) & (all >> static_cast<std::size_t>(1023 - *last));
  }
  if (nodes.none()) throw Error(path, "empty node list");
  topo.numa_nodes = static_cast<int>(nodes.count());
}

void read_function_bars(Source& source, Function& fn) {
  const std::string resource_path = path_in(fn.sysfs_path, "resource");
  if (FileRead r = source.read(resource_path); r.ok()) fn.bars = parse_resource(resource_path, r.bytes);
}

const Function* Topology::find(const Bdf& bdf) const {
  auto it = functions.find(bdf);
  return it == functions.end() ? nullptr : &it->second;
}

const Function& Topology::at(const Bdf& bdf) const {
  const Function* fn = find(bdf);
  if (!fn) throw Error("", "no PCI function " + bdf.str() + " in " + source_description);
  return *fn;
}

const HostBridge* Topology::host_bridge_of(const Function& fn) const {
  auto it = host_bridges.find(fn.host_bridge);
  return it == host_bridges.end() ? nullptr : &it->second;
}

const Function* Topology::upstream_bridge(const Function& fn) const {
  const Function* dev = &fn;
  if (fn.physfn) {
    if (const Function* pf = find(*fn.physfn)) dev = pf;
  }
  if (!dev->parent) return nullptr;
  return find(*dev->parent);
}

std::vector<const Function*> Topology::upstream_chain(const Function& fn) const {
  std::vector<const Function*> chain;
  for (const Function* at = &fn; at && chain.size() < kLongestChain; at = upstream_bridge(*at)) chain.push_back(at);
  return chain;
}

LinkCheck check_link(const Topology& topo, const Function& fn) {
  LinkCheck check;
  // VFs share their PF's link; root-bus devices have no port above them in sysfs.
  if (fn.is_virtfn() || !fn.parent) return check;
  // A root or downstream port's Link Status describes the link below it, not the one above, so
  // only upstream-facing functions (endpoints, switch upstream ports, bridges to PCI) are judged,
  // against the port above them that shares the link.
  if (fn.port_type == PortType::kRootPort || fn.port_type == PortType::kDownstreamPort) return check;
  if (fn.port_type == PortType::kUnknown && fn.is_bridge()) return check;
  const Function* port = topo.find(*fn.parent);
  if (!port) return check;
  check.applies = fn.port_type != PortType::kNotPcie;  // conventional PCI: no PCIe link of its own
  auto lower = [](auto a, auto b) -> decltype(a) {
    if (a && b) return std::min(*a, *b);
    return a ? a : b;
  };
  check.capable_speed = lower(fn.link.max_speed, port->link.max_speed);
  check.capable_width = lower(fn.link.max_width, port->link.max_width);
  check.downtrained = (check.capable_speed && fn.link.cur_speed && *fn.link.cur_speed < *check.capable_speed) ||
                      (check.capable_width && fn.link.cur_width && *fn.link.cur_width < *check.capable_width);
  check.known = check.capable_speed && check.capable_width && fn.link.cur_speed && fn.link.cur_width;
  return check;
}

Topology read_topology(Source& source, const PciDecoder& decoder, FunctionDetail detail) {
  Topology topo;
  topo.source_description = source.describe();
  topo.from_dump = !source.is_live();
  const std::string devices = "/sys/bus/pci/devices";
  if (!source.exists(devices))
    throw Error(devices, "missing in " + source.describe() + "; expected the PCI devices of a Linux sysfs");

  for (const std::string& name : source.list(devices)) {
    std::string link = devices + "/" + name;
    auto dir = source.resolve_directory(link);
    if (!dir)
      throw Error(link, "points at a device directory that does not exist (device removed, or an incomplete capture)");
    Function fn = read_function(source, decoder, name, *dir, detail);

    // /sys/devices/.../pci0000:40/0000:40:01.1/0000:41:00.0: host bridge, then one BDF per level.
    std::vector<std::string> parts;
    for (size_t i = 1, j; i < dir->size(); i = j + 1) {
      j = dir->find('/', i);
      if (j == std::string::npos) j = dir->size();
      parts.push_back(dir->substr(i, j - i));
    }
    size_t hb = parts.size();
    std::optional<HostBridgeDir> hb_dir;
    for (size_t i = 0; i < parts.size(); ++i)
      if (auto d = host_bridge_dir(parts[i])) {
        hb = i;
        hb_dir = d;
      }
    if (!hb_dir || parts.back() != name)
      throw Error(link, "resolves to " + *dir + ", which is not below a host bridge directory (pciDDDD:BB)");
    std::string hb_id = hb_dir->domain + ":" + hb_dir->bus;
    HostBridge& bridge = topo.host_bridges[hb_id];
    if (bridge.id.empty()) {
      bridge.id = hb_id;
      bridge.domain = static_cast<std::uint32_t>(parse_hex(hb_dir->domain).value_or(0));
      bridge.bus = static_cast<std::uint8_t>(parse_hex(hb_dir->bus).value_or(0));
      for (size_t i = 0; i <= hb; ++i) bridge.sysfs_path += "/" + parts[i];
    }
    fn.host_bridge = hb_id;
    if (parts.size() >= hb + 3) {
      fn.parent = Bdf::parse(parts[parts.size() - 2]);
      if (!fn.parent) throw Error(*dir, "parent directory '" + parts[parts.size() - 2] + "' is not a PCI address");
    }
    if (fn.config_size == 64) topo.config_truncated = true;
    topo.functions.emplace(fn.bdf, std::move(fn));
  }

  find_host_bridge_devices(topo);
  read_numa_nodes(source, topo);
  return topo;
}

void find_host_bridge_devices(Topology& topo) {
  // Each function to its bridge in one pass: a udev database with a root bus per function has as
  // many bridges as functions, and a pass over the functions per bridge took 12 s at 20k.
  for (auto& [id, bridge] : topo.host_bridges) {
    bridge.root_devices.clear();
    bridge.bridge_device.reset();
    bridge.bridge_device_unknown = false;
    bridge.bridge_device_not_carried.clear();
  }
  for (const auto& [bdf, fn] : topo.functions)
    if (!fn.parent && !fn.physfn)
      if (auto it = topo.host_bridges.find(fn.host_bridge); it != topo.host_bridges.end())
        it->second.root_devices.push_back(bdf);
  for (auto& [id, bridge] : topo.host_bridges) {
    // The kernel scans a root bus in devfn order: bridge->bus->devices' first entry.
    std::sort(bridge.root_devices.begin(), bridge.root_devices.end(),
              [](const Bdf& a, const Bdf& b) { return a.bus != b.bus ? a.bus < b.bus : a.devfn() < b.devfn(); });
    if (bridge.root_devices.empty()) continue;
    const Function& first = topo.functions.at(bridge.root_devices.front());
    if (first.bdf.devfn() == 0 || first.port_type == PortType::kRootPort)
      bridge.bridge_device = first.bdf;
    else if (first.port_type == PortType::kUnknown) {
      bridge.bridge_device_unknown = true;  // a root port or not: the config space would say
      bridge.bridge_device_not_carried = first.config_not_carried;
    }
  }
}

}  // namespace p2pcheck
