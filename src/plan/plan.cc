// A plan file (docs/plan.md) read with toml++ and turned into the model: the functions a planned
// server will have, at the addresses firmware would give them (buses depth-first, in device order).
#include "p2pcheck/plan/plan.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <toml++/toml.h>
#include <vector>

#include "p2pcheck/model/pci.h"
#include "p2pcheck/plan/toml_bounds.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/memory_source.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// Bounds: no server is near these; a plan past them is not a server.
constexpr std::size_t kMaxPlanBytes = 1 << 20;
constexpr std::size_t kMaxHostBridges = 64, kMaxRootPorts = 512, kMaxSwitches = 256, kMaxDownstream = 32,
                      kMaxEndpoints = 2048, kMaxNameBytes = 64, kMaxTextBytes = 512;
constexpr int kMaxSwitchDepth = 8;

constexpr std::uint32_t kClassHostBridge = 0x060000, kClassPciBridge = 0x060400, kClassNvme = 0x010802,
                        kClassDisplayOther = 0x038000, kClassUnassigned = 0xff0000;

enum class Kind { kGpu, kNvme, kDevice };

struct Ids {
  std::uint16_t vendor = 0, device = 0;
};

// A port: a root port or a switch downstream port, with the one device its link leads to.
struct PortSpec {
  std::string name;
  std::size_t line = 0;
  Ids ids;
  std::optional<std::uint8_t> devfn;  // from `slot`; else the next free device number
  std::optional<double> speed;
  std::optional<int> width;
  Acs acs;
  std::string host_bridge;  // root ports: which host bridge
  Bdf bdf;
  std::uint8_t secondary = 0;
};

struct SwitchSpec {
  std::string name, at;
  std::size_t line = 0;
  Ids ids;
  std::optional<double> speed;
  std::optional<int> width;
  Acs acs;                              // the upstream port's
  std::vector<std::size_t> downstream;  // indices into ports
  Bdf bdf;
  std::uint8_t internal_bus = 0;
};

struct EndpointSpec {
  Kind kind = Kind::kDevice;
  std::string name, at;
  std::size_t line = 0;
  Ids ids;
  std::uint32_t class_code = 0;
  std::optional<std::uint8_t> devfn;  // only on a host bridge (root-complex integrated)
  std::optional<double> speed;
  std::optional<int> width;
  Acs acs;
  int vfs = 0;  // SR-IOV virtual functions enabled, at functions 1..vfs of the same device
  Bdf bdf;
};

struct HostBridgeSpec {
  std::string name;
  std::size_t line = 0;
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  std::optional<Ids> device;  // the function at 00.0; nullopt: "none"
  std::uint8_t last_bus = 0;
};

class PlanReader {
 public:
  explicit PlanReader(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw Error(line ? name_ + ":" + std::to_string(line) : name_, what);
  }
  [[noreturn]] void fail(const toml::node& node, const std::string& what) const {
    fail(node.source().begin.line, what);
  }

  const toml::table& table_of(const toml::node& node, const std::string& what) const {
    if (const toml::table* t = node.as_table()) return *t;
    fail(node, what + ": expected a table");
  }

  // Refuses a key the format does not have: a typo ("acs_ctrl") must not pass as "not given".
  void only_keys(const toml::table& t, const std::string& where, std::initializer_list<const char*> keys) const {
    for (const auto& [key, value] : t) {
      // A named copy: clang 14 cannot capture a structured binding in a lambda.
      const std::string_view name = key.str();
      bool known = std::any_of(keys.begin(), keys.end(), [&](const char* k) { return name == k; });
      if (known) continue;
      std::string list;
      for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
      fail(value, "unknown key '" + std::string(key.str()).substr(0, kMaxNameBytes) + "' in " + where +
                      " (expected one of: " + list + ")");
    }
  }

  std::optional<std::string> text(const toml::table& t, const char* key, const std::string& where) const {
    const toml::node* node = t.get(key);
    if (!node) return std::nullopt;
    const auto* s = node->as_string();
    if (!s) fail(*node, where + "." + key + ": expected a string");
    if (s->get().size() > kMaxTextBytes) fail(*node, where + "." + key + ": longer than 512 bytes");
    return s->get();
  }
  std::string required_text(const toml::table& t, const char* key, const std::string& where) const {
    auto value = text(t, key, where);
    if (!value) fail(t.source().begin.line, where + ": '" + key + "' is required");
    return *value;
  }
  std::optional<std::int64_t> integer(const toml::table& t, const char* key, const std::string& where, std::int64_t min,
                                      std::int64_t max) const {
    const toml::node* node = t.get(key);
    if (!node) return std::nullopt;
    const auto* i = node->as_integer();
    if (!i) fail(*node, where + "." + key + ": expected an integer");
    if (i->get() < min || i->get() > max)
      fail(*node, where + "." + key + ": " + std::to_string(i->get()) + " is out of range " + std::to_string(min) +
                      ".." + std::to_string(max));
    return i->get();
  }

