// `lspci -x`/`-xxx`/`-xxxx` output: config space through libpci's dump access method, the
// hierarchy from bridge bus numbers (or from `lspci -tv` when it came along).
extern "C" {
#include <pci/pci.h>
}
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "import_lspci.h"
#include "lspci_tree.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/import/sysfs_builder.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// libpci's dump method reads a file by name: the filtered text goes into a private directory
// (mode 0700) that is removed again whatever happens.
class PrivateFile {
 public:
  explicit PrivateFile(const std::string& bytes) {
    const char* tmp = getenv("TMPDIR");
    dir_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/p2pcheck-import-XXXXXX";
    if (!mkdtemp(dir_.data())) throw Error(dir_, "cannot create a private temporary directory");
    path_ = dir_ + "/lspci.txt";
    int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    if (fd >= 0) close(fd);
    if (!ok) {
      unlink(path_.c_str());
      rmdir(dir_.c_str());
      throw Error(path_, "cannot write the private temporary copy");
    }
  }
  ~PrivateFile() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

struct Access {
  pci_access* a = pci_alloc();
  ~Access() { pci_cleanup(a); }
};

}  // namespace

namespace {

// What libpci's dump reader is given, and what only we read: the driver names of lspci -k; and
// the devices left out, each with why ("FILE: line N: ...").
struct FilteredDump {
  std::string text;
  std::map<Bdf, std::string> drivers;
  std::vector<SkippedRecord> skipped;
};

// The pieces of an lspci -x dump, each recognised by plain string tests (no std::regex on customer
// text: libstdc++'s recurses per character and a 200 KB line overflowed the stack).

// "[dddd:]bb:dd.f <anything>": the address, or nullopt.
std::optional<std::string_view> device_line(std::string_view line) {
  size_t space = line.find(' ');
  if (space == std::string_view::npos || !Bdf::shaped(line.substr(0, space), 4, 5)) return std::nullopt;
  return line.substr(0, space);
}

// "OFFSET:" with a 2-4 digit hex offset: the offset text, or nullopt.
std::optional<std::string_view> hex_offset(std::string_view line) {
  size_t colon = line.find(':');
  if (colon < 2 || colon > 4 || !is_hex_digits(line.substr(0, colon))) return std::nullopt;
  return line.substr(0, colon);
}

// "OFFSET: xx xx ...": one to 16 bytes, as lspci -x prints them.
bool hex_line(std::string_view line, std::string_view offset) {
  std::string_view bytes = line.substr(offset.size() + 1);
  if (bytes.empty() || bytes.size() % 3 != 0 || bytes.size() > 16 * 3) return false;
  for (size_t i = 0; i < bytes.size(); i += 3)
    if (bytes[i] != ' ' || !is_hex_digits(bytes.substr(i + 1, 2))) return false;
  return true;
}

// "<ws>Kernel driver in use: NAME<ws>": NAME, or nullopt.
std::optional<std::string> driver_line(std::string_view line) {
  static constexpr std::string_view kDriver = "Kernel driver in use: ";
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
  size_t i = 0;
  while (i < line.size() && space(line[i])) ++i;
  if (i == 0 || line.substr(i, kDriver.size()) != kDriver) return std::nullopt;
  std::string_view rest = line.substr(i + kDriver.size());
  size_t end = 0;
  while (end < rest.size() && !space(rest[end])) ++end;
  for (char c : rest.substr(end))
    if (!space(c)) return std::nullopt;
  if (end == 0) return std::nullopt;
  return std::string(rest.substr(0, end));
}

// A PCI domain holds 65,536 functions and the largest fabrics a few thousand; libpci holds each
// device line's function with its config space (~1 KB), so a dump past this is refused.
constexpr std::size_t kMaxLspciFunctions = 65536;

// The dump as libpci's dump reader is to see it, with lspci -k's drivers and the devices left out.
// Long: one pass over the lines, a small state machine (the device being read, its pending lines,
// whether it went bad) that every kind of line moves; split, each piece would take all that state.
FilteredDump filter_dump(const std::string& dump, const std::string& name, int first_line) {
  // Only device lines and hex lines go to libpci (its line buffer is 256 bytes; -vv lines are
  // longer); "Kernel driver in use" lines from -k are ours. A device's lines are held until the
  // next device: one without a hex dump, or with a malformed line, is left out, not the machine.
  FilteredDump out;
  std::optional<Bdf> current;
  std::string pending;  // the current device's lines for libpci
  std::size_t devices = 0, rows = 0;
  int line_no = first_line - 1, device_line_no = 0;
  bool bad = false;
  auto where = [&] { return name + ": line " + std::to_string(line_no); };
  // At most one per device line, and those are limited.
  auto skip = [&](const char* kind, std::string subject, const std::string& why) {
    out.skipped.push_back({kind, std::move(subject), why + "; device left out"});
  };
  auto finish_device = [&] {
    if (current && !bad && rows == 0)
      skip("devices have no config space dump (lspci without -x for them)", current->str(),
           name + ": line " + std::to_string(device_line_no) + ": " + current->str() +
               " has no config space dump (lspci without -x for it)");
    if (current && !bad && rows > 0) out.text += pending;
    pending.clear();
    current.reset();
    bad = false;
  };
  for (std::string_view rest = dump; !rest.empty();) {
    std::string_view line = next_line(rest);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (auto address = device_line(line)) {
      finish_device();
      // libpci keeps a device and its config space per device line.
      if (++devices > kMaxLspciFunctions)
        throw Error(where(),
                    "more than " + std::to_string(kMaxLspciFunctions) + " PCI functions; no machine has that many");
      current = Bdf::parse(*address);
      device_line_no = line_no;
      rows = 0;
      if (!current) {
        skip("device lines hold no PCI address", "line " + std::to_string(line_no),
             where() + ": '" + std::string(*address) + "' is not a PCI address");
        out.text += "\n";
        continue;
      }
      pending.append(*address).append(" x\n");
      continue;
    }
    auto offset = current ? hex_offset(line) : std::nullopt;
    if (offset && hex_line(line, *offset)) {
      if (parse_hex(*offset).value_or(4096) >= 4096) throw Error(where(), "config space offset beyond 4096 bytes");
      if (++rows > 4096 / 16)
        throw Error(where(), "more than 256 config space lines for " + current->str() + "; lspci -xxxx prints 256");
      pending.append(line).append("\n");
    } else if (offset && (line.size() == offset->size() + 1 || line[offset->size() + 1] == ' ')) {
      if (!bad)
        skip("devices have a malformed hex line", current->str(),
             where() + ": malformed hex line '" + std::string(line.substr(0, 60)) + "' for " + current->str() +
                 " (expected 'OFFSET: xx xx ...' as lspci -x prints it)");
      bad = true;
    } else if (auto driver = current ? driver_line(line) : std::nullopt) {
      out.drivers[*current] = *driver;
    } else if (line.empty()) {
      pending += "\n";
    }
  }
  finish_device();
  return out;
}

// Each function's config space as libpci's dump access method reads it.
std::map<Bdf, std::string> read_configs(const std::string& filtered, const std::string& name,
                                        std::vector<SkippedRecord>& skipped, bool may_be_empty) {
  PrivateFile copy(filtered);
  Access access;
  pci_access* a = access.a;
  set_libpci_hooks(a);
  a->method = PCI_ACCESS_DUMP;
  pci_set_param(a, const_cast<char*>("dump.name"), const_cast<char*>(copy.path().c_str()));
  try {
    pci_init(a);
    pci_scan_bus(a);
  } catch (const Error& e) {
    throw Error(name, std::string("lspci dump not readable: ") + e.what());
  }

  std::map<Bdf, std::string> configs;
  for (pci_dev* d = a->devices; d; d = d->next) {
    Bdf bdf{static_cast<std::uint32_t>(d->domain), d->bus, d->dev, d->func};
    std::string config;
    for (int size : {4096, 256, 64}) {
      std::vector<u8> buf(static_cast<size_t>(size));
      if (pci_read_block(d, 0, buf.data(), size)) {
        config.assign(buf.begin(), buf.end());
        break;
      }
    }
    if (config.empty()) {
      skipped.push_back({"devices have a config space dump of a length lspci never prints", bdf.str(),
                         name + ": " + bdf.str() +
                             ": config space dump is not 64, 256 or 4096 bytes long (a cut-off lspci -x dump?); "
                             "device left out"});
      continue;
    }
    configs[bdf] = config;
  }
  if (configs.empty() && !may_be_empty)
    throw Error(name, "no PCI function with a config-space dump (it lists " + std::to_string(skipped.size()) +
                          " devices, none readable); expected lspci -xxxx output: ask for `sudo lspci -xxxx`" +
                          (skipped.empty() ? "" : " (first problem: " + skipped.front().text + ")"));
  return configs;
}

// What an lspci -x dump cannot tell, beside what all lspci output cannot (note_lspci_limits).
void add_machine_notes(SysfsBuilder& builder, const std::map<Bdf, std::string>& configs, bool have_drivers,
                       const std::string* tree_text, int disagreements, const std::string& cpuinfo,
                       const ImportOptions& options) {
  note_lspci_limits(builder, cpuinfo, options, "dump", tree_text != nullptr, disagreements);
  for (const char* area : {"/sys/devices/**/numa_node", "/sys/devices/**/iommu_group"}) builder.not_carried(area);
  if (!have_drivers)
    for (const char* area : kDriverAreas) builder.not_carried(area);
  builder.note(
      "not in lspci output: NVMe controller names and namespaces, BAR sizes, NUMA nodes, IOMMU groups, p2pmem" +
      std::string(!have_drivers ? ", drivers (lspci -k shows them)" : ""));
  note_config_sizes(builder, configs);
}

std::uint8_t config_byte(const std::string& c, size_t at) { return static_cast<std::uint8_t>(c[at]); }

}  // namespace

