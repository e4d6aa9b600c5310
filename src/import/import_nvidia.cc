// nvidia-bug-report.log(.gz): NVIDIA's support script writes sections, each opened by a line of 44
// underscores and a header line: the command that ran ("/usr/bin/lspci -nnDvvvxxxx"), or "*** FILE"
// for a file it copied (then an "*** ls:" line and the file). Those sections give the PCI functions
// with their config space and the tree (older versions: only NVIDIA and PLX functions dumped, the
// rest listed by `lspci -nn`; nvidia_partial.h), the CPU, the kernel release and command line, the loaded
// modules, DMI, the host name and the NVIDIA driver; the rest of the report is not read.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "import_lspci.h"
#include "nvidia_partial.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/import/sysfs_builder.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

constexpr std::string_view kRule = "____________________________________________";
// A report has a few hundred sections; one with far more was not written by the script.
constexpr std::size_t kMaxSections = 100000;

struct Section {
  std::string_view header;  // the first non-empty line
  std::string_view body;    // what follows it, up to the next rule
  int line = 0;             // the header's line number, for messages
};

std::vector<Section> sections_of(std::string_view text, const std::string& name) {
  std::vector<Section> out;
  int line_no = 0;
  bool want_header = false;
  const char* body_start = nullptr;
  auto close = [&](const char* end) {
    if (!out.empty() && body_start)
      out.back().body = std::string_view(body_start, static_cast<std::size_t>(end - body_start));
    body_start = nullptr;
  };
  for (std::string_view rest = text; !rest.empty();) {
    const char* at = rest.data();
    std::string_view line = next_line(rest);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line == kRule) {
      close(at);
      want_header = true;
      continue;
    }
    if (want_header && !trim(line).empty()) {
      if (out.size() == kMaxSections)
        throw Error(name + ": line " + std::to_string(line_no),
                    "more than " + std::to_string(kMaxSections) + " sections; nvidia-bug-report.sh writes hundreds");
      out.push_back({trim(line), {}, line_no});
      want_header = false;
      body_start = rest.data();
    }
  }
  close(text.data() + text.size());
  return out;
}

bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

// The command a header ran, without the path the script found it at: "lspci -nnDvvvxxxx".
std::string_view command_of(std::string_view header) {
  std::size_t space = header.find(' ');
  std::size_t slash = header.substr(0, space).rfind('/');
  return slash == std::string_view::npos ? header : header.substr(slash + 1);
}

// A copied file's contents: the body after its "*** ls: ..." line (and a blank line before it).
std::string file_body(std::string_view body) {
  std::string_view rest = body;
  std::string_view first = next_line(rest);
  if (trim(first).empty() && rest.substr(0, 8) == "*** ls: ") return file_body(rest);
  return std::string(first.substr(0, 8) == "*** ls: " ? rest : body);
}

// dmidecode's "System Information" block: Manufacturer, Product Name, Serial Number.
std::map<std::string, std::string> dmi_of(std::string_view body) {
  static const std::pair<std::string_view, const char*> kFields[] = {
      {"Manufacturer: ", "sys_vendor"}, {"Product Name: ", "product_name"}, {"Serial Number: ", "product_serial"}};
  std::map<std::string, std::string> files;
  bool in_system = false;
  for (std::string_view rest = body; !rest.empty();) {
    std::string_view line = next_line(rest);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line[0] != '\t' && line[0] != ' ') {
      in_system = line == "System Information";
      continue;
    }
    if (!in_system) continue;
    std::string_view field = trim(line);
    for (auto [key, file] : kFields)
      if (field.substr(0, key.size()) == key && !files.count(file))
        files[file] = std::string(trim(field.substr(key.size())));
  }
  return files;
}

// The sections the import reads, found by their headers; the first of each kind counts.
struct ReportSections {
  const Section *dump = nullptr, *tree = nullptr, *listing = nullptr, *dmi = nullptr;
  std::vector<const Section*> partial;       // older reports: lspci -d "10de:*" -v -xxx, -d "10b5:*" (PLX)
  std::map<std::string, std::string> files;  // "*** /proc/cpuinfo" -> its contents
  std::string uname;
};