  std::string name_of(const toml::table& t, const std::string& where) {
    std::string name = required_text(t, "name", where);
    std::size_t line = t.source().begin.line;
    if (name.empty() || name.size() > kMaxNameBytes) fail(line, where + ".name: expected 1 to 64 characters");
    for (char c : name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
        fail(line, where + ".name '" + name + "': use letters, digits, '-', '_' and '.'");
    if (!names_.insert(name).second) fail(line, "the name '" + name + "' is used twice");
    return name;
  }

  // "1002:74a1": vendor and device, hex, as lspci -n prints them.
  Ids ids_of(const toml::table& t, const char* key, const std::string& where) const {
    std::string text = required_text(t, key, where);
    auto bad = [&] {
      fail(*t.get(key), where + "." + key + " '" + text + "': expected vendor:device in hex, e.g. 1002:74a1");
    };
    if (text.size() != 9 || text[4] != ':' || !is_hex_digits(std::string_view(text).substr(0, 4)) ||
        !is_hex_digits(std::string_view(text).substr(5, 4)))
      bad();
    return {static_cast<std::uint16_t>(parse_hex(text.substr(0, 4)).value_or(0)),
            static_cast<std::uint16_t>(parse_hex(text.substr(5, 4)).value_or(0))};
  }

  // "01.1": device and function on the bus, as in a PCI address.
  std::optional<std::uint8_t> slot_of(const toml::table& t, const std::string& where) const {
    auto text = this->text(t, "slot", where);
    if (!text) return std::nullopt;
    auto bdf = text->size() == 4 ? Bdf::parse("00:" + *text) : std::nullopt;
    if (!bdf)
      fail(*t.get("slot"),
           where + ".slot '" + *text + "': expected device.function, e.g. 01.1 (device 00-1f, function 0-7)");
    return bdf->devfn();
  }

  // "gen4x16": the link the device or port is capable of; "unknown" when not decided yet.
  void link_of(const toml::table& t, const std::string& where, std::optional<double>& speed,
               std::optional<int>& width) const {
    auto text = this->text(t, "link", where);
    if (!text || *text == "unknown") return;
    static const double speeds[] = {2.5, 5, 8, 16, 32, 64};
    std::size_t x = text->find('x');
    auto gen = x == 4 && text->rfind("gen", 0) == 0 ? parse_dec(text->substr(3, 1)) : std::nullopt;
    auto lanes = x != std::string::npos ? parse_dec(text->substr(x + 1)) : std::nullopt;
    static const std::set<std::int64_t> widths = {1, 2, 4, 8, 12, 16, 32};
    if (!gen || *gen < 1 || *gen > 6 || !lanes || !widths.count(*lanes))
      fail(*t.get("link"),
           where + ".link '" + *text + "': expected gen1..gen6 and x1, x2, x4, x8, x12, x16 or x32, e.g. gen4x16");
    speed = speeds[*gen - 1];
    width = static_cast<int>(*lanes);
  }

  // ACS: "none" (no ACS capability), "unknown", or { capability = ..., control = ... } with the
  // registers as integers or as lists of bit names.
  Acs acs_of(const toml::table& t, const std::string& where, Presence when_absent) const {
    Acs acs;
    acs.presence = when_absent;
    const toml::node* node = t.get("acs");
    if (!node) return acs;
    if (const auto* s = node->as_string()) {
      if (s->get() == "none") return Acs{Presence::kAbsent, 0, 0};
      if (s->get() == "unknown") return Acs{Presence::kUnknown, 0, 0};
      fail(*node, where + ".acs: expected \"none\", \"unknown\" or { capability = [...], control = [...] }");
    }
    const toml::table& regs = table_of(*node, where + ".acs");
    only_keys(regs, where + ".acs", {"capability", "control"});
    acs.presence = Presence::kPresent;
    acs.capability = acs_bits(regs, "capability", where + ".acs");
    acs.control = acs_bits(regs, "control", where + ".acs");
    if (acs.control & ~acs.capability)
      fail(*node, where + ".acs: control enables " + acs_bits_str(acs.control & ~acs.capability) +
                      ", which the capability does not have");
    return acs;
  }

  std::uint16_t acs_bits(const toml::table& t, const char* key, const std::string& where) const {
    const toml::node* node = t.get(key);
    if (!node) fail(t.source().begin.line, where + ": '" + key + "' is required");
    if (const auto* i = node->as_integer()) {
      if (i->get() < 0 || i->get() > 0x7f)
        fail(*node, where + "." + key + ": expected 0x00..0x7f (the ACS bits SV..DT)");
      return static_cast<std::uint16_t>(i->get());
    }
    const toml::array* list = node->as_array();
    if (!list) fail(*node, where + "." + key + ": expected a list of bit names (SV TB RR CR UF EC DT) or an integer");
    static const std::pair<const char*, std::uint16_t> bits[] = {
        {"SV", kAcsSv}, {"TB", kAcsTb}, {"RR", kAcsRr}, {"CR", kAcsCr}, {"UF", kAcsUf}, {"EC", kAcsEc}, {"DT", kAcsDt}};
    std::uint16_t value = 0;
    for (const toml::node& item : *list) {
      const auto* s = item.as_string();
      auto it = s ? std::find_if(std::begin(bits), std::end(bits), [&](const auto& b) { return s->get() == b.first; })
                  : std::end(bits);
      if (it == std::end(bits)) fail(item, where + "." + key + ": expected bit names SV, TB, RR, CR, UF, EC, DT");
      value |= it->second;
    }
    return value;
  }

  const toml::array* array_of(const toml::table& doc, const char* key, std::size_t max) const {
    const toml::node* node = doc.get(key);
    if (!node) return nullptr;
    const toml::array* list = node->as_array();
    if (!list) fail(*node, std::string(key) + ": expected [[" + key + "]] tables");
    if (list->size() > max) fail(*node, std::string("more than ") + std::to_string(max) + " [[" + key + "]] entries");
    return list;
  }

  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::set<std::string> names_;
};

// The lowest free device number from `first`, for a port or device without a `slot`.
std::uint8_t next_free(std::set<std::uint8_t>& taken, std::uint8_t first, const PlanReader& r, std::size_t line,
                       const std::string& what) {
  // A device number is free when none of its eight functions is taken.
  for (unsigned dev = first; dev < 32; ++dev) {
    std::uint8_t devfn = static_cast<std::uint8_t>(dev << 3);
    auto next = taken.lower_bound(devfn);
    if (next == taken.end() || *next > (devfn | 7)) {
      taken.insert(devfn);
      return devfn;
    }
  }
  r.fail(line, what + ": no free device number left on its bus");
}

class PlanBuilder {
 public:
  PlanBuilder(const toml::table& doc, const std::string& name) : doc_(doc), r_(name) {}

