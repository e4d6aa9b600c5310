// `udevadm info --export-db`: full sysfs paths give the hierarchy exactly as the kernel built it;
// PCI_ID, PCI_SUBSYS_ID, PCI_CLASS and DRIVER give identity; CPU 0's modalias gives vendor,
// family and model. No config space: ACS, port types and links stay unknown.
#include "import_udev.h"

#include <algorithm>
#include <cstdio>

#include "p2pcheck/import/import.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/source.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

std::uint32_t hex_field(const UdevRecord& r, const std::string& key, const std::string& text, const std::string& name,
                        std::uint32_t max) {
  auto v = parse_hex(text);
  if (!v || *v > max)
    throw Error(name + ": line " + std::to_string(r.line), key + "=" + text + " is not the hex value udev writes");
  return static_cast<std::uint32_t>(*v);
}

// "1AF4:1042" -> {0x1af4, 0x1042}
std::pair<std::uint16_t, std::uint16_t> id_pair(const UdevRecord& r, const std::string& key, const std::string& name) {
  const std::string& text = r.env.at(key);
  size_t colon = text.find(':');
  if (colon == std::string::npos)
    throw Error(name + ": line " + std::to_string(r.line), key + "=" + text + ": expected VVVV:DDDD");
  return {static_cast<std::uint16_t>(hex_field(r, key, text.substr(0, colon), name, 0xffff)),
          static_cast<std::uint16_t>(hex_field(r, key, text.substr(colon + 1), name, 0xffff))};
}

// The kernel's X86_VENDOR_* numbers (arch/x86/include/asm/processor.h) as CPUID vendor strings.
const char* x86_vendor(unsigned index) {
  switch (index) {
    case 0: return "GenuineIntel";
    case 1: return "CyrixInstead";
    case 2: return "AuthenticAMD";
    case 5: return "CentaurHauls";
    case 7: return "GenuineTMx86";
    case 8: return "Geode by NSC";
    case 9: return "HygonGenuine";
    case 10: return "  Shanghai  ";
    case 11: return "Vortex86 SoC";
  }
  return nullptr;
}

// Device paths are matched with plain string tests: a hostile 80 KB path made std::regex's
// recursion overflow the stack.

// "/devices/.../<dddd:bb:dd.f>/nvme/nvmeN": the controller's PCI address text and name.
std::optional<std::pair<std::string, std::string>> nvme_controller_path(const std::string& devpath) {
  size_t slash = devpath.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string ctrl = devpath.substr(slash + 1);
  auto kind = parse_nvme_name(ctrl);
  if (!kind || kind->kind != NvmeName::Kind::kController) return std::nullopt;
  std::string parent = devpath.substr(0, slash);
  if (parent.size() < 5 || parent.compare(parent.size() - 5, 5, "/nvme") != 0) return std::nullopt;
  parent.resize(parent.size() - 5);
  size_t bdf_at = parent.rfind('/');
  // "/devices/" + something + "/" + the address.
  if (parent.rfind("/devices/", 0) != 0 || bdf_at == std::string::npos || bdf_at < 9) return std::nullopt;
  std::string bdf = parent.substr(bdf_at + 1);
  if (bdf.size() <= 7 || !Bdf::shaped(bdf)) return std::nullopt;  // with its domain, as sysfs names it
  return std::make_pair(bdf, ctrl);
}

// "/devices/.../nvme/nvmeN/nvmeNnM" (or a per-path "nvmeNcCnM"): the controller and namespace names.
std::optional<std::pair<std::string, std::string>> nvme_namespace_path(const std::string& devpath) {
  size_t ns_at = devpath.rfind('/');
  if (ns_at == std::string::npos || ns_at == 0) return std::nullopt;
  size_t ctrl_at = devpath.rfind('/', ns_at - 1);
  if (ctrl_at == std::string::npos) return std::nullopt;
  std::string ns = devpath.substr(ns_at + 1), ctrl = devpath.substr(ctrl_at + 1, ns_at - ctrl_at - 1);
  auto ns_kind = parse_nvme_name(ns), ctrl_kind = parse_nvme_name(ctrl);
  if (!ns_kind || (ns_kind->kind != NvmeName::Kind::kNamespace && ns_kind->kind != NvmeName::Kind::kPathNode) ||
      !ctrl_kind || ctrl_kind->kind != NvmeName::Kind::kController)
    return std::nullopt;
  if (ctrl_at < 5 || devpath.compare(ctrl_at - 5, 5, "/nvme") != 0) return std::nullopt;
  if (devpath.rfind("/devices/", 0) != 0 || ctrl_at - 5 < 9) return std::nullopt;
  return std::make_pair(ctrl, ns);
}

