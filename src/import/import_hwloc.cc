// hwloc XML (`lstopo --of xml`, hwloc 1.x and 2.x): the PCI tree as nested objects, IDs and
// classes in pci_type, the CPU and kernel release in info attributes. Parsed with libxml2 without
// network access, DTD loading or entity substitution.
#include <array>
#include <cctype>
#include <cstdio>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <set>

#include "hwloc_facts.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/import/sysfs_builder.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

std::string attr(xmlNode* node, const char* key) {
  xmlChar* v = xmlGetProp(node, reinterpret_cast<const xmlChar*>(key));
  if (!v) return "";
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}

bool is(xmlNode* node, const char* name) {
  return node->type == XML_ELEMENT_NODE && xmlStrcmp(node->name, reinterpret_cast<const xmlChar*>(name)) == 0;
}

// pci_type="CCCC [VVVV:DDDD] [SSSS:ssss] RR": the six hex fields, in that order.
std::optional<std::array<std::uint32_t, 6>> pci_type_fields(std::string_view type) {
  static constexpr std::string_view kShape = "CCCC [VVVV:DDDD] [SSSS:ssss] RR";
  if (type.size() != kShape.size()) return std::nullopt;
  for (size_t i = 0; i < kShape.size(); ++i) {
    bool digit = std::isalpha(static_cast<unsigned char>(kShape[i]));
    if (digit ? !is_hex_digits(type.substr(i, 1)) : type[i] != kShape[i]) return std::nullopt;
  }
  std::array<std::uint32_t, 6> out{};
  const size_t at[] = {0, 6, 11, 18, 23, 29}, len[] = {4, 4, 4, 4, 4, 2};
  for (size_t i = 0; i < 6; ++i) out[i] = static_cast<std::uint32_t>(parse_hex(type.substr(at[i], len[i])).value_or(0));
  return out;
}

// A PCI function's NUMA node as the walk knows it: a node, the kernel's NUMA_NO_NODE, or unknown.
constexpr int kNoNumaNode = -1, kNumaUnknown = -2;

// The NVMe names hwloc's OS devices below one PCI function give.
struct NvmeSeen {
  std::set<std::string> exact, inferred;  // controller names: written in a name / by the naming rule
  std::vector<std::string> blocks;
  std::string model, serial, firmware;
};

struct Walk {
  std::string name;
  SysfsBuilder& builder;
  std::map<std::string, std::string> info;  // first value of each info name, document order
  int functions = 0;
  std::set<int> numa_nodes;  // every NUMANode object's os_index
  std::map<Bdf, NvmeSeen> nvmes;
  std::set<Bdf> nvme_class_functions;

  // hwloc attaches I/O below the object whose CPUs are the device's local CPUs (the kernel's
  // local_cpus, the CPUs of its numa_node), the highest such: its nodeset names the node. The top
  // object stands for the whole machine, where hwloc puts a device local to every CPU: the kernel's
  // NUMA_NO_NODE. Any other object of several nodes (or none) leaves the node unknown.
  static int numa_of(xmlNode* node, bool top) {
    std::string text = attr(node, "complete_nodeset");
    auto nodes = parse_hwloc_nodeset(text.empty() ? attr(node, "nodeset") : text);
    if (!nodes || nodes->empty()) return kNumaUnknown;
    if (nodes->size() == 1) return *nodes->begin();
    return top ? kNoNumaNode : kNumaUnknown;
  }

  // Every NUMANode object's os_index, before the walk: a document without them (hwloc 1.x on a
  // machine without NUMA) says nothing by its nodesets. The parser bounds the depth (256).
  void collect_numa_nodes(xmlNode* node) {
    for (xmlNode* child = node->children; child; child = child->next) {
      if (!is(child, "object")) continue;
      if (attr(child, "type") == "NUMANode")
        if (auto index = parse_dec(attr(child, "os_index")); index && *index >= 0 && *index < kMaxHwlocNumaNodes)
          numa_nodes.insert(static_cast<int>(*index));
      collect_numa_nodes(child);
    }
  }

  // An OS device below PCI function `bdf`: NVMe block devices and controllers name the controller.
  void os_device(xmlNode* node, const Bdf& bdf) {
    auto dev = hwloc_nvme_device(attr(node, "name"));
    if (!dev) return;
    NvmeSeen& seen = nvmes[bdf];
    (dev->exact ? seen.exact : seen.inferred).insert(dev->controller);
    if (!dev->block.empty() && seen.blocks.size() < 4096) seen.blocks.push_back(dev->block);
    for (xmlNode* child = node->children; child; child = child->next) {
      if (!is(child, "info")) continue;
      std::string key = attr(child, "name");
      std::string* field = key == "Model"          ? &seen.model
                           : key == "SerialNumber" ? &seen.serial
                           : key == "Revision"     ? &seen.firmware
                                                   : nullptr;
      if (field && field->empty()) *field = std::string(trim(attr(child, "value")));
    }
  }