  Plan build() {
    r_.only_keys(doc_, "the plan",
                 {"description", "cpu", "kernel", "host_bridge", "root_port", "switch", "gpu", "nvme", "device"});
    Plan plan;
    // Shown in the banner and reports: escaped as every name from input (printable.h).
    plan.file = printable(r_.name());
    plan.description = printable(r_.text(doc_, "description", "the plan").value_or(""));
    read_machine(plan.state.machine);
    read_host_bridges();
    read_root_ports();
    read_switches();
    read_endpoints();
    place();
    assign_buses();
    make_model(plan);
    return plan;
  }

 private:
  void read_machine(Machine& m) {
    const toml::node* cpu_node = doc_.get("cpu");
    if (!cpu_node) r_.fail(0, "[cpu] is required (vendor and family decide the kernel's CPU rule)");
    const toml::table& cpu = r_.table_of(*cpu_node, "[cpu]");
    r_.only_keys(cpu, "[cpu]", {"vendor", "family", "model", "model_name"});
    m.cpu.vendor_id = r_.required_text(cpu, "vendor", "[cpu]");
    if (m.cpu.vendor_id != "AuthenticAMD" && m.cpu.vendor_id != "GenuineIntel" && m.cpu.vendor_id != "HygonGenuine")
      r_.fail(*cpu.get("vendor"),
              "[cpu].vendor '" + m.cpu.vendor_id + "': expected AuthenticAMD, GenuineIntel or HygonGenuine");
    auto family = r_.integer(cpu, "family", "[cpu]", 0, 0xff);
    if (!family)
      r_.fail(cpu.source().begin.line, "[cpu]: 'family' is required (decimal as /proc/cpuinfo prints it, or 0x19)");
    m.cpu.family = static_cast<int>(*family);
    m.cpu.model = static_cast<int>(r_.integer(cpu, "model", "[cpu]", 0, 0xff).value_or(-1));
    m.cpu.model_name = printable(r_.text(cpu, "model_name", "[cpu]").value_or(""));
    m.cpu.evidence_file = r_.name() + " [cpu]";

    const toml::node* kernel_node = doc_.get("kernel");
    const toml::table empty;
    const toml::table& kernel = kernel_node ? r_.table_of(*kernel_node, "[kernel]") : empty;
    r_.only_keys(kernel, "[kernel]", {"release", "p2pdma"});
    m.kernel_release = r_.text(kernel, "release", "[kernel]").value_or("");
    if (!m.kernel_release.empty() && (!parse_kernel_version(m.kernel_release) || !is_printable(m.kernel_release)))
      r_.fail(*kernel.get("release"),
              "[kernel].release '" + m.kernel_release + "': expected a release such as 6.8.0-142-generic");
    std::string p2pdma = r_.text(kernel, "p2pdma", "[kernel]").value_or("unknown");
    std::string where = r_.name() + " [kernel] p2pdma";
    if (p2pdma == "y") {
      m.config.file = where;
      m.config.options["CONFIG_PCI_P2PDMA"] = "y";
    } else if (p2pdma == "n") {
      m.config.file = where;
    } else if (p2pdma != "unknown") {
      r_.fail(*kernel.get("p2pdma"), "[kernel].p2pdma '" + p2pdma + "': expected \"y\", \"n\" or \"unknown\"");
    }
    m.config.tried.push_back(where);
  }