// "cpu:type:x86,venVVVVfamFFFFmodMMMM:feature:...": vendor, family, model and the feature list.
struct CpuAlias {
  unsigned vendor = 0, family = 0, model = 0;
  std::string features;
};
std::optional<CpuAlias> cpu_alias(std::string_view alias) {
  static constexpr std::string_view kPrefix = "cpu:type:x86,";
  if (alias.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  alias.remove_prefix(kPrefix.size());
  CpuAlias out;
  for (auto [tag, field] :
       {std::pair<std::string_view, unsigned*>{"ven", &out.vendor}, {"fam", &out.family}, {"mod", &out.model}}) {
    if (alias.substr(0, 3) != tag || alias.size() < 7 || !is_hex_digits(alias.substr(3, 4))) return std::nullopt;
    *field = static_cast<unsigned>(parse_hex(alias.substr(3, 4)).value_or(0));
    alias.remove_prefix(7);
  }
  if (alias.substr(0, 9) != ":feature:" || alias.find('\n') != std::string_view::npos) return std::nullopt;
  out.features = std::string(alias.substr(9));
  return out;
}

// The DMI files a dmi modalias names ("dmi:bvnX:...:svnNVIDIA:pnDGXA100:..."), as the kernel's
// dmi_id modalias writes them (drivers/firmware/dmi-id.c): a tag, then the value without spaces or
// colons. No tag is a prefix of another, so a field's tag is the one it starts with.
std::vector<std::pair<std::string, std::string>> dmi_alias_files(std::string_view alias) {
  static constexpr std::pair<std::string_view, const char*> kTags[] = {
      {"bvn", "bios_vendor"},     {"bvr", "bios_version"}, {"svn", "sys_vendor"}, {"pn", "product_name"},
      {"pvr", "product_version"}, {"rvn", "board_vendor"}, {"rn", "board_name"}};
  std::vector<std::pair<std::string, std::string>> files;
  if (alias.substr(0, 4) != "dmi:") return files;
  alias.remove_prefix(4);
  while (!alias.empty()) {
    std::string_view field = alias.substr(0, alias.find(':'));
    alias.remove_prefix(std::min(alias.size(), field.size() + 1));
    for (auto [tag, file] : kTags)
      if (field.substr(0, tag.size()) == tag && field.size() > tag.size()) {
        files.emplace_back(file, std::string(field.substr(tag.size())));
        break;
      }
  }
  return files;
}

}  // namespace

std::vector<UdevRecord> parse_udev_db(const std::string& text, const std::string& name,
                                      std::vector<SkippedRecord>& skipped) {
  std::vector<UdevRecord> records;
  int line_no = 0;
  bool open = false;
  std::size_t properties = 0;
  std::size_t odd = 0;
  auto where = [&] { return name + ": line " + std::to_string(line_no); };
  for (std::string_view rest = text; !rest.empty();) {
    std::string_view line = next_line(rest);
    ++line_no;
    if (line.empty()) {
      open = false;
      continue;
    }
    // udev itself writes the odd bare line (a property value with a newline in it): that line is
    // left out, not the machine. The limits below still hold for every line read.
    if (line.size() < 3 || line[1] != ':' || line[2] != ' ') {
      SkippedRecord note{kOddLines, "line " + std::to_string(line_no),
                         where() + ": '" + std::string(line.substr(0, 60)) + (line.size() > 60 ? "...'" : "'") +
                             " is not 'X: value' as udevadm info --export-db prints it; line left out"};
      if (open && odd++ < kMaxOddLinesKept)
        records.back().odd_lines.push_back(std::move(note));
      else if (open)
        ++records.back().odd_more;
      else if (skipped.size() < kMaxSkippedLines)
        skipped.push_back(std::move(note));
      else if (skipped.size() == kMaxSkippedLines)
        skipped.push_back({"", "", where() + " and later: more lines that are not 'X: value'; left out"});
      continue;
    }
    std::string_view value = line.substr(3);
    if (line[0] == 'P') {
      // A record per device: a large machine has some thousands.
      if (records.size() == kMaxUdevRecords)
        throw Error(where(),
                    "more than " + std::to_string(kMaxUdevRecords) + " device records; no machine has that many");
      // Kernel device paths fit in PATH_MAX; a longer one is not from udevadm.
      if (value.size() >= kMaxPathBytes)
        throw Error(where(), "device path of " + std::to_string(value.size()) +
                                 " bytes; sysfs paths are shorter than " + std::to_string(kMaxPathBytes));
      records.push_back({std::string(value), {}, line_no});
      open = true;
    } else if (line[0] == 'E' && open) {
      size_t eq = value.find('=');
      if (eq == std::string_view::npos) continue;
      if (++properties > kMaxUdevProperties)
        throw Error(where(),
                    "more than " + std::to_string(kMaxUdevProperties) + " device properties; no machine has that many");
      records.back().env[std::string(value.substr(0, eq))] = value.substr(eq + 1);
    }
  }
  return records;
}