  // A PCI object (pci_busid) as a function below `parent`; false when it was left out.
  bool pci_object(xmlNode* node, const std::string& busid, std::optional<Bdf> parent, int numa) {
    // pci_type="0108 [144d:a826] [144d:a812] 00": class (base+sub), IDs, subsystem IDs, revision.
    std::string type = attr(node, "pci_type");
    auto bdf = Bdf::parse(busid);
    auto fields = pci_type_fields(type);
    // One object lstopo did not write as it does costs that object and what is below it (their
    // path would miss it), not the machine.
    if (!bdf || !fields || builder.has_function(*bdf)) {
      const bool twice = bdf && fields;
      builder.skipped(
          twice ? "PCI objects appear twice (left out with the objects below them)"
                : "PCI objects are not as lstopo writes them (left out with the objects below them)",
          "line " + std::to_string(xmlGetLineNo(node)),
          name + ": line " + std::to_string(xmlGetLineNo(node)) + ": PCI object with pci_busid='" +
              busid.substr(0, 40) + "' pci_type='" + type.substr(0, 40) + "'" +
              (twice ? " appears twice" : "; expected 'dddd:bb:dd.f' and 'CCCC [VVVV:DDDD] [SSSS:ssss] RR'") +
              "; it and the objects below it left out");
      return false;
    }
    SynthFunction fn;
    fn.bdf = *bdf;
    fn.parent = parent;
    auto h = [&](int i) { return (*fields)[static_cast<size_t>(i - 1)]; };
    fn.class_code = h(1) << 8;
    // hwloc keeps no programming interface; class 0108 is taken as NVMe (prog-if 02), as nearly
    // every such function is (the alternative, NVMHCI, is long gone).
    if (h(1) == 0x0108) fn.class_code |= 0x02;
    fn.vendor = static_cast<std::uint16_t>(h(2));
    fn.device = static_cast<std::uint16_t>(h(3));
    fn.subsystem_vendor = static_cast<std::uint16_t>(h(4));
    fn.subsystem_device = static_cast<std::uint16_t>(h(5));
    fn.revision = static_cast<std::uint8_t>(h(6));
    if (numa != kNumaUnknown && !numa_nodes.empty()) fn.numa_node = numa;
    if (h(1) == 0x0108) nvme_class_functions.insert(*bdf);
    builder.add_function(std::move(fn));
    ++functions;
    return true;
  }

  // `parent`: the nearest PCI function above; `numa`: the node of the nearest object that is not
  // I/O; `top`: the topology's first object, the whole machine.
  void object(xmlNode* node, std::optional<Bdf> parent, int numa, bool top) {
    std::string type = attr(node, "type");
    if (type != "Bridge" && type != "PCIDev" && type != "OSDev" && type != "Misc") numa = numa_of(node, top);
    std::string busid = attr(node, "pci_busid");
    bool pci = !busid.empty();
    if (pci) {
      if (!pci_object(node, busid, parent, numa)) return;
      parent = Bdf::parse(busid);
    }
    for (xmlNode* child = node->children; child; child = child->next) {
      if (is(child, "object") && pci && attr(child, "type") == "OSDev")
        os_device(child, *parent);
      else if (is(child, "object"))
        object(child, parent, numa, false);
      else if (is(child, "info"))
        info.emplace(attr(child, "name"), attr(child, "value"));
    }
  }
};

struct Doc {
  xmlDoc* doc = nullptr;
  ~Doc() {
    if (doc) xmlFreeDoc(doc);
  }
};

}  // namespace