  void read_host_bridges() {
    const toml::array* list = r_.array_of(doc_, "host_bridge", kMaxHostBridges);
    if (!list || list->empty()) r_.fail(0, "at least one [[host_bridge]] is required");
    for (const toml::node& node : *list) {
      const toml::table& t = r_.table_of(node, "[[host_bridge]]");
      r_.only_keys(t, "[[host_bridge]]", {"name", "domain", "bus", "device"});
      HostBridgeSpec hb;
      hb.name = r_.name_of(t, "[[host_bridge]]");
      hb.line = t.source().begin.line;
      std::string where = "host bridge " + hb.name;
      hb.domain = static_cast<std::uint32_t>(r_.integer(t, "domain", where, 0, 0xffff).value_or(0));
      auto bus = r_.integer(t, "bus", where, 0, 0xff);
      if (!bus) r_.fail(hb.line, where + ": 'bus' is required (its root bus number, e.g. 0x40)");
      hb.bus = static_cast<std::uint8_t>(*bus);
      if (r_.text(t, "device", where).value_or("") != "none") hb.device = r_.ids_of(t, "device", where);
      for (const auto& other : host_bridges_)
        if (other.domain == hb.domain && other.bus == hb.bus)
          r_.fail(hb.line, where + ": bus " + hex(hb.bus, 2) + " is already host bridge " + other.name + "'s");
      index_[hb.name] = {Node::kHostBridge, host_bridges_.size()};
      host_bridges_.push_back(std::move(hb));
    }
  }

  void read_root_ports() {
    const toml::array* list = r_.array_of(doc_, "root_port", kMaxRootPorts);
    if (!list) return;
    for (const toml::node& node : *list) {
      const toml::table& t = r_.table_of(node, "[[root_port]]");
      r_.only_keys(t, "[[root_port]]", {"name", "host_bridge", "slot", "id", "link", "acs"});
      PortSpec p;
      p.name = r_.name_of(t, "[[root_port]]");
      p.line = t.source().begin.line;
      std::string where = "root port " + p.name;
      p.host_bridge = r_.text(t, "host_bridge", where).value_or("");
      if (p.host_bridge.empty()) {
        if (host_bridges_.size() != 1) r_.fail(p.line, where + ": 'host_bridge' is required when the plan has several");
        p.host_bridge = host_bridges_.front().name;
      }
      auto hb = index_.find(p.host_bridge);
      if (hb == index_.end() || hb->second.kind != Node::kHostBridge)
        r_.fail(p.line, where + ": host_bridge '" + p.host_bridge + "' is not a [[host_bridge]] of this plan");
      p.devfn = r_.slot_of(t, where);
      p.ids = r_.ids_of(t, "id", where);
      r_.link_of(t, where, p.speed, p.width);
      p.acs = r_.acs_of(t, where, Presence::kUnknown);
      index_[p.name] = {Node::kPort, ports_.size()};
      root_ports_.push_back(ports_.size());
      ports_.push_back(std::move(p));
    }
  }

  void read_switches() {
    const toml::array* list = r_.array_of(doc_, "switch", kMaxSwitches);
    if (!list) return;
    for (const toml::node& node : *list) {
      const toml::table& t = r_.table_of(node, "[[switch]]");
      r_.only_keys(t, "[[switch]]", {"name", "at", "id", "link", "acs", "downstream"});
      SwitchSpec s;
      s.name = r_.name_of(t, "[[switch]]");
      s.line = t.source().begin.line;
      std::string where = "switch " + s.name;
      s.at = r_.required_text(t, "at", where);
      s.ids = r_.ids_of(t, "id", where);
      r_.link_of(t, where, s.speed, s.width);
      s.acs = r_.acs_of(t, where, Presence::kUnknown);
      const toml::node* down = t.get("downstream");
      const toml::array* ports = down ? down->as_array() : nullptr;
      if (!ports || ports->empty()) r_.fail(s.line, where + ": expected [[switch.downstream]] ports");
      if (ports->size() > kMaxDownstream) r_.fail(*down, where + ": more than 32 downstream ports");
      for (const toml::node& port_node : *ports) {
        const toml::table& pt = r_.table_of(port_node, "[[switch.downstream]]");
        r_.only_keys(pt, "[[switch.downstream]]", {"name", "slot", "id", "link", "acs"});
        PortSpec p;
        p.name = r_.name_of(pt, "[[switch.downstream]]");
        p.line = pt.source().begin.line;
        std::string pwhere = "downstream port " + p.name;
        p.devfn = r_.slot_of(pt, pwhere);
        p.ids = pt.get("id") ? r_.ids_of(pt, "id", pwhere) : s.ids;  // a switch's ports share its ID
        r_.link_of(pt, pwhere, p.speed, p.width);
        p.acs = r_.acs_of(pt, pwhere, Presence::kUnknown);
        index_[p.name] = {Node::kPort, ports_.size()};
        s.downstream.push_back(ports_.size());
        ports_.push_back(std::move(p));
      }
      index_[s.name] = {Node::kSwitch, switches_.size()};
      switches_.push_back(std::move(s));
    }
  }

