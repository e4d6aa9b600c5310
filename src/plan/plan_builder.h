// The plan reader's pieces shared by its files: the bounds, what each [[table]] of a plan says
// (the specs), the TOML reader that checks every key and value, and the builder that places the
// devices (plan_read.cc) and numbers them into the model (plan_layout.cc). Internal to src/plan/.
#pragma once

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <toml++/toml.h>
#include <vector>

#include "p2pcheck/model/pci.h"
#include "p2pcheck/plan/plan.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck::plan_internal {

// Bounds: no server is near these; a plan past them is not a server.
constexpr std::size_t kMaxPlanBytes = 1 << 20;
constexpr std::size_t kMaxHostBridges = 64, kMaxRootPorts = 512, kMaxSwitches = 256, kMaxDownstream = 32,
                      kMaxEndpoints = 2048, kMaxNameBytes = 64, kMaxTextBytes = 512;
constexpr int kMaxSwitchDepth = 8;
// GPU functions times NVMe functions (VFs included): its `check --json` stays within what `fleet`
// reads back (64 MiB and 2^20 JSON values; a pair is about ten values and 170 bytes).
constexpr std::size_t kMaxPlanPairs = 65536;

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
    // 0 for what is not there: plain integers (gcc 12 warns falsely on the optionals' compare).
    const std::int64_t gen =
        (x == 4 && text->rfind("gen", 0) == 0 ? parse_dec(text->substr(3, 1)) : std::nullopt).value_or(0);
    const std::int64_t lanes = (x != std::string::npos ? parse_dec(text->substr(x + 1)) : std::nullopt).value_or(0);
    static const std::set<std::int64_t> widths = {1, 2, 4, 8, 12, 16, 32};
    if (gen < 1 || gen > 6 || !widths.count(lanes))
      fail(*t.get("link"),
           where + ".link '" + *text + "': expected gen1..gen6 and x1, x2, x4, x8, x12, x16 or x32, e.g. gen4x16");
    speed = speeds[gen - 1];
    width = static_cast<int>(lanes);
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

// A plan's devices as read, placed on their ports, numbered, then made into the model.
class PlanBuilder {
 public:
  PlanBuilder(const toml::table& doc, const std::string& name) : doc_(doc), r_(name) {}
  Plan build();

 private:
  // plan_read.cc: each [[table]] into its specs, then which port each device sits at.
  void read_machine(Machine& m);
  void read_host_bridges();
  void read_root_ports();
  void read_switches();
  void read_endpoints();
  void place();
  std::size_t port_named(const std::string& at, std::size_t line, const std::string& where, bool host_bridge_ok);
  void claim(std::size_t port, std::size_t line, const std::string& where);
  std::optional<std::size_t> owner_switch(std::size_t port) const;

  // plan_layout.cc: bus and device numbers as firmware gives them, then the model.
  template <typename Item>
  void number(std::vector<Item*> items, std::set<std::uint8_t>& taken, std::uint8_t first, const std::string& bus);
  std::uint8_t take_bus(std::size_t line, const std::string& what);
  void assign_buses();
  void assign_below(PortSpec& port, int depth);
  void make_model(Plan& plan);
  Function& add_function(Topology& topo, Bdf bdf, Ids ids, std::uint32_t class_code, PortType type,
                         std::optional<Bdf> parent, const std::string& host_bridge, const std::string& parent_path);
  void make_host_bridges(Plan& plan);
  void make_below(Plan& plan, const PortSpec& port, Function& up);
  void make_roles(Plan& plan);
  void add_vfs(Topology& topo, Function& pf, const EndpointSpec& e, Function& up);
  static void set_acs(Function& fn, const Acs& acs);
  static void own_link(Function& fn, const PortSpec& port);
  static void link(Function& fn, Function& port, std::optional<double> speed, std::optional<int> width);

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

}  // namespace p2pcheck::plan_internal
