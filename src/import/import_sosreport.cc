// A sosreport (directory or tarball): the udev database for the PCI tree, /proc/bus/pci for the
// config space (sos copies it), and the files sos copies from /proc, /etc, /sys and /boot as they
// are; uname -a and lsmod stand in for /proc/sys/kernel/osrelease and /proc/modules.
#include <array>
#include <cstdio>
#include <functional>

#include "import_udev.h"
#include "lspci_listing.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/source/table_text.h"

namespace p2pcheck {
namespace {

const std::string* file(const MemoryTree& sos, const std::string& path) {
  // sos links "lspci" -> sos_commands/pci/lspci_-nnvv and the like: follow one level of links.
  const MemoryTree::Node* n = sos.find(path);
  if (n && n->kind == EntryKind::kLink) {
    std::string target = n->data;
    if (target.empty() || target.front() != '/') target = path.substr(0, path.rfind('/') + 1) + target;
    n = sos.find(normalize_tree_path(target));
  }
  return n && n->kind == EntryKind::kFile ? &n->data : nullptr;
}

// The sos copies of machine files, under the paths the analysis reads them from.
void copy_tree(const MemoryTree& sos, const std::string& path, SysfsBuilder& builder, MemoryTree& extra,
               int depth = 0) {
  if (depth > 32 || (path.rfind("/proc/", 0) == 0 && is_dec_digits(std::string_view(path).substr(6)))) return;
  for (const std::string& name : sos.children(path)) {
    std::string child = path + "/" + name;
    const MemoryTree::Node* n = sos.find(child);
    if (!n) continue;
    if (n->kind == EntryKind::kDir)
      copy_tree(sos, child, builder, extra, depth + 1);
    else if (n->kind == EntryKind::kFile)
      builder.set_file(child, n->data);
    else if (n->kind == EntryKind::kLink)
      extra.add_link(child, n->data);
  }
}

// An lsmod row, "name size count [users]", as /proc/modules writes it (state and address
// made up); nullopt for the header and anything else.
std::optional<std::string> lsmod_row(std::string_view line) {
  std::array<std::string_view, 5> words;               // a fifth word makes it no lsmod row
  std::size_t count = first_words(trim(line), words);  // trim: a CRLF line's '\r'
  if (count < 3 || count > 4 || !is_dec_digits(words[1]) || !is_dec_digits(words[2])) return std::nullopt;
  std::string row;
  for (std::size_t i = 0; i < 3; ++i) row.append(words[i]).append(" ");
  if (count == 4)
    row.append(words[3]).append(",");
  else
    row.append("-");
  return row + " Live 0x0000000000000000\n";
}

// Config space: sos copies /proc/bus/pci/<bus>/<dev.fn> (domain 0) or <domain:bus>/<dev.fn>.
struct ConfigCopies {
  std::map<std::string, std::string> files;  // sysfs config path -> bytes
  int pci = 0, with_config = 0;
};

ConfigCopies config_copies(const MemoryTree& sos, const std::vector<UdevRecord>& records, const std::string& name,
                           SysfsBuilder& builder) {
  ConfigCopies out;
  for (const UdevRecord& r : records) {
    if (!r.env.count("SUBSYSTEM") || r.env.at("SUBSYSTEM") != "pci") continue;
    ++out.pci;
    auto bdf = Bdf::parse(r.env.count("PCI_SLOT_NAME") ? r.env.at("PCI_SLOT_NAME") : basename(r.devpath));
    if (!bdf) continue;
    char bus_dir[32], fn_file[16];
    if (bdf->domain == 0)
      std::snprintf(bus_dir, sizeof bus_dir, "%02x", bdf->bus);
    else
      std::snprintf(bus_dir, sizeof bus_dir, "%04x:%02x", bdf->domain, bdf->bus);
    std::snprintf(fn_file, sizeof fn_file, "%02x.%x", bdf->dev, bdf->fn);
    if (const std::string* c = file(sos, "/proc/bus/pci/" + std::string(bus_dir) + "/" + fn_file)) {
      // A copy of another length was cut or is not config space: the function stays, unread.
      if (c->size() != 64 && c->size() != 256 && c->size() != 4096) {
        std::string copy = "proc/bus/pci/" + std::string(bus_dir) + "/" + fn_file;
        builder.skipped("copies of config space in proc/bus/pci are of a length the kernel never gives", copy,
                        name + ":" + copy + ": " + std::to_string(c->size()) +
                            " bytes; expected 4096, 256 or 64 bytes of config space; this copy left out");
        continue;
      }
      out.files["/sys" + r.devpath + "/config"] = *c;
      ++out.with_config;
    }
  }
  return out;
}

// The kernel release and modules from the commands sos ran, where it did not copy the /proc files.
void add_kernel_commands(const MemoryTree& sos, const std::string& name, SysfsBuilder& builder) {
  // uname -a: "Linux host 6.8.0-45-generic #45-Ubuntu SMP ..." -> the release is the third word.
  if (!file(sos, "/proc/sys/kernel/osrelease")) {
    const std::string* uname = file(sos, "/sos_commands/kernel/uname_-a");
    std::array<std::string_view, 3> words;
    if (uname && first_words(*uname, words) == 3 && words[0] == "Linux")
      builder.set_file("/proc/sys/kernel/osrelease", std::string(words[2]) + "\n");
    else
      builder.unknown("/proc/sys/kernel/osrelease", "no uname -a in the sosreport");
  }
  // lsmod: "Module Size Used by" then "name size count users"; /proc/modules adds state and address.
  if (!file(sos, "/proc/modules")) {
    const std::string* lsmod = file(sos, "/sos_commands/kernel/lsmod");
    std::string modules;
    if (lsmod)
      for (std::string_view line : split_table_lines(*lsmod, name + ":sos_commands/kernel/lsmod"))
        if (auto row = lsmod_row(line)) modules += *row;
    if (!modules.empty())
      builder.set_file("/proc/modules", modules);
    else
      builder.unknown("/proc/modules", "no usable lsmod output in the sosreport");
  }
}

// What a sosreport never carries, and what this one lacks: said, so absence is not read as "none".
void add_sos_notes(const MemoryTree& sos, const ConfigCopies& configs, SysfsBuilder& builder) {
  // sos copies parts of /proc, /sys and /etc, but never the installed libraries, /proc/kallsyms
  // or the KFD topology: absent there says nothing about the machine.
  for (const char* area : {"/opt", "/usr/lib", "/usr/lib64", "/proc/kallsyms", "/sys/class/kfd", "/run/p2pcheck",
                           "/sys/devices/**/numa_node"})  // nor a PCI function's directory
    builder.not_carried(area);
  // What sos copies only when a plugin ran (filesys, hardware) and this one lacks: unknown, not empty.
  for (const char* area : {"/proc/mounts", "/sys/class/iommu", "/sys/kernel/iommu_groups", "/sys/class/dmi"})
    if (!sos.find(area)) builder.not_carried(area);
  if (configs.with_config < configs.pci)
    builder.note(std::to_string(configs.pci - configs.with_config) + " of " + std::to_string(configs.pci) +
                 " PCI functions have no copy in proc/bus/pci: their ACS, port types and links are unknown");
  bool config = file(sos, "/proc/config.gz") != nullptr;
  for (const std::string& n : sos.children("/boot")) config = config || n.rfind("config-", 0) == 0;
  if (!config)
    builder.note(
        "kernel configuration (CONFIG_PCI_P2PDMA) unknown: the sosreport has no /boot/config-* or /proc/config.gz");
}

// The links sos copied (sys/block/vda -> ../devices/...) keep their place beside the synthesised files.
void restore_links(const MemoryTree& links, const std::string& path, MemoryTree& tree) {
  for (const std::string& n : links.children(path)) {
    std::string child = (path == "/" ? "" : path) + "/" + n;
    const MemoryTree::Node* node = links.find(child);
    if (node->kind == EntryKind::kLink && !tree.find(child))
      tree.add_link(child, node->data);
    else if (node->kind == EntryKind::kDir)
      restore_links(links, child, tree);  // no deeper than copy_tree() went (32)
  }
}

// What a sosreport holds of what the import reads, for a refusal: "kernel 6.8.0-45-generic (uname -a),
// CPU GenuineIntel ... (proc/cpuinfo), lspci -nnvv of 12 PCI functions, 12 files in proc/bus/pci".
std::string sos_shown(const MemoryTree& sos) {
  std::vector<std::string> shown;
  std::array<std::string_view, 3> words;
  if (const std::string* uname = file(sos, "/sos_commands/kernel/uname_-a");
      uname && first_words(*uname, words) == 3 && words[0] == "Linux")
    shown.push_back("kernel " + printable(std::string(words[2]).substr(0, 80)) + " (uname -a)");
  if (const std::string* cpuinfo = file(sos, "/proc/cpuinfo"))
    shown.push_back(cpuinfo_shown(*cpuinfo) + " (proc/cpuinfo)");
  if (const std::string* lspci = file(sos, "/sos_commands/pci/lspci_-nnvv")) {
    shown.push_back("lspci -nnvv of " + std::to_string(lspci_listed_count(*lspci)) +
                    " PCI functions (sos_commands/pci)");
  }
  std::size_t copies = 0;
  for (const std::string& bus : sos.children("/proc/bus/pci")) copies += sos.children("/proc/bus/pci/" + bus).size();
  if (copies) shown.push_back(std::to_string(copies) + " files in proc/bus/pci");
  return shown.empty() ? "none of the kernel, CPU or PCI outputs p2pcheck reads" : join(shown, ", ");
}

}  // namespace

MemoryTree import_sosreport(const MemoryTree& sos, const std::string& name, const ImportOptions& options) {
  const std::string* db = file(sos, "/sos_commands/devices/udevadm_info_--export-db");
  if (!db)
    throw Error(name,
                "sosreport without sos_commands/devices/udevadm_info_--export-db (its devices plugin did not run): "
                "the PCI hierarchy is not in it; it shows " +
                    sos_shown(sos) +
                    "; ask for `sos report -o devices,pci,kernel,processor,block` (or `udevadm info --export-db` "
                    "from the machine)");
  SysfsBuilder builder("sosreport", name);
  MemoryTree links;
  for (const char* top : {"/proc", "/etc", "/sys", "/boot", "/usr/lib"}) copy_tree(sos, top, builder, links);
  std::vector<SkippedRecord> skipped;
  std::vector<UdevRecord> records =
      parse_udev_db(*db, name + ":sos_commands/devices/udevadm_info_--export-db", skipped);
  for (SkippedRecord& line : skipped) builder.skipped(std::move(line));

  ConfigCopies configs = config_copies(sos, records, name, builder);
  bool cpu_from_udev = add_udev_devices(records, name, builder);
  if (builder.function_count() == 0)
    throw Error(name, "its sos_commands/devices/udevadm_info_--export-db holds " + std::to_string(records.size()) +
                          " records and no PCI device that could be read" +
                          (builder.first_skipped().empty() ? "" : " (first problem: " + builder.first_skipped() + ")") +
                          "; it shows " + sos_shown(sos) +
                          "; ask for `sos report -o devices,pci,kernel,processor,block` run as root (or "
                          "`udevadm info --export-db` from the machine)");
  for (auto& [path, bytes] : configs.files) builder.set_file(path, bytes);

  bool has_cpuinfo = file(sos, "/proc/cpuinfo") != nullptr;
  if (has_cpuinfo) builder.set_file("/proc/cpuinfo", *file(sos, "/proc/cpuinfo"));
  // --cpu is a supplied fact (model/supplied.h): the check uses it where the input has no CPU.
  if (!has_cpuinfo && !cpu_from_udev && !options.cpu.empty())
    builder.note("CPU not in the sosreport: --cpu " + options.cpu + " supplies it");
  add_kernel_commands(sos, name, builder);
  std::string host;
  for (const char* path : {"/hostname", "/sos_commands/host/hostname"})
    if (const std::string* h = file(sos, path); h && host.empty()) host = std::string(trim(*h));
  builder.set_hostname(host);
  add_sos_notes(sos, configs, builder);
  MemoryTree tree = builder.finish();
  restore_links(links, "/", tree);
  return tree;
}

}  // namespace p2pcheck