  void read_endpoints() {
    std::size_t count = 0;
    static const std::pair<const char*, Kind> kinds[] = {
        {"gpu", Kind::kGpu}, {"nvme", Kind::kNvme}, {"device", Kind::kDevice}};
    for (auto [key, kind] : kinds) {
      const toml::array* list = r_.array_of(doc_, key, kMaxEndpoints);
      if (!list) continue;
      count += list->size();
      if (count > kMaxEndpoints) r_.fail(0, "more than 2048 [[gpu]], [[nvme]] and [[device]] entries");
      for (const toml::node& node : *list) {
        std::string what = std::string("[[") + key + "]]";
        const toml::table& t = r_.table_of(node, what);
        r_.only_keys(t, what, {"name", "at", "slot", "id", "class", "link", "acs", "vfs"});
        EndpointSpec e;
        e.kind = kind;
        e.name = r_.name_of(t, what);
        e.line = t.source().begin.line;
        std::string where = std::string(key) + " " + e.name;
        e.at = r_.required_text(t, "at", where);
        e.ids = r_.ids_of(t, "id", where);
        e.devfn = r_.slot_of(t, where);
        auto class_code = r_.integer(t, "class", where, 0, 0xffffff);
        if (kind == Kind::kNvme && class_code && *class_code != kClassNvme)
          r_.fail(*t.get("class"), where + ".class: an NVMe controller is class 0x010802");
        e.class_code = static_cast<std::uint32_t>(class_code.value_or(kind == Kind::kNvme  ? kClassNvme
                                                                      : kind == Kind::kGpu ? kClassDisplayOther
                                                                                           : kClassUnassigned));
        r_.link_of(t, where, e.speed, e.width);
        // Endpoints rarely implement ACS; a plan says so when one does (docs/plan.md).
        e.acs = r_.acs_of(t, where, Presence::kAbsent);
        e.vfs = static_cast<int>(r_.integer(t, "vfs", where, 0, 7).value_or(0));
        index_[e.name] = {Node::kEndpoint, endpoints_.size()};
        endpoints_.push_back(std::move(e));
      }
    }
  }

  // Which port each switch and endpoint sits at; one device per port's link, as PCIe has it.
  void place() {
    for (std::size_t i = 0; i < switches_.size(); ++i) {
      const SwitchSpec& s = switches_[i];
      std::size_t port = port_named(s.at, s.line, "switch " + s.name, false);
      claim(port, s.line, "switch " + s.name);
      below_port_[port] = {Node::kSwitch, i};
    }
    for (std::size_t i = 0; i < endpoints_.size(); ++i) {
      EndpointSpec& e = endpoints_[i];
      std::string where = std::string(e.kind == Kind::kGpu    ? "gpu "
                                      : e.kind == Kind::kNvme ? "nvme "
                                                              : "device ") +
                          e.name;
      auto it = index_.find(e.at);
      if (it != index_.end() && it->second.kind == Node::kHostBridge) {
        // Root-complex integrated: on the root bus itself, at the slot given.
        if (!e.devfn)
          r_.fail(e.line, where + ": on host bridge " + e.at + " (root-complex integrated) it needs a 'slot'");
        on_host_bridge_[it->second.index].push_back(i);
        continue;
      }
      if (e.devfn)
        r_.fail(e.line, where + ": 'slot' is only for devices on a host bridge; below a port a device is 00.0");
      std::size_t port = port_named(e.at, e.line, where, true);
      claim(port, e.line, where);
      below_port_[port] = {Node::kEndpoint, i};
    }
    // Switch under switch is allowed, a loop is not: every switch must reach a root port.
    for (const SwitchSpec& s : switches_) {
      std::size_t port = index_.at(s.at).index;
      for (int depth = 0;; ++depth) {
        if (depth > kMaxSwitchDepth)
          r_.fail(s.line, "switch " + s.name + ": more than 8 switches deep, or below itself");
        auto owner = owner_switch(port);
        if (!owner) break;
        port = index_.at(switches_[*owner].at).index;
      }
    }
  }

  std::size_t port_named(const std::string& at, std::size_t line, const std::string& where, bool host_bridge_ok) {
    auto it = index_.find(at);
    std::string expected = host_bridge_ok ? "a [[root_port]], a [[switch.downstream]] port or a [[host_bridge]]"
                                          : "a [[root_port]] or a [[switch.downstream]] port";
    if (it == index_.end() || it->second.kind != Node::kPort)
      r_.fail(line, where + ": at = '" + at + "' is not " + expected + " of this plan");
    return it->second.index;
  }

  void claim(std::size_t port, std::size_t line, const std::string& where) {
    if (below_port_.count(port))
      r_.fail(line, where + ": port " + ports_[port].name + " already has a device (one per PCIe link)");
  }

  std::optional<std::size_t> owner_switch(std::size_t port) const {
    for (std::size_t i = 0; i < switches_.size(); ++i)
      if (std::find(switches_[i].downstream.begin(), switches_[i].downstream.end(), port) !=
          switches_[i].downstream.end())
        return i;
    return std::nullopt;
  }

  // Device numbers on a bus: the explicit slots first, then the rest in plan order from `first`.
  template <typename Item>
  void number(std::vector<Item*> items, std::set<std::uint8_t>& taken, std::uint8_t first, const std::string& bus) {
    for (Item* item : items)
      if (item->devfn && !taken.insert(*item->devfn).second)
        r_.fail(item->line, item->name + ": slot " + hex(*item->devfn >> 3, 2) + "." +
                                std::to_string(*item->devfn & 7) + " is taken on " + bus);
    for (Item* item : items)
      if (!item->devfn) item->devfn = next_free(taken, first, r_, item->line, item->name);
  }

