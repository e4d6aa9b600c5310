// hwloc XML (`lstopo --of xml`, hwloc 1.x and 2.x): the PCI tree as nested objects, IDs and
// classes in pci_type, the CPU and kernel release in info attributes. Parsed with libxml2 without
// network access, DTD loading or entity substitution.
#include <array>
#include <cctype>
#include <cstdio>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "p2pcheck/import/import.h"
#include "p2pcheck/import/sysfs_builder.h"
#include "p2pcheck/source/error.h"
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

struct Walk {
  std::string name;
  SysfsBuilder& builder;
  std::map<std::string, std::string> info;  // first value of each info name, document order
  int functions = 0;
  bool nvme_class_guessed = false;

  void object(xmlNode* node, std::optional<Bdf> parent) {
    std::string busid = attr(node, "pci_busid");
    if (!busid.empty()) {
      // pci_type="0108 [144d:a826] [144d:a812] 00": class (base+sub), IDs, subsystem IDs, revision.
      std::string type = attr(node, "pci_type");
      auto bdf = Bdf::parse(busid);
      auto fields = pci_type_fields(type);
      // One object lstopo did not write as it does costs that object and what is below it (their
      // path would miss it), not the machine.
      if (!bdf || !fields || builder.has_function(*bdf)) {
        builder.skipped(
            name + ": line " + std::to_string(xmlGetLineNo(node)) + ": PCI object with pci_busid='" +
            busid.substr(0, 40) + "' pci_type='" + type.substr(0, 40) + "'" +
            (bdf && fields ? " appears twice" : "; expected 'dddd:bb:dd.f' and 'CCCC [VVVV:DDDD] [SSSS:ssss] RR'") +
            "; it and the objects below it left out");
        return;
      }
      SynthFunction fn;
      fn.bdf = *bdf;
      fn.parent = parent;
      auto h = [&](int i) { return (*fields)[static_cast<size_t>(i - 1)]; };
      fn.class_code = h(1) << 8;
      // hwloc keeps no programming interface; class 0108 is taken as NVMe (prog-if 02), as nearly
      // every such function is (the alternative, NVMHCI, is long gone).
      if (h(1) == 0x0108) {
        fn.class_code |= 0x02;
        nvme_class_guessed = true;
      }
      fn.vendor = static_cast<std::uint16_t>(h(2));
      fn.device = static_cast<std::uint16_t>(h(3));
      fn.subsystem_vendor = static_cast<std::uint16_t>(h(4));
      fn.subsystem_device = static_cast<std::uint16_t>(h(5));
      fn.revision = static_cast<std::uint8_t>(h(6));
      builder.add_function(std::move(fn));
      ++functions;
      parent = *bdf;
    }
    for (xmlNode* child = node->children; child; child = child->next) {
      if (is(child, "object"))
        object(child, parent);
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
    throw Error(name, "XML without a <topology> root; expected lstopo --of xml output");
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

// What hwloc XML never carries: config space, link state, drivers, the kernel's configuration.
void add_hwloc_limits(SysfsBuilder& builder, bool nvme_class_guessed) {
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
  if (nvme_class_guessed)
    builder.note(
        "hwloc keeps no programming interface: class 0108 functions are taken as NVMe; NVMe controller "
        "names are unknown, so select them by PCI address");
}

}  // namespace

MemoryTree import_hwloc(const std::string& xml, const std::string& name, const ImportOptions& options) {
  Doc doc;
  xmlNode* root = topology_root(doc, xml, name);
  SysfsBuilder builder("hwloc", name);
  Walk walk{name, builder, {}, 0, false};
  for (xmlNode* child = root->children; child; child = child->next)
    if (is(child, "object")) walk.object(child, std::nullopt);
  if (walk.functions == 0)
    throw Error(name, builder.first_skipped().empty()
                          ? "no PCI objects; lstopo left out I/O devices (run `lstopo --whole-io --of xml`, or at "
                            "least without --no-io)"
                          : "no PCI object that could be read (first problem: " + builder.first_skipped() + ")");
  add_cpuinfo(builder, walk.info, options);
  add_identity_files(builder, walk.info);
  add_hwloc_limits(builder, walk.nvme_class_guessed);
  return builder.finish();
}

}  // namespace p2pcheck