namespace {

// hwloc's Architecture (uname -m) of a machine that is not x86, as its kernel's /proc/cpuinfo would
// begin (arch/*/kernel show_cpuinfo), so the analysis learns the architecture the way it would
// from the machine itself; "" for x86 or an architecture this does not know.
std::string non_x86_cpuinfo(const std::string& arch, const std::string& model) {
  std::string head = "processor\t: 0\n";
  if (arch.rfind("ppc", 0) == 0) return head + "cpu\t\t: " + (model.rfind("POWER", 0) == 0 ? model : "POWER") + "\n\n";
  if (arch == "aarch64" || arch.rfind("arm", 0) == 0) return head + "CPU implementer\t: unknown\n\n";
  if (arch.rfind("riscv", 0) == 0) return head + "isa\t\t: rv64\n\n";
  if (arch.rfind("s390", 0) == 0) return "vendor_id\t: IBM/S390\n" + head + "\n";
  return "";
}

// The document's <topology> root; Error for anything that is not well-formed lstopo XML.
xmlNode* topology_root(Doc& doc, const std::string& xml, const std::string& name) {
  if (xml.size() > static_cast<size_t>(INT32_MAX)) throw Error(name, "too large");
  doc.doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr,
                          XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc.doc) {
    const xmlError* e = xmlGetLastError();
    throw Error(name + (e ? ": line " + std::to_string(e->line) : ""),
                "not well-formed XML" + (e && e->message ? ": " + std::string(trim(e->message)) : std::string()));
  }
  xmlNode* root = xmlDocGetRootElement(doc.doc);
  if (!root || !is(root, "topology"))
    throw Error(name, "XML whose root is <" +
                          printable(root ? std::string(reinterpret_cast<const char*>(root->name)).substr(0, 40) : "") +
                          ">, not <topology>; expected lstopo --of xml output: ask for `lstopo --whole-io --of xml`");
  return root;
}

// An info attribute's value, trimmed; "" when the document has none.
std::string info_of(const std::map<std::string, std::string>& info, const char* key) {
  auto it = info.find(key);
  return it == info.end() ? std::string() : std::string(trim(it->second));
}

// /proc/cpuinfo as the kernel would begin it, from hwloc's CPU or, not x86, its Architecture.
void add_cpuinfo(SysfsBuilder& builder, const std::map<std::string, std::string>& info, const ImportOptions& options) {
  std::string vendor = info_of(info, "CPUVendor"), family = info_of(info, "CPUFamilyNumber");
  if (!vendor.empty() && !family.empty()) {
    std::string model = info_of(info, "CPUModelNumber");
    builder.set_file("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: " + vendor + "\ncpu family\t: " + family +
                                          "\nmodel\t\t: " + (model.empty() ? "0" : model) +
                                          "\nmodel name\t: " + info_of(info, "CPUModel") + "\n\n");
  } else if (std::string cpuinfo = non_x86_cpuinfo(info_of(info, "Architecture"), info_of(info, "CPUModel"));
             !cpuinfo.empty()) {
    builder.set_file("/proc/cpuinfo", cpuinfo);
    builder.note("CPU: a " + info_of(info, "Architecture") +
                 " machine (hwloc's Architecture): not x86, so the kernel's AMD Zen rule cannot pass");
  } else {
    builder.not_carried("/proc/cpuinfo");
    // --cpu is a supplied fact (model/supplied.h): the check uses it where the input has no CPU.
    builder.note(options.cpu.empty() ? "CPU unknown: the hwloc XML has no CPUVendor/CPUFamilyNumber; pass --cpu"
                                     : "CPU not in the hwloc XML: --cpu " + options.cpu + " supplies it");
  }
}

// The kernel release, the host name and DMI's fields, where hwloc recorded them.
void add_identity_files(SysfsBuilder& builder, const std::map<std::string, std::string>& info) {
  if (std::string release = info_of(info, "OSRelease"); !release.empty() && info_of(info, "OSName") == "Linux")
    builder.set_file("/proc/sys/kernel/osrelease", release + "\n");
  else
    builder.not_carried("/proc/sys/kernel/osrelease");
  builder.set_hostname(info_of(info, "HostName"));
  static const std::pair<const char*, const char*> dmi[] = {
      {"DMIProductName", "product_name"}, {"DMIProductVersion", "product_version"}, {"DMIBoardVendor", "board_vendor"},
      {"DMIBoardName", "board_name"},     {"DMIBIOSVendor", "bios_vendor"},         {"DMIBIOSVersion", "bios_version"},
      {"DMISysVendor", "sys_vendor"}};
  for (const auto& [key, file] : dmi)
    if (!info_of(info, key).empty())
      builder.set_file(std::string("/sys/class/dmi/id/") + file, info_of(info, key) + "\n");
}