  std::uint8_t take_bus(std::size_t line, const std::string& what) {
    if (next_bus_ > 0xff) r_.fail(line, what + ": runs out of bus numbers (more than 0xff)");
    return static_cast<std::uint8_t>(next_bus_++);
  }

  // Depth-first from each host bridge's bus, in device order on every bus: how firmware numbers
  // buses, and how the fixtures' machines are numbered.
  void assign_buses() {
    for (std::size_t h = 0; h < host_bridges_.size(); ++h) {
      HostBridgeSpec& hb = host_bridges_[h];
      std::set<std::uint8_t> taken;
      if (hb.device) taken.insert(0);
      std::vector<PortSpec*> rps;
      for (std::size_t i : root_ports_)
        if (ports_[i].host_bridge == hb.name) rps.push_back(&ports_[i]);
      std::vector<EndpointSpec*> integrated;
      for (std::size_t i : on_host_bridge_[h]) integrated.push_back(&endpoints_[i]);
      number(integrated, taken, 1, "host bridge " + hb.name + "'s root bus");
      number(rps, taken, 1, "host bridge " + hb.name + "'s root bus");
      for (EndpointSpec* e : integrated)
        e->bdf =
            Bdf{hb.domain, hb.bus, static_cast<std::uint8_t>(*e->devfn >> 3), static_cast<std::uint8_t>(*e->devfn & 7)};
      std::sort(rps.begin(), rps.end(), [](const PortSpec* a, const PortSpec* b) { return *a->devfn < *b->devfn; });
      next_bus_ = hb.bus + 1u;
      for (PortSpec* rp : rps) {
        rp->bdf = Bdf{hb.domain, hb.bus, static_cast<std::uint8_t>(*rp->devfn >> 3),
                      static_cast<std::uint8_t>(*rp->devfn & 7)};
        assign_below(*rp, 0);
      }
      hb.last_bus = static_cast<std::uint8_t>(next_bus_ - 1);
    }
    // A host bridge's buses end before the next one's root bus (in the same domain).
    for (const HostBridgeSpec& a : host_bridges_)
      for (const HostBridgeSpec& b : host_bridges_)
        if (a.domain == b.domain && b.bus > a.bus && b.bus <= a.last_bus)
          r_.fail(a.line, "host bridge " + a.name + " needs buses " + hex(a.bus, 2) + "-" + hex(a.last_bus, 2) +
                              ", which runs into host bridge " + b.name + " at bus " + hex(b.bus, 2));
  }

  void assign_below(PortSpec& port, int depth) {
    port.secondary = take_bus(port.line, "port " + port.name);
    auto below = below_port_.find(static_cast<std::size_t>(&port - ports_.data()));
    if (below == below_port_.end()) return;
    Bdf first{port.bdf.domain, port.secondary, 0, 0};
    if (below->second.kind == Node::kEndpoint) {
      endpoints_[below->second.index].bdf = first;
      return;
    }
    SwitchSpec& s = switches_[below->second.index];
    if (depth > kMaxSwitchDepth) r_.fail(s.line, "switch " + s.name + ": more than 8 switches deep");
    s.bdf = first;
    s.internal_bus = take_bus(s.line, "switch " + s.name);
    std::vector<PortSpec*> dsps;
    for (std::size_t i : s.downstream) dsps.push_back(&ports_[i]);
    std::set<std::uint8_t> taken;
    number(dsps, taken, 0, "switch " + s.name + "'s internal bus");
    std::sort(dsps.begin(), dsps.end(), [](const PortSpec* a, const PortSpec* b) { return *a->devfn < *b->devfn; });
    for (PortSpec* dsp : dsps) {
      dsp->bdf = Bdf{port.bdf.domain, s.internal_bus, static_cast<std::uint8_t>(*dsp->devfn >> 3),
                     static_cast<std::uint8_t>(*dsp->devfn & 7)};
      assign_below(*dsp, depth + 1);
    }
  }