ReportSections find_sections(const std::vector<Section>& sections) {
  ReportSections found;
  for (const Section& s : sections) {
    std::string_view command = command_of(s.header);
    if (s.header.substr(0, 4) == "*** ") {
      std::string_view path = s.header.substr(4);
      if (path.find(' ') == std::string_view::npos && !found.files.count(std::string(path)))
        found.files[std::string(path)] = file_body(s.body);
    } else if (command.substr(0, 6) == "lspci ") {
      if (command.find(" -d ") != std::string_view::npos && found.partial.size() < 2)
        found.partial.push_back(&s);
      else if (command == "lspci -nn" && !found.listing)
        found.listing = &s;
      else if (ends_with(command, "xxxx") && !found.dump)
        found.dump = &s;
      else if ((ends_with(command, "-nntv") || ends_with(command, "-tv") || ends_with(command, "-t")) && !found.tree)
        found.tree = &s;
    } else if (ends_with(command, "dmidecode") && !found.dmi) {
      found.dmi = &s;
    } else if (s.body.find("Start of NVIDIA bug report log file") != std::string_view::npos ||
               s.header.find("Start of NVIDIA bug report log file") != std::string_view::npos) {
      for (std::string_view rest = s.body; !rest.empty();) {
        std::string_view line = next_line(rest);
        if (line.substr(0, 7) == "uname: ") found.uname = std::string(trim(line.substr(7)));
      }
    }
  }
  return found;
}

// The kernel release and host name from the uname line, the copied /proc files and DMI's fields.
// Whether the uname line gave a release.
bool add_machine_files(SysfsBuilder& builder, const ReportSections& found) {
  // "Linux HOST RELEASE #BUILD ... GNU/Linux": the release is the third word, the host the second.
  std::string_view u = found.uname;
  std::string_view kernel_name = next_word(u), host = next_word(u), release = next_word(u);
  if (kernel_name == "Linux" && !release.empty())
    builder.set_file("/proc/sys/kernel/osrelease", std::string(release) + "\n");
  if (kernel_name == "Linux" && !host.empty()) builder.set_hostname(std::string(host));
  static const char* const kCopied[] = {"/proc/cpuinfo", "/proc/cmdline", "/proc/version", "/proc/modules",
                                        "/proc/driver/nvidia/version"};
  for (const char* path : kCopied)
    if (auto it = found.files.find(path); it != found.files.end() && !it->second.empty())
      builder.set_file(path, it->second);
  if (found.dmi)
    for (const auto& [file, value] : dmi_of(found.dmi->body))
      if (!value.empty()) builder.set_file("/sys/class/dmi/id/" + file, value + "\n");
  return !release.empty();
}

// What the report does not carry: the storage stack, the IOMMU, the kernel's config, and the
// per-device sysfs files (drivers come from lspci -k's lines, which -vvv prints).
void add_report_limits(SysfsBuilder& builder, const ImportOptions& options, const LspciFunctions& functions,
                       bool has_tree, bool has_release, bool partial, bool bar_sizes) {
  if (!builder.has_file("/proc/cpuinfo")) {
    builder.not_carried("/proc/cpuinfo");
    builder.note(options.cpu.empty() ? "CPU unknown: no /proc/cpuinfo section in this nvidia-bug-report; pass --cpu"
                                     : "CPU not in this nvidia-bug-report: --cpu " + options.cpu + " supplies it");
  }
  for (const char* area : kLiveOnlyAreas)
    if (!builder.has_file(area)) builder.not_carried(area);
  for (const char* area :
       {"/sys/class/dmi", "/sys/class/nvme", "/sys/block", "/sys/class/block", "/proc/sys/kernel/hostname",
        "/sys/devices/**/numa_node", "/sys/devices/system/node", "/sys/devices/**/iommu_group"})
    builder.not_carried(area);
  // An older report's functions without a dump have no config space and no driver line either.
  if (partial)
    for (const char* config : kConfigSpaces) builder.not_carried(config);
  if (!functions.have_drivers || partial)
    for (const char* area : kDriverAreas) builder.not_carried(area);
  builder.note(
      "nvidia-bug-report: " + std::string(has_release ? "" : "no uname line, so the kernel release is unknown; ") +
      "no kernel config (CONFIG_PCI_P2PDMA): give --kernel-config FILE|p2pdma=y (ask for "
      "/boot/config-$(uname -r) or `zcat /proc/config.gz`)");
  builder.note(
      "not in an nvidia-bug-report: NVMe controller names and namespaces, mounts and the storage stack, IOMMU "
      "groups, " +
      std::string(bar_sizes ? "BAR sizes of the functions it does not dump" : "BAR sizes") +
      ", p2pmem; ask for a `p2pcheck capture` for those");
  if (!partial)  // an older report's sections say where its hierarchy came from (nvidia_partial.cc)
    builder.note(has_tree ? "hierarchy from its lspci -t section" +
                                std::string(functions.disagreements
                                                ? " (it disagrees with the bridge bus numbers for " +
                                                      std::to_string(functions.disagreements) + " functions)"
                                                : "")
                          : "hierarchy from bridge bus numbers (no lspci -t section)");
}

