// `lspci -vvv` text without a hex dump (best `lspci -nnDvvvk`, as root): each function's block
// becomes a config space image of what it states (lspci_text_config.h), handed to the same tree
// building as an `lspci -xxxx` dump's, with the NUMA node, IOMMU group, BAR sizes and driver lspci
// printed beside it. Text without numeric IDs is refused: the IDs decide the host bridge allowlist
// and the device classes, and names cannot be turned back into IDs reliably across pci.ids versions.
#include <algorithm>
#include <map>
#include <string>

#include "import_lspci.h"
#include "lspci_text.h"
#include "lspci_text_config.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/import/sysfs_builder.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// What the functions' images hold and lack, for the notes.
struct Rebuilt {
  std::map<Bdf, std::string> configs;
  std::map<Bdf, SynthFunction> seeds;
  int header_only = 0, no_extended = 0, registers_missing = 0, left_out = 0;
};

// Text of names only: say what it showed and what to ask for.
[[noreturn]] void refuse_without_ids(const LspciText& text, const std::string& name) {
  int gpus = 0, nvmes = 0;
  for (const TextFunction& fn : text.functions) {
    const std::string& c = fn.class_name;
    if (c == "VGA compatible controller" || c == "3D controller" || c == "Display controller" ||
        c == "Processing accelerators")
      ++gpus;
    if (c == "Non-Volatile memory controller") ++nvmes;
  }
  throw Error(name, "lspci -v text without numeric IDs (" + std::to_string(text.functions.size()) + " functions, " +
                        std::to_string(gpus) + " GPUs or accelerators and " + std::to_string(nvmes) +
                        " NVMe controllers by their class names): the IDs decide the host bridge allowlist and the "
                        "device classes, and names do not give them back reliably; ask for `sudo lspci -nnDvvvk` "
                        "(or `sudo lspci -xxxx`)");
}

Rebuilt rebuild(SysfsBuilder& builder, const LspciText& text, const std::string& name) {
  Rebuilt out;
  std::map<Bdf, int> first_line;
  for (const TextFunction& fn : text.functions) {
    if (fn.bad.empty()) {
      auto [at, added] = first_line.emplace(fn.bdf, fn.line);
      if (!added)
        throw Error(name + ": line " + std::to_string(fn.line),
                    fn.bdf.str() + " listed twice (first at line " + std::to_string(at->second) +
                        "); expected one block per function, as lspci prints it");
    }
    std::string why = fn.bad;
    if (why.empty() && !fn.has_ids)
      why = name + ": line " + std::to_string(fn.line) + ": " + fn.bdf.str() + " has no [vendor:device] numbers";
    std::optional<TextConfig> config;
    if (why.empty()) {
      config = config_from_text(fn, why);
      if (!config) why = name + ": line " + std::to_string(fn.line) + ": " + fn.bdf.str() + ": " + why;
    }
    if (!why.empty()) {
      builder.skipped(why + "; device left out");
      ++out.left_out;
      continue;
    }
    const bool pcie =
        std::any_of(fn.caps.begin(), fn.caps.end(), [](const TextCap& c) { return !c.extended && c.id == 0x10; });
    out.header_only += config->bytes.size() == 64;
    out.registers_missing += config->extended_incomplete;
    out.no_extended += pcie && config->bytes.size() == 256 && !config->extended_incomplete;
    out.configs[fn.bdf] = std::move(config->bytes);
    SynthFunction& seed = out.seeds[fn.bdf];
    seed.driver = fn.driver;
    // lspci prints "NUMA node" only where the kernel has one (not -1), "IOMMU group" only where there is one.
    if (text.numa_shown) seed.numa_node = fn.numa_node.value_or(-1);
    seed.iommu_group = fn.iommu_group;
    if (text.sizes_shown) seed.resource = resource_from_text(fn);
  }
  return out;
}

void add_text_notes(SysfsBuilder& builder, const LspciText& text, const Rebuilt& rebuilt, bool tree, int disagreements,
                    const std::string& cpuinfo, const ImportOptions& options) {
  note_lspci_limits(builder, cpuinfo, options, "text", tree, disagreements);
  if (!text.numa_shown) builder.not_carried("/sys/devices/**/numa_node");
  if (!text.iommu_shown) builder.not_carried("/sys/devices/**/iommu_group");
  if (!text.sizes_shown) builder.not_carried("/sys/devices/**/resource");
  if (!text.drivers_shown)
    for (const char* area : kDriverAreas) builder.not_carried(area);
  std::string from =
      "rebuilt from the lspci -vvv text: IDs, classes, bridges' bus numbers, the capability lists "
      "(Express port type and link, ACS, Resizable BAR, SR-IOV; other capabilities by ID only)";
  std::string lacks =
      "not in this lspci output: NVMe controller names and namespaces, mounts and the storage stack, "
      "p2pmem";
  (text.sizes_shown ? from : lacks) += ", BAR sizes";
  (text.numa_shown ? from : lacks) += text.numa_shown ? ", NUMA nodes" : ", NUMA nodes (no \"NUMA node:\" line)";
  (text.iommu_shown ? from : lacks) +=
      text.iommu_shown ? ", IOMMU groups" : ", IOMMU groups (no \"IOMMU group:\" line)";
  (text.drivers_shown ? from : lacks) += text.drivers_shown ? ", drivers" : ", drivers (lspci -k shows them)";
  builder.note(from);
  builder.note(lacks);
  if (rebuilt.header_only)
    builder.note("the text holds only the 64-byte header for " + std::to_string(rebuilt.header_only) +
                 " functions (\"Capabilities: <access denied>\": lspci run without root): their ACS and port type are "
                 "unknown; ask for `sudo lspci -nnDvvvk`");
  if (rebuilt.no_extended)
    builder.note(std::to_string(rebuilt.no_extended) +
                 " PCI Express functions list no extended capability (lspci could not read extended config space: "
                 "not root, or no ECAM; or there is none): their ACS is unknown, not absent");
  if (rebuilt.registers_missing)
    builder.note(std::to_string(rebuilt.registers_missing) +
                 " functions list ACS, Resizable BAR or SR-IOV without its registers (lspci -v, not -vv): their "
                 "extended capabilities are unknown; ask for `sudo lspci -nnDvvvk`");
}

}  // namespace

MemoryTree import_lspci_text(const std::string& text, const std::string* tree_text, const std::string& cpuinfo,
                             const std::string& name, const ImportOptions& options) {
  LspciText parsed = parse_lspci_text(text, name);
  bool any_ids = false;
  for (const TextFunction& fn : parsed.functions) any_ids = any_ids || fn.has_ids;
  if (!parsed.functions.empty() && !any_ids) refuse_without_ids(parsed, name);
  SysfsBuilder builder("lspci -vvv", name);
  Rebuilt rebuilt = rebuild(builder, parsed, name);
  if (rebuilt.configs.empty())
    throw Error(name, "no PCI function could be read from this lspci -vvv text" +
                          (builder.first_skipped().empty() ? "" : " (first problem: " + builder.first_skipped() + ")"));
  int disagreements =
      add_config_functions(builder, rebuilt.configs, std::move(rebuilt.seeds), tree_text, name, rebuilt.left_out > 0);
  add_text_notes(builder, parsed, rebuilt, tree_text != nullptr, disagreements, cpuinfo, options);
  return builder.finish();
}

}  // namespace p2pcheck