namespace {

// kOther: a device of no concern to the verdict (HID, MEI, sound): its odd lines go unsaid.
enum class RecordUse { kOther, kOurs, kCpu0 };

// One record: a PCI function, an NVMe controller or namespace, DMI, or CPU 0; any other is not read.
// One without SUBSYSTEM may have been any of them: it counts as ours, so its oddities are said.
RecordUse add_udev_record(const UdevRecord& r, const std::string& name, SysfsBuilder& builder,
                          std::map<std::string, SynthNvme>& nvmes) {
  auto sub = r.env.find("SUBSYSTEM");
  if (sub == r.env.end()) return RecordUse::kOurs;
  if (sub->second == "pci") {
    SynthFunction fn;
    std::string slot = r.env.count("PCI_SLOT_NAME") ? r.env.at("PCI_SLOT_NAME") : basename(r.devpath);
    auto bdf = Bdf::parse(slot);
    if (!bdf)
      throw Error(name + ": line " + std::to_string(r.line), "PCI device '" + slot + "' is not named by a PCI address");
    fn.bdf = *bdf;
    fn.sysfs_path = "/sys" + r.devpath;
    if (!r.env.count("PCI_ID") || !r.env.count("PCI_CLASS"))
      throw Error(name + ": line " + std::to_string(r.line), "PCI device " + slot + " without PCI_ID or PCI_CLASS");
    std::tie(fn.vendor, fn.device) = id_pair(r, "PCI_ID", name);
    if (r.env.count("PCI_SUBSYS_ID")) {
      auto [sv, sd] = id_pair(r, "PCI_SUBSYS_ID", name);
      fn.subsystem_vendor = sv;
      fn.subsystem_device = sd;
    }
    fn.class_code = hex_field(r, "PCI_CLASS", r.env.at("PCI_CLASS"), name, 0xffffff);
    if (r.env.count("DRIVER")) fn.driver = r.env.at("DRIVER");
    builder.add_function(std::move(fn));
  } else if (auto ctrl = sub->second == "nvme" ? nvme_controller_path(r.devpath) : std::nullopt) {
    auto bdf = Bdf::parse(ctrl->first);
    if (!bdf)
      throw Error(name + ": line " + std::to_string(r.line),
                  "NVMe controller " + ctrl->second + " below '" + ctrl->first + "', which is not a PCI address");
    SynthNvme& n = nvmes[ctrl->second];
    n.name = ctrl->second;
    n.bdf = *bdf;
  } else if (auto ns = sub->second == "block" && r.env.count("DEVTYPE") && r.env.at("DEVTYPE") == "disk"
                           ? nvme_namespace_path(r.devpath)
                           : std::nullopt) {
    SynthNvme& n = nvmes[ns->first];
    n.namespaces.push_back(ns->second);
    auto get = [&](const char* key) { return r.env.count(key) ? r.env.at(key) : std::string(); };
    if (n.model.empty()) n.model = get("ID_MODEL");
    if (n.serial.empty()) n.serial = get("ID_SERIAL_SHORT");
    if (n.firmware.empty()) n.firmware = get("ID_REVISION");
  } else if (sub->second == "dmi" && r.env.count("MODALIAS")) {
    for (const auto& [file, value] : dmi_alias_files(r.env.at("MODALIAS")))
      builder.set_file("/sys/class/dmi/id/" + file, value + "\n");
  } else if (auto alias = sub->second == "cpu" && r.devpath == "/devices/system/cpu/cpu0" && r.env.count("MODALIAS")
                              ? cpu_alias(r.env.at("MODALIAS"))
                              : std::nullopt) {
    // cpu_supports_p2pdma() reads CPU 0, so does the import.
    const char* id = x86_vendor(alias->vendor);
    if (!id) return RecordUse::kOurs;
    bool hypervisor = alias->features.find(",009F") != std::string::npos;  // X86_FEATURE_HYPERVISOR (4*32+31)
    builder.set_file("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: " + std::string(id) +
                                          "\ncpu family\t: " + std::to_string(alias->family) +
                                          "\nmodel\t\t: " + std::to_string(alias->model) + "\nmodel name\t: " + id +
                                          " family 0x" + hex(alias->family) + " model 0x" + hex(alias->model) +
                                          " (from udev)\nflags\t\t:" + (hypervisor ? " hypervisor" : "") + "\n\n");
    return RecordUse::kCpu0;
  } else {
    return RecordUse::kOther;
  }
  return RecordUse::kOurs;
}

}  // namespace

