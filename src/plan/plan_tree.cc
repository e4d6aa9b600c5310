// A read plan entered like every import: its functions, numbered and linked (plan_layout.cc), become
// the sysfs tree SysfsBuilder makes, each with the config space image that states what the plan
// says (port type, link, ACS, SR-IOV); its CPU and kernel become the files that say them; and what a
// plan cannot carry is declared in the tree's NotCarried and its manifest, as an import declares it.
#include <cstdint>
#include <string_view>
#include <vector>

#include "p2pcheck/import/config_bytes.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/sysfs_builder.h"
#include "p2pcheck/model/kernel_table.h"
#include "p2pcheck/plan/plan.h"
#include "p2pcheck/source/memory_source.h"
#include "plan_builder.h"

namespace p2pcheck {
namespace {

// PCI_EXP_FLAGS_TYPE of each port type, as express_port_type() reads it back.
unsigned express_type(PortType type) {
  switch (type) {
    case PortType::kLegacyEndpoint: return 1;
    case PortType::kRootPort: return 4;
    case PortType::kUpstreamPort: return 5;
    case PortType::kDownstreamPort: return 6;
    case PortType::kPcieToPciBridge: return 7;
    case PortType::kPciToPcieBridge: return 8;
    case PortType::kRcIntegratedEndpoint: return 9;
    case PortType::kRcEventCollector: return 10;
    default: return 0;  // an endpoint
  }
}

// A link register's speed and width: 0 where the plan leaves them unknown (as a register reads 0).
std::uint32_t link_register(std::optional<double> speed, std::optional<int> width) {
  static const double speeds[] = {2.5, 5, 8, 16, 32, 64};
  unsigned code = 0;
  for (unsigned i = 0; i < 6; ++i)
    if (speed && *speed == speeds[i]) code = i + 1;
  return code | static_cast<std::uint32_t>(width.value_or(0)) << 4;
}

constexpr unsigned kCapExp = 0x40, kExtAcs = 0x000d, kExtSriov = 0x0010;

// The 4 KiB a function's config file would hold, stating only what the plan says: the header, the
// PCIe capability (port type, Link Capabilities and Status), then ACS and SR-IOV where present.
std::string config_image(const Function& fn) {
  std::string c(4096, '\0');
  put16(c, 0x00, fn.vendor);
  put16(c, 0x02, fn.device);
  put8(c, 0x08, fn.revision);
  put8(c, 0x09, fn.class_code);
  put16(c, 0x0a, fn.class_code >> 8);
  put8(c, 0x0e, fn.header_type.value_or(0));
  if (fn.port_type == PortType::kNotPcie) return c;
  put16(c, 0x06, 0x10);  // PCI_STATUS_CAP_LIST
  put8(c, 0x34, kCapExp);
  put8(c, kCapExp, 0x10);  // PCI_CAP_ID_EXP, the last in the list
  put16(c, kCapExp + 2, 2 | express_type(fn.port_type) << 4);
  put32(c, kCapExp + 0x0c, link_register(fn.link.max_speed, fn.link.max_width));
  put16(c, kCapExp + 0x12, link_register(fn.link.cur_speed, fn.link.cur_width));
  std::vector<unsigned> ext;  // the extended capabilities, each at its own 0x40 from 0x100
  if (fn.acs.presence == Presence::kPresent) ext.push_back(kExtAcs);
  if (fn.sriov_presence == Presence::kPresent) ext.push_back(kExtSriov);
  for (std::size_t i = 0; i < ext.size(); ++i) {
    const unsigned at = 0x100 + 0x40 * static_cast<unsigned>(i);
    const unsigned next = i + 1 < ext.size() ? at + 0x40 : 0;
    put32(c, at, ext[i] | 1u << 16 | next << 20);
    if (ext[i] == kExtAcs) {
      put16(c, at + 4, fn.acs.capability);
      put16(c, at + 6, fn.acs.control);
    } else {
      put16(c, at + 0x0e, fn.sriov.total_vfs);  // PCI_IOV_TOTALVF
      put16(c, at + 0x10, fn.sriov.num_vfs);    // PCI_IOV_NUMVF
      put16(c, at + 0x1a, fn.sriov.vf_device);  // PCI_IOV_DID
    }
  }
  return c;
}

// The gzip member (RFC 1952) of `text` in one stored deflate block: /proc/config.gz where the plan
// gives CONFIG_PCI_P2PDMA without a release to name /boot/config-<release> by.
std::string gzip_stored(const std::string& text) {
  std::uint32_t crc = 0xffffffff;
  for (unsigned char byte : text) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = crc >> 1 ^ (0xedb88320 & (0u - (crc & 1)));
  }
  crc = ~crc;
  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x01", 11);  // header; BFINAL, stored
  std::string tail(12, '\0');
  put16(tail, 0, static_cast<unsigned>(text.size()));
  put16(tail, 2, ~static_cast<unsigned>(text.size()) & 0xffff);
  put32(tail, 4, crc);
  put32(tail, 8, static_cast<std::uint32_t>(text.size()));
  return out + tail.substr(0, 4) + text + tail.substr(4);
}

// The check's parts a plan cannot carry, as the manifest names them (their order, the report's).
const char* const kUncarriedAreas[] = {"kernel_module", "iommu", "gpu_stack", "storage", "recorded_verify"};

// The files of the machine's CPU and kernel, and where in the plan each came from (its "origins",
// which the evidence cites: "server.toml [cpu]").
void add_machine_files(const Plan& plan, SysfsBuilder& b) {
  nlohmann::ordered_json origins = nlohmann::ordered_json::object();
  origins["/proc/cpuinfo"] = plan.file + " [cpu]";
  const CpuInfo& cpu = plan.state.machine.cpu;
  std::string cpuinfo =
      "processor\t: 0\nvendor_id\t: " + cpu.vendor_id + "\ncpu family\t: " + std::to_string(cpu.family) + "\n";
  if (cpu.model >= 0) cpuinfo += "model\t\t: " + std::to_string(cpu.model) + "\n";
  if (!cpu.model_name.empty()) cpuinfo += "model name\t: " + cpu.model_name + "\n";
  b.set_file("/proc/cpuinfo", cpuinfo + "\n");
  const std::string& release = plan.state.machine.kernel_release;
  if (!release.empty()) b.set_file("/proc/sys/kernel/osrelease", release + "\n");
  const KernelConfig& config = plan.state.machine.config;
  if (!config.file.empty()) {
    const std::string text =
        config.options.count("CONFIG_PCI_P2PDMA") ? "CONFIG_PCI_P2PDMA=y\n" : "# CONFIG_PCI_P2PDMA is not set\n";
    const std::string path = release.empty() ? "/proc/config.gz" : "/boot/config-" + release;
    b.set_file(path, release.empty() ? gzip_stored(text) : text);
    origins[path] = plan.file + " [kernel] p2pdma";
  } else {
    // No p2pdma in the plan: its config is "not in a plan", not a file the check looked for and missed.
    for (const char* path : {"/boot", "/proc/config.gz", "/lib/modules"}) b.not_carried(path);
  }
  // The kernel's other files (its command line, modules, mounts, IOMMU units) no plan states.
  for (const char* path : kKernelFiles)
    if (release.empty() || std::string_view(path) != "/proc/sys/kernel/osrelease") b.not_carried(path);
  b.describe("origins", origins);
  // The kernel's own allowlist table, as a capture records it: a plan has no running kernel to ask,
  // so it was not tried (origin none, no reason), and the version's table decides.
  b.set_file(kKernelTableFile, kernel_table_json(KernelTable{}));
}

}  // namespace