void take_config_identity(const std::string& c, SynthFunction& fn) {
  auto word = [&](size_t at) { return static_cast<std::uint16_t>(config_byte(c, at) | config_byte(c, at + 1) << 8); };
  fn.vendor = word(0);
  fn.device = word(2);
  fn.revision = config_byte(c, 8);
  fn.class_code =
      static_cast<std::uint32_t>(config_byte(c, 0x0b)) << 16 | config_byte(c, 0x0a) << 8 | config_byte(c, 0x09);
  if ((config_byte(c, 0x0e) & 0x7f) == 0) {
    fn.subsystem_vendor = word(0x2c);
    fn.subsystem_device = word(0x2e);
  }
  fn.config = c;
}

int add_config_functions(SysfsBuilder& builder, const std::map<Bdf, std::string>& configs,
                         std::map<Bdf, SynthFunction> seeds, const std::string* tree_text, const std::string& name,
                         bool devices_left_out) {
  // Bridges by their bus range: a function's upstream bridge is the one whose secondary..subordinate
  // range holds its bus most narrowly (exactly its secondary bus, except for VFs placed beyond it).
  struct Range {
    Bdf bridge;
    std::uint8_t sec, sub;
  };
  std::vector<Range> ranges;
  for (const auto& [bdf, c] : configs) {
    std::uint8_t type = config_byte(c, 0x0e) & 0x7f;
    if ((type == 1 || type == 2) && config_byte(c, 0x19) != 0)
      ranges.push_back({bdf, config_byte(c, 0x19), config_byte(c, 0x1a)});
  }
  std::map<Bdf, std::optional<Bdf>> tree_parents;
  if (tree_text) tree_parents = parse_lspci_tree(*tree_text, name + " (lspci -t)");
  int disagreements = 0;
  std::set<Bdf> left_out;
  for (const auto& [bdf, c] : configs) {
    SynthFunction fn;
    if (auto seed = seeds.find(bdf); seed != seeds.end()) fn = std::move(seed->second);
    fn.bdf = bdf;
    take_config_identity(c, fn);
    const Range* best = nullptr;
    for (const auto& r : ranges)
      if (r.bridge.domain == bdf.domain && r.bridge != bdf && r.sec <= bdf.bus && bdf.bus <= r.sub &&
          (!best || r.sec > best->sec))
        best = &r;
    if (best) fn.parent = best->bridge;
    // Where a device was left out, a function placed by a wider range than its own bus (or below
    // a bridge lspci -t names but the dump lacks) has lost a bridge on its path, and with it that
    // bridge's ACS: leave it out too rather than judge a path that is not the kernel's.
    std::optional<std::string> lost_bridge;
    if (devices_left_out && best && best->sec != bdf.bus)
      lost_bridge = "no bridge in the dump has bus " + hex(bdf.bus, 2) + " as its secondary bus";
    if (auto it = tree_parents.find(bdf); it != tree_parents.end()) {
      if (it->second != fn.parent) ++disagreements;
      if (!it->second || configs.count(*it->second)) {
        fn.parent = it->second;  // the kernel's own tree wins
        lost_bridge.reset();
      } else if (devices_left_out) {
        lost_bridge = "lspci -t puts it below " + it->second->str() + ", which was left out";
      }
    }
    if (!lost_bridge && fn.parent && left_out.count(*fn.parent))
      lost_bridge = "it is below " + fn.parent->str() + ", which was left out";
    if (lost_bridge) {
      left_out.insert(bdf);  // parents come first (a bridge's bus is below its children's)
      builder.skipped(
          "devices are below a bridge that is not in the dump", bdf.str(),
          name + ": " + bdf.str() + ": its upstream bridge is not in the dump (" + *lost_bridge + "); device left out");
      continue;
    }
    builder.add_function(std::move(fn));
  }
  return disagreements;
}