// A section as nvidia_partial.h takes it: its body starts on the line after its header.
ReportText report_text(const Section& s) { return {s.body, s.line + 1}; }

PartialLspci partial_sections(const ReportSections& found) {
  PartialLspci out;
  for (const Section* s : found.partial) out.dumps.push_back(report_text(*s));
  if (found.listing) out.listing = report_text(*found.listing);
  if (found.tree) out.tree = report_text(*found.tree);
  return out;
}

// A report without lspci sections describes no PCI device: say what it did show and what to ask for.
[[noreturn]] void refuse_without_lspci(const ReportSections& found, const std::string& name) {
  std::string shown;
  auto show = [&](const std::string& what, std::string_view value) {
    std::string_view v = trim(value.substr(0, value.find('\n')));
    if (!v.empty()) shown += (shown.empty() ? "" : ", ") + what + " " + printable(std::string(v.substr(0, 100)));
  };
  std::string_view u = found.uname;
  next_word(u), next_word(u);
  show("kernel", next_word(u));
  if (auto it = found.files.find("/proc/driver/nvidia/version"); it != found.files.end()) show("driver", it->second);
  if (found.dmi)
    if (auto dmi = dmi_of(found.dmi->body); dmi.count("product_name")) show("DMI product", dmi["product_name"]);
  if (found.tree) shown += std::string(shown.empty() ? "" : ", ") + "an lspci -t tree without device IDs";
  throw Error(name,
              "no lspci section with the PCI devices (nvidia-bug-report.sh found no lspci, or ran without "
              "it); the report shows " +
                  (shown.empty() ? std::string("no kernel, driver or DMI line") : shown) +
                  "; ask for `sudo lspci -xxxx` and `lspci -tv` from the machine, or a `p2pcheck capture`");
}

}  // namespace

MemoryTree import_nvidia_bug_report(const std::string& text, const std::string& name, const ImportOptions& options) {
  std::vector<Section> sections = sections_of(text, name);
  ReportSections found = find_sections(sections);
  if (!found.dump && found.partial.empty() && !found.listing) refuse_without_lspci(found, name);

  SysfsBuilder builder("nvidia-bug-report", name);
  bool has_release = add_machine_files(builder, found);
  if (!found.dump) {  // an older nvidia-bug-report.sh: NVIDIA and PLX functions dumped, the rest listed
    PartialSummary partial = add_partial_lspci(builder, partial_sections(found), name);
    add_report_limits(builder, options, LspciFunctions{}, found.tree != nullptr, has_release, true,
                      partial.with_bar_sizes > 0);
    return builder.finish();
  }
  std::string tree_text = found.tree ? std::string(found.tree->body) : "";
  // Its lines numbered as in the report: the body starts on the line after the header.
  LspciFunctions functions = add_lspci_functions(builder, std::string(found.dump->body),
                                                 found.tree ? &tree_text : nullptr, name, found.dump->line + 1);
  add_report_limits(builder, options, functions, found.tree != nullptr, has_release, false, false);
  note_config_sizes(builder, functions.configs);
  return builder.finish();
}

}  // namespace p2pcheck