  // The model, as read_topology and read_inventory would have built it from the finished machine.
  void make_model(Plan& plan) {
    Topology& topo = plan.state.topo;
    plan.state.source = "plan " + r_.name();
    topo.source_description = plan.state.source;
    auto add = [&](Bdf bdf, Ids ids, std::uint32_t class_code, PortType type, std::optional<Bdf> parent,
                   const std::string& host_bridge, const std::string& parent_path) -> Function& {
      if (topo.functions.count(bdf)) r_.fail(0, "two devices at " + bdf.str());
      Function fn;
      fn.bdf = bdf;
      fn.vendor = ids.vendor;
      fn.device = ids.device;
      fn.class_code = class_code;
      fn.header_type = class_code >> 8 == kClassPciBridge >> 8 ? 1 : 0;
      fn.port_type = type;
      fn.parent = parent;
      fn.host_bridge = host_bridge;
      fn.sysfs_path = parent_path + "/" + bdf.str();
      fn.config_size = 4096;  // everything the rules read is stated (or stated unknown) by the plan
      return topo.functions.emplace(bdf, std::move(fn)).first->second;
    };
    auto set_acs = [](Function& fn, const Acs& acs) {
      fn.acs = acs;
      if (acs.presence == Presence::kUnknown) fn.config_note = "ACS not given in the plan";
      fn.rebar_presence = Presence::kUnknown;
      fn.sriov_presence = Presence::kUnknown;
    };
    for (const HostBridgeSpec& hb : host_bridges_) {
      char id[16];
      std::snprintf(id, sizeof id, "%04x:%02x", hb.domain, hb.bus);
      HostBridge& bridge = topo.host_bridges[id];
      bridge.id = id;
      bridge.domain = hb.domain;
      bridge.bus = hb.bus;
      bridge.sysfs_path = std::string("/sys/devices/pci") + id;
      if (hb.device) {
        Function& fn = add(Bdf{hb.domain, hb.bus, 0, 0}, *hb.device, kClassHostBridge, PortType::kNotPcie, std::nullopt,
                           id, bridge.sysfs_path);
        fn.acs.presence = Presence::kAbsent;
        plan.names[hb.name] = fn.bdf;
      }
      host_bridge_ids_[hb.name] = id;
    }
    // Ports and what is below them, walking down from each root port.
    std::function<void(const PortSpec&, Function&)> below = [&](const PortSpec& port, Function& up) {
      auto it = below_port_.find(static_cast<std::size_t>(&port - ports_.data()));
      if (it == below_port_.end()) return;
      if (it->second.kind == Node::kEndpoint) {
        const EndpointSpec& e = endpoints_[it->second.index];
        Function& fn = add(e.bdf, e.ids, e.class_code, PortType::kEndpoint, up.bdf, up.host_bridge, up.sysfs_path);
        set_acs(fn, e.acs);
        link(fn, up, e.speed, e.width);
        plan.names[e.name] = fn.bdf;
        add_vfs(fn, e, up, add);
        return;
      }
      const SwitchSpec& s = switches_[it->second.index];
      Function& usp =
          add(s.bdf, s.ids, kClassPciBridge, PortType::kUpstreamPort, up.bdf, up.host_bridge, up.sysfs_path);
      set_acs(usp, s.acs);
      link(usp, up, s.speed, s.width);
      plan.names[s.name] = usp.bdf;
      for (std::size_t i : s.downstream) {
        const PortSpec& dsp = ports_[i];
        Function& fn =
            add(dsp.bdf, dsp.ids, kClassPciBridge, PortType::kDownstreamPort, usp.bdf, usp.host_bridge, usp.sysfs_path);
        set_acs(fn, dsp.acs);
        own_link(fn, dsp);
        plan.names[dsp.name] = fn.bdf;
        below(dsp, fn);
      }
    };
    for (std::size_t i : root_ports_) {
      const PortSpec& rp = ports_[i];
      const std::string& hb = host_bridge_ids_.at(rp.host_bridge);
      Function& fn = add(rp.bdf, rp.ids, kClassPciBridge, PortType::kRootPort, std::nullopt, hb,
                         topo.host_bridges.at(hb).sysfs_path);
      set_acs(fn, rp.acs);
      own_link(fn, rp);
      plan.names[rp.name] = fn.bdf;
      below(rp, fn);
    }
    for (std::size_t h = 0; h < host_bridges_.size(); ++h)
      for (std::size_t i : on_host_bridge_[h]) {
        const EndpointSpec& e = endpoints_[i];
        const std::string& hb = host_bridge_ids_.at(host_bridges_[h].name);
        Function& fn = add(e.bdf, e.ids, e.class_code, PortType::kRcIntegratedEndpoint, std::nullopt, hb,
                           topo.host_bridges.at(hb).sysfs_path);
        set_acs(fn, e.acs);
        plan.names[e.name] = fn.bdf;
      }
    // pci_host_bridge_dev(): the first device on the root bus, if it is 00.0 or a root port.
    for (auto& [id, bridge] : topo.host_bridges) {
      for (const auto& [bdf, fn] : topo.functions)
        if (fn.host_bridge == id && !fn.parent && !fn.physfn) bridge.root_devices.push_back(bdf);
      if (!bridge.root_devices.empty()) {
        const Function& first = topo.functions.at(bridge.root_devices.front());
        if (first.bdf.devfn() == 0 || first.port_type == PortType::kRootPort) bridge.bridge_device = first.bdf;
      }
    }
    // Roles: the plan says which devices are GPUs and NVMe, in address order as read_inventory lists them.
    std::vector<std::pair<Bdf, const EndpointSpec*>> nvmes;
    for (const EndpointSpec& e : endpoints_) {
      if (e.kind == Kind::kGpu) plan.state.inv.gpus.push_back(e.bdf);
      if (e.kind == Kind::kNvme) nvmes.push_back({e.bdf, &e});
    }
    for (const auto& [bdf, e] : vf_of_) {
      if (e->kind == Kind::kGpu) plan.state.inv.gpus.push_back(bdf);
      if (e->kind == Kind::kNvme) nvmes.push_back({bdf, nullptr});  // a VF has no controller name of its own
    }
    std::sort(plan.state.inv.gpus.begin(), plan.state.inv.gpus.end());
    std::sort(nvmes.begin(), nvmes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [bdf, e] : nvmes) {
      NvmeController c;
      c.bdf = bdf;
      // The kernel numbers controllers as they probe; a plan's "nvme3" is taken as the planner's.
      auto kernel_name = e ? parse_nvme_name(e->name) : std::nullopt;
      if (kernel_name && kernel_name->kind == NvmeName::Kind::kController) c.name = e->name;
      plan.state.inv.nvmes.push_back(std::move(c));
    }
  }