void note_lspci_limits(SysfsBuilder& builder, const std::string& cpuinfo, const ImportOptions& options,
                       const char* input, bool tree, int disagreements) {
  // --cpu is a supplied fact (model/supplied.h): the check uses it where the input has no CPU.
  if (!cpuinfo.empty()) {
    builder.set_file("/proc/cpuinfo", cpuinfo);
  } else {
    builder.not_carried("/proc/cpuinfo");
    builder.note(options.cpu.empty()
                     ? std::string("CPU unknown (lspci output does not carry it): pass --cpu ") + kCpuOptionValues +
                           ", or put /proc/cpuinfo beside the " + input + " in a directory"
                     : "CPU not in lspci output: --cpu " + options.cpu + " supplies it");
  }
  for (const char* path : kKernelFiles) builder.not_carried(path);
  for (const char* area : kLiveOnlyAreas) builder.not_carried(area);
  for (const char* area : {"/sys/class/dmi", "/sys/class/nvme", "/sys/block", "/sys/class/block",
                           "/proc/sys/kernel/hostname", "/sys/devices/system/node"})
    builder.not_carried(area);
  builder.note(
      "kernel release, CONFIG_PCI_P2PDMA and command line unknown (not in lspci output): give them with "
      "--kernel-release REL and --kernel-config FILE|p2pdma=y (ask for `uname -r` and the kernel's config)");
  builder.note(tree ? "hierarchy from lspci -t" + std::string(disagreements
                                                                  ? " (it disagrees with the bridge bus numbers for " +
                                                                        std::to_string(disagreements) + " functions)"
                                                                  : "")
                    : "hierarchy from bridge bus numbers; each root bus is its own host bridge, as Linux creates them "
                      "(lspci output does not say which root buses share a host bridge)");
}