bool add_udev_devices(const std::vector<UdevRecord>& records, const std::string& name, SysfsBuilder& builder) {
  std::map<std::string, SynthNvme> nvmes;
  bool cpu = false;
  for (const UdevRecord& r : records) {
    RecordUse use = RecordUse::kOurs;
    std::optional<SkippedRecord> left_out;
    try {
      use = add_udev_record(r, name, builder, nvmes);
      cpu = use == RecordUse::kCpu0 || cpu;
    } catch (const Error& e) {
      // One device udev described oddly costs that device, not the machine.
      left_out = SkippedRecord{"device records could not be read", "line " + std::to_string(r.line),
                               std::string(e.what()) + "; record left out"};
    }
    if (use == RecordUse::kOther) continue;
    for (const SkippedRecord& line : r.odd_lines) builder.skipped(line);  // in the order of the file
    if (r.odd_more)
      builder.skipped(name + ": the record at line " + std::to_string(r.line) + ": " + std::to_string(r.odd_more) +
                      " more lines that are not 'X: value'; left out");
    if (left_out) builder.skipped(std::move(*left_out));
  }
  for (auto& [ctrl, n] : nvmes)
    if (!n.name.empty()) builder.add_nvme(std::move(n));
  return cpu;
}

MemoryTree import_udev(const std::string& db, const std::string& name, const ImportOptions& options) {
  SysfsBuilder builder("udev", name);
  std::vector<SkippedRecord> skipped;
  std::vector<UdevRecord> records = parse_udev_db(db, name, skipped);
  for (SkippedRecord& line : skipped) builder.skipped(std::move(line));
  bool cpu = add_udev_devices(records, name, builder);
  if (builder.function_count() == 0)
    throw Error(name, "no PCI device record that could be read (it holds " + std::to_string(records.size()) +
                          " records); expected udevadm info --export-db output: ask for `udevadm info --export-db` "
                          "from the machine, or a `p2pcheck capture`" +
                          (builder.first_skipped().empty() ? "" : " (first problem: " + builder.first_skipped() + ")"));
  // --cpu is a supplied fact (model/supplied.h): the check uses it where the input has no CPU.
  if (!cpu) {
    builder.not_carried("/proc/cpuinfo");
    builder.note(options.cpu.empty() ? "CPU unknown: the udev database has no CPU 0 modalias; pass --cpu"
                                     : "CPU not in the udev database: --cpu " + options.cpu + " supplies it");
  }
  for (const char* path : kKernelFiles) builder.not_carried(path);
  for (const char* area : kLiveOnlyAreas) builder.not_carried(area);
  for (const char* area :
       {"/sys/class/dmi", "/proc/sys/kernel/hostname", "/sys/devices/**/numa_node", "/sys/devices/system/node"})
    builder.not_carried(area);
  if (builder.has_file("/sys/class/dmi/id/sys_vendor") || builder.has_file("/sys/class/dmi/id/product_name"))
    builder.note(
        "DMI from the udev database's dmi modalias, where the kernel leaves out spaces and colons "
        "(\"DGXA100\" for \"DGX A100\"); no serial number");
  for (const char* config : kConfigSpaces) builder.not_carried(config);
  builder.note(
      "udev database: no config space, so ACS, port types, link speeds and the host bridge device's port "
      "type are unknown; a pair whose verdict needs them stays unknown (ask for `lspci -xxxx` run as root)");
  builder.note(
      "kernel release, CONFIG_PCI_P2PDMA and command line unknown (not in the udev database): give them with "
      "--kernel-release REL and --kernel-config FILE|p2pdma=y (ask for `uname -r` and the kernel's config)");
  return builder.finish();
}

}  // namespace p2pcheck