  // SR-IOV VFs beside their PF (offset 1, stride 1: functions 1..N), below the same port.
  template <typename Add>
  void add_vfs(Function& pf, const EndpointSpec& e, Function& up, Add& add) {
    if (!e.vfs) return;
    pf.sriov_presence = Presence::kPresent;
    pf.sriov.total_vfs = pf.sriov.num_vfs = static_cast<std::uint16_t>(e.vfs);
    pf.sriov.vf_device = e.ids.device;
    for (int i = 1; i <= e.vfs; ++i) {
      Bdf bdf = pf.bdf;
      bdf.fn = static_cast<std::uint8_t>(i);
      Function& vf = add(bdf, e.ids, e.class_code, PortType::kEndpoint, up.bdf, up.host_bridge, up.sysfs_path);
      vf.acs.presence = Presence::kAbsent;
      vf.physfn = pf.bdf;
      vf.link.max_speed = pf.link.max_speed;
      vf.link.max_width = pf.link.max_width;
      vf_of_[bdf] = &e;
    }
  }

  // A port's own capability; the current link is set when its device is (link()).
  static void own_link(Function& fn, const PortSpec& port) {
    fn.link.max_speed = port.speed;
    fn.link.max_width = port.width;
  }

  // The link between a device and the port above it trains to what both ends can do; both ends
  // then report that as their current link.
  static void link(Function& fn, Function& port, std::optional<double> speed, std::optional<int> width) {
    fn.link.max_speed = speed;
    fn.link.max_width = width;
    if (speed && port.link.max_speed) fn.link.cur_speed = port.link.cur_speed = std::min(*speed, *port.link.max_speed);
    if (width && port.link.max_width) fn.link.cur_width = port.link.cur_width = std::min(*width, *port.link.max_width);
  }

  enum class NodeKind { kHostBridge, kPort, kSwitch, kEndpoint };
  struct Node {
    static constexpr NodeKind kHostBridge = NodeKind::kHostBridge, kPort = NodeKind::kPort, kSwitch = NodeKind::kSwitch,
                              kEndpoint = NodeKind::kEndpoint;
    NodeKind kind;
    std::size_t index;
  };

  const toml::table& doc_;
  PlanReader r_;
  std::vector<HostBridgeSpec> host_bridges_;
  std::vector<PortSpec> ports_;  // root ports and downstream ports
  std::vector<std::size_t> root_ports_;
  std::vector<SwitchSpec> switches_;
  std::vector<EndpointSpec> endpoints_;
  std::map<std::string, Node> index_;
  std::map<std::size_t, Node> below_port_;  // port index -> the switch or endpoint on its link
  std::map<std::size_t, std::vector<std::size_t>> on_host_bridge_;
  std::map<std::string, std::string> host_bridge_ids_;
  std::map<Bdf, const EndpointSpec*> vf_of_;
  unsigned next_bus_ = 0;
};

}  // namespace

Plan parse_plan(std::string_view text, const std::string& name) {
  if (text.size() > kMaxPlanBytes) throw Error(name, "larger than 1 MiB; a plan is a few kilobytes");
  check_toml_bounds(text, name);
  toml::table doc;
  try {
    doc = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw Error(name + ":" + std::to_string(e.source().begin.line), "not valid TOML: " + std::string(e.description()) +
                                                                        " (column " +
                                                                        std::to_string(e.source().begin.column) + ")");
  }
  return PlanBuilder(doc, name).build();
}

Plan load_plan(const std::string& file) {
  // Only a regular file: a FIFO would block the read forever.
  return parse_plan(read_input_file(file, kMaxPlanBytes, "the plan file", "a plan is a few kilobytes"), file);
}

UncarriedAreas plan_not_carried() {
  return {"not in a plan",
          {CheckArea::kKernelModule, CheckArea::kIommu, CheckArea::kGpuStack, CheckArea::kStorage,
           CheckArea::kRecordedVerify}};
}

std::unique_ptr<Source> plan_source(const Plan& plan) {
  return open_memory_source(std::make_shared<const MemoryTree>(), "plan " + plan.file);
}

nlohmann::ordered_json plan_summary_json(const Plan& plan) {
  nlohmann::ordered_json areas = nlohmann::ordered_json::array();
  for (CheckArea area : plan_not_carried().areas) {
    switch (area) {
      case CheckArea::kKernelModule: areas.push_back("kernel_module"); break;
      case CheckArea::kIommu: areas.push_back("iommu"); break;
      case CheckArea::kGpuStack: areas.push_back("gpu_stack"); break;
      case CheckArea::kStorage: areas.push_back("storage"); break;
      case CheckArea::kRecordedVerify: areas.push_back("recorded_verify"); break;
    }
  }
  return {{"file", plan.file}, {"description", plan.description}, {"not_carried", areas}};
}

std::string plan_selector(const Plan& plan, const std::string& value) {
  auto it = plan.names.find(value);
  return it == plan.names.end() ? value : it->second.str();
}

}  // namespace p2pcheck