// The NVMe controllers hwloc's OS devices name, with their block devices; a name two functions
// claim (no kernel gives that) is left to neither. Returns the functions that got a name.
std::set<Bdf> add_hwloc_nvmes(const Walk& walk, SysfsBuilder& builder) {
  std::map<std::string, int> claims;
  auto controller_of = [](const NvmeSeen& seen) -> std::string {
    const std::set<std::string>& names = seen.exact.empty() ? seen.inferred : seen.exact;
    return names.size() == 1 ? *names.begin() : std::string();
  };
  for (const auto& [bdf, seen] : walk.nvmes) ++claims[controller_of(seen)];
  std::set<Bdf> named;
  for (const auto& [bdf, seen] : walk.nvmes) {
    std::string controller = controller_of(seen);
    if (controller.empty() || claims[controller] > 1) {
      builder.skipped("NVMe functions have devices below them that name no one controller of their own", bdf.str(),
                      walk.name + ": the NVMe devices hwloc shows below " + bdf.str() + " (" +
                          join(seen.blocks, ", ").substr(0, 200) +
                          ") do not name one controller of their own; its controller name left unknown");
      continue;
    }
    SynthNvme n{controller, bdf, seen.model, seen.serial, seen.firmware, {}};
    // Only the block devices of this controller: a path node of another would be a second link.
    std::set<std::string> taken;
    for (const std::string& block : seen.blocks)
      if (auto dev = hwloc_nvme_device(block); dev && dev->controller == controller && taken.insert(block).second)
        n.namespaces.push_back(block);
    builder.add_nvme(std::move(n));
    named.insert(bdf);
  }
  return named;
}

// The NUMA nodes online, as the kernel lists them, where the document has NUMANode objects.
void add_numa_nodes(const Walk& walk, SysfsBuilder& builder) {
  if (!walk.numa_nodes.empty())
    builder.set_file("/sys/devices/system/node/online", node_list_text(walk.numa_nodes) + "\n");
}

// What hwloc XML never carries: config space, link state, drivers, the kernel's configuration.
void add_hwloc_limits(SysfsBuilder& builder, std::size_t nvme_functions, std::size_t unnamed) {
  for (const char* path : {"/proc/version", "/proc/cmdline", "/proc/modules", "/proc/mounts", "/sys/class/iommu"})
    builder.not_carried(path);
  for (const char* area : kLiveOnlyAreas) builder.not_carried(area);
  for (const char* area : kDriverAreas) builder.not_carried(area);
  for (const char* area : {"/sys/class/dmi", "/sys/class/nvme", "/sys/block", "/sys/class/block",
                           "/proc/sys/kernel/hostname", "/sys/devices/**/numa_node", "/sys/devices/system/node"})
    builder.not_carried(area);
  for (const char* config : kConfigSpaces) builder.not_carried(config);
  builder.note(
      "hwloc XML: no config space, so ACS, port types and the host bridge device's port type are unknown; "
      "link speed and width unknown (hwloc keeps only their product in GB/s); no drivers");
  builder.note("kernel configuration (CONFIG_PCI_P2PDMA) and command line unknown (not in hwloc XML)");
  builder.note(
      "without --whole-io lstopo leaves out PCI functions it finds unimportant, such as 00.0 of a root bus: "
      "the kernel's host bridge device may then be unknown");
  if (unnamed)
    builder.note("hwloc keeps no programming interface: class 0108 functions are taken as NVMe; " +
                 std::to_string(unnamed) + " of " + std::to_string(nvme_functions) +
                 " have no NVMe device name below them in this hwloc XML, so their controller names are unknown: "
                 "select them by PCI address");
}

}  // namespace

MemoryTree import_hwloc(const std::string& xml, const std::string& name, const ImportOptions& options) {
  Doc doc;
  xmlNode* root = topology_root(doc, xml, name);
  SysfsBuilder builder("hwloc", name);
  Walk walk{name, builder};
  walk.collect_numa_nodes(root);
  for (xmlNode* child = root->children; child; child = child->next)
    if (is(child, "object")) walk.object(child, std::nullopt, kNumaUnknown, true);
  if (walk.functions == 0)
    throw Error(name, builder.first_skipped().empty()
                          ? "no PCI objects, only CPUs and memory; lstopo left out I/O devices: ask for `lstopo "
                            "--whole-io --of xml` (or at least without --no-io)"
                          : "no PCI object that could be read (" + std::to_string(builder.skipped_count()) +
                                " left out; first problem: " + builder.first_skipped() +
                                "); ask for `lstopo --whole-io --of xml` as lstopo writes it");
  add_cpuinfo(builder, walk.info, options);
  add_identity_files(builder, walk.info);
  std::set<Bdf> named = add_hwloc_nvmes(walk, builder);
  std::size_t unnamed = 0;
  for (const Bdf& bdf : walk.nvme_class_functions) unnamed += named.count(bdf) ? 0 : 1;
  add_numa_nodes(walk, builder);
  add_hwloc_limits(builder, walk.nvme_class_functions.size(), unnamed);
  return builder.finish();
}

}  // namespace p2pcheck
