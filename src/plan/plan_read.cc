// A plan's tables read into specs and placed: which port each switch and device sits at.
#include <algorithm>

#include "p2pcheck/source/printable.h"
#include "plan_builder.h"

namespace p2pcheck::plan_internal {

void PlanBuilder::read_machine(Machine& m) {
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
}

void PlanBuilder::read_host_bridges() {
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

void PlanBuilder::read_root_ports() {
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

void PlanBuilder::read_switches() {
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

void PlanBuilder::read_endpoints() {
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
void PlanBuilder::place() {
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
      if (depth > kMaxSwitchDepth) r_.fail(s.line, "switch " + s.name + ": more than 8 switches deep, or below itself");
      auto owner = owner_switch(port);
      if (!owner) break;
      port = index_.at(switches_[*owner].at).index;
    }
  }
}

std::size_t PlanBuilder::port_named(const std::string& at, std::size_t line, const std::string& where,
                                    bool host_bridge_ok) {
  auto it = index_.find(at);
  std::string expected = host_bridge_ok ? "a [[root_port]], a [[switch.downstream]] port or a [[host_bridge]]"
                                        : "a [[root_port]] or a [[switch.downstream]] port";
  if (it == index_.end() || it->second.kind != Node::kPort)
    r_.fail(line, where + ": at = '" + at + "' is not " + expected + " of this plan");
  return it->second.index;
}

void PlanBuilder::claim(std::size_t port, std::size_t line, const std::string& where) {
  if (below_port_.count(port))
    r_.fail(line, where + ": port " + ports_[port].name + " already has a device (one per PCIe link)");
}

std::optional<std::size_t> PlanBuilder::owner_switch(std::size_t port) const {
  for (std::size_t i = 0; i < switches_.size(); ++i)
    if (std::find(switches_[i].downstream.begin(), switches_[i].downstream.end(), port) !=
        switches_[i].downstream.end())
      return i;
  return std::nullopt;
}

}  // namespace p2pcheck::plan_internal