MemoryTree plan_tree(const Plan& plan) {
  SysfsBuilder b("plan", plan.file);
  for (const auto& [bdf, fn] : plan.state.topo.functions) {
    SynthFunction s;
    s.bdf = bdf;
    s.parent = fn.parent;
    s.vendor = fn.vendor;
    s.device = fn.device;
    s.class_code = fn.class_code;
    s.config = config_image(fn);
    s.physfn = fn.physfn;
    b.add_function(std::move(s));
  }
  for (const NvmeController& c : plan.state.inv.nvmes)
    if (!c.name.empty()) b.add_nvme({c.name, c.bdf, "", "", "", {}});
  add_machine_files(plan, b);
  // What a plan does not say reads as "not in a plan": who the machine is, NUMA, drivers, and the
  // registers no plan states (ACS where it is not given, Resizable BAR, SR-IOV where it gives no VFs).
  for (const char* path : {"/proc/sys/kernel/hostname", "/sys/class/dmi/id", "/sys/devices/**/numa_node",
                           "/sys/devices/system/node", "/sys/devices/**/config/rebar", "/sys/devices/**/config/sriov"})
    b.not_carried(path);
  // ACS where the plan does not give it: the image shows none, so it is declared not carried below
  // that function's config file alone, and a planned "none" stays absent.
  for (const auto& [bdf, fn] : plan.state.topo.functions)
    if (fn.acs.presence == Presence::kUnknown) b.not_carried(fn.sysfs_path + "/config/acs");
  for (const char* area : kDriverAreas) b.not_carried(area);
  nlohmann::ordered_json names = nlohmann::ordered_json::object(), bridges = nlohmann::ordered_json::object();
  for (const auto& [name, bdf] : plan.names) names[name] = bdf.str();
  for (const auto& [id, bridge] : plan.state.topo.host_bridges)
    if (!bridge.name.empty()) bridges[id] = bridge.name;
  b.describe("title", "planned server from " + plan.file + (plan.description.empty() ? "" : ": " + plan.description));
  b.describe("device_names", names);
  b.describe("host_bridge_names", bridges);
  b.describe("not_carried_areas", kUncarriedAreas);
  b.describe("plan", {{"file", plan.file}, {"description", plan.description}, {"not_carried", kUncarriedAreas}});
  b.note(
      "not in a plan: drivers, IOMMU mode, storage stack, the kernel's own answers (UNKNOWN until the machine is built "
      "and checked)");
  return b.finish();
}

OpenedDump open_plan(const std::string& file) {
  Plan plan = load_plan(file);
  OpenedDump opened;
  opened.source = open_memory_source(plan_tree(plan), "plan " + file);
  opened.info = read_capture_info(*opened.source);
  return opened;
}

}  // namespace p2pcheck
