// A placed plan numbered as firmware numbers a machine (buses depth-first, devices in slot order),
// then made into the model read_topology and read_inventory would have built from it.
#include <functional>

#include "plan_builder.h"

namespace p2pcheck::plan_internal {
namespace {

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

}  // namespace

// Device numbers on a bus: the explicit slots first, then the rest in plan order from `first`.
template <typename Item>
void PlanBuilder::number(std::vector<Item*> items, std::set<std::uint8_t>& taken, std::uint8_t first,
                         const std::string& bus) {
  for (Item* item : items)
    if (item->devfn && !taken.insert(*item->devfn).second)
      r_.fail(item->line, item->name + ": slot " + hex(*item->devfn >> 3, 2) + "." + std::to_string(*item->devfn & 7) +
                              " is taken on " + bus);
  for (Item* item : items)
    if (!item->devfn) item->devfn = next_free(taken, first, r_, item->line, item->name);
}

std::uint8_t PlanBuilder::take_bus(std::size_t line, const std::string& what) {
  if (next_bus_ > 0xff) r_.fail(line, what + ": runs out of bus numbers (more than 0xff)");
  return static_cast<std::uint8_t>(next_bus_++);
}

// Depth-first from each host bridge's bus, in device order on every bus: how firmware numbers
// buses, and how the fixtures' machines are numbered.
void PlanBuilder::assign_buses() {
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
      rp->bdf =
          Bdf{hb.domain, hb.bus, static_cast<std::uint8_t>(*rp->devfn >> 3), static_cast<std::uint8_t>(*rp->devfn & 7)};
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

void PlanBuilder::assign_below(PortSpec& port, int depth) {
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
void PlanBuilder::make_model(Plan& plan) {
  Topology& topo = plan.state.topo;
  plan.state.source = "plan " + r_.name();
  topo.source_description = plan.state.source;
  topo.numa_nodes_unknown = "not in a plan";
  make_host_bridges(plan);
  // Ports and what is below them, walking down from each root port.
  for (std::size_t i : root_ports_) {
    const PortSpec& rp = ports_[i];
    const std::string& hb = host_bridge_ids_.at(rp.host_bridge);
    Function& fn = add_function(topo, rp.bdf, rp.ids, kClassPciBridge, PortType::kRootPort, std::nullopt, hb,
                                topo.host_bridges.at(hb).sysfs_path);
    set_acs(fn, rp.acs);
    own_link(fn, rp);
    plan.names[rp.name] = fn.bdf;
    fn.name = rp.name;
    make_below(plan, rp, fn);
  }
  for (std::size_t h = 0; h < host_bridges_.size(); ++h)
    for (std::size_t i : on_host_bridge_[h]) {
      const EndpointSpec& e = endpoints_[i];
      const std::string& hb = host_bridge_ids_.at(host_bridges_[h].name);
      Function& fn = add_function(topo, e.bdf, e.ids, e.class_code, PortType::kRcIntegratedEndpoint, std::nullopt, hb,
                                  topo.host_bridges.at(hb).sysfs_path);
      set_acs(fn, e.acs);
      plan.names[e.name] = fn.bdf;
      fn.name = e.name;
    }
  find_host_bridge_devices(topo);
  make_roles(plan);
}

Function& PlanBuilder::add_function(Topology& topo, Bdf bdf, Ids ids, std::uint32_t class_code, PortType type,
                                    std::optional<Bdf> parent, const std::string& host_bridge,
                                    const std::string& parent_path) {
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
  fn.numa_unknown = "not in a plan";
  fn.driver_not_carried = "not in a plan";  // a planned NVMe is not one without its driver
  return topo.functions.emplace(bdf, std::move(fn)).first->second;
}

void PlanBuilder::set_acs(Function& fn, const Acs& acs) {
  fn.acs = acs;
  if (acs.presence == Presence::kUnknown) fn.config_note = "ACS not given in the plan";
  fn.rebar_presence = Presence::kUnknown;
  fn.sriov_presence = Presence::kUnknown;
}

void PlanBuilder::make_host_bridges(Plan& plan) {
  Topology& topo = plan.state.topo;
  for (const HostBridgeSpec& hb : host_bridges_) {
    char id[16];
    std::snprintf(id, sizeof id, "%04x:%02x", hb.domain, hb.bus);
    HostBridge& bridge = topo.host_bridges[id];
    bridge.id = id;
    bridge.domain = hb.domain;
    bridge.bus = hb.bus;
    bridge.sysfs_path = std::string("/sys/devices/pci") + id;
    bridge.name = hb.name;
    if (hb.device) {
      Function& fn = add_function(topo, Bdf{hb.domain, hb.bus, 0, 0}, *hb.device, kClassHostBridge, PortType::kNotPcie,
                                  std::nullopt, id, bridge.sysfs_path);
      fn.acs.presence = Presence::kAbsent;
      plan.names[hb.name] = fn.bdf;
      fn.name = hb.name;
    }
    host_bridge_ids_[hb.name] = id;
  }
}

// The switch or endpoint on `port`'s link, and below a switch its downstream ports in turn.
void PlanBuilder::make_below(Plan& plan, const PortSpec& port, Function& up) {
  Topology& topo = plan.state.topo;
  auto it = below_port_.find(static_cast<std::size_t>(&port - ports_.data()));
  if (it == below_port_.end()) return;
  if (it->second.kind == Node::kEndpoint) {
    const EndpointSpec& e = endpoints_[it->second.index];
    Function& fn =
        add_function(topo, e.bdf, e.ids, e.class_code, PortType::kEndpoint, up.bdf, up.host_bridge, up.sysfs_path);
    set_acs(fn, e.acs);
    link(fn, up, e.speed, e.width);
    plan.names[e.name] = fn.bdf;
    fn.name = e.name;
    add_vfs(topo, fn, e, up);
    return;
  }
  const SwitchSpec& s = switches_[it->second.index];
  Function& usp =
      add_function(topo, s.bdf, s.ids, kClassPciBridge, PortType::kUpstreamPort, up.bdf, up.host_bridge, up.sysfs_path);
  set_acs(usp, s.acs);
  link(usp, up, s.speed, s.width);
  plan.names[s.name] = usp.bdf;
  usp.name = s.name;
  for (std::size_t i : s.downstream) {
    const PortSpec& dsp = ports_[i];
    Function& fn = add_function(topo, dsp.bdf, dsp.ids, kClassPciBridge, PortType::kDownstreamPort, usp.bdf,
                                usp.host_bridge, usp.sysfs_path);
    set_acs(fn, dsp.acs);
    own_link(fn, dsp);
    plan.names[dsp.name] = fn.bdf;
    fn.name = dsp.name;
    make_below(plan, dsp, fn);
  }
}

// Roles: the plan says which devices are GPUs and NVMe, in address order as read_inventory lists them.
void PlanBuilder::make_roles(Plan& plan) {
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
void PlanBuilder::add_vfs(Topology& topo, Function& pf, const EndpointSpec& e, Function& up) {
  if (!e.vfs) return;
  pf.sriov_presence = Presence::kPresent;
  pf.sriov.total_vfs = pf.sriov.num_vfs = static_cast<std::uint16_t>(e.vfs);
  pf.sriov.vf_device = e.ids.device;
  for (int i = 1; i <= e.vfs; ++i) {
    Bdf bdf = pf.bdf;
    bdf.fn = static_cast<std::uint8_t>(i);
    Function& vf =
        add_function(topo, bdf, e.ids, e.class_code, PortType::kEndpoint, up.bdf, up.host_bridge, up.sysfs_path);
    vf.acs.presence = Presence::kAbsent;
    vf.physfn = pf.bdf;
    vf.link.max_speed = pf.link.max_speed;
    vf.link.max_width = pf.link.max_width;
    vf_of_[bdf] = &e;
  }
}

// A port's own capability; the current link is set when its device is (link()).
void PlanBuilder::own_link(Function& fn, const PortSpec& port) {
  fn.link.max_speed = port.speed;
  fn.link.max_width = port.width;
}

// The link between a device and the port above it trains to what both ends can do; both ends
// then report that as their current link.
void PlanBuilder::link(Function& fn, Function& port, std::optional<double> speed, std::optional<int> width) {
  fn.link.max_speed = speed;
  fn.link.max_width = width;
  if (speed && port.link.max_speed) fn.link.cur_speed = port.link.cur_speed = std::min(*speed, *port.link.max_speed);
  if (width && port.link.max_width) fn.link.cur_width = port.link.cur_width = std::min(*width, *port.link.max_width);
}

}  // namespace p2pcheck::plan_internal