void note_config_sizes(SysfsBuilder& builder, const std::map<Bdf, std::string>& configs) {
  // In an -xxxx dump conventional PCI functions have 256 bytes: that is all they have. Only a dump
  // without any 4096-byte function, or with 64-byte ones, lacks what the kernel would show root.
  size_t largest = 0, header_only = 0;
  for (const auto& [bdf, c] : configs) {
    largest = std::max(largest, c.size());
    if (c.size() == 64) ++header_only;
  }
  if (largest < 4096 || header_only)
    builder.note("the dump holds " + std::string(header_only ? "only the 64-byte header" : "no extended config space") +
                 " for some functions (lspci -x/-xxx, or run without root): their ACS is unknown; ask for `lspci "
                 "-xxxx` run as root");
}

LspciDump read_lspci_dump(const std::string& dump, const std::string& name, int first_line, bool may_be_empty) {
  FilteredDump filtered = filter_dump(dump, name, first_line);
  LspciDump out;
  // An empty section (lspci -d for a vendor the machine lacks) has nothing for libpci to read.
  if (!may_be_empty || filtered.text.find_first_not_of('\n') != std::string::npos)
    out.configs = read_configs(filtered.text, name, filtered.skipped, may_be_empty);
  out.drivers = std::move(filtered.drivers);
  out.skipped = std::move(filtered.skipped);
  return out;
}

LspciFunctions add_lspci_functions(SysfsBuilder& builder, const std::string& dump, const std::string* tree_text,
                                   const std::string& name, int first_line) {
  LspciDump read = read_lspci_dump(dump, name, first_line, false);
  LspciFunctions out;
  out.configs = std::move(read.configs);
  const bool left_out = !read.skipped.empty();
  for (SkippedRecord& r : read.skipped) builder.skipped(std::move(r));
  out.have_drivers = !read.drivers.empty();
  std::map<Bdf, SynthFunction> seeds;
  for (auto& [bdf, driver] : read.drivers) seeds[bdf].driver = std::move(driver);
  out.disagreements = add_config_functions(builder, out.configs, std::move(seeds), tree_text, name, left_out);
  return out;
}

MemoryTree import_lspci(const std::string& dump, const std::string* tree_text, const std::string& cpuinfo,
                        const std::string& name, const ImportOptions& options) {
  SysfsBuilder builder("lspci", name);
  LspciFunctions functions = add_lspci_functions(builder, dump, tree_text, name);
  add_machine_notes(builder, functions.configs, functions.have_drivers, tree_text, functions.disagreements, cpuinfo,
                    options);
  return builder.finish();
}

}  // namespace p2pcheck
