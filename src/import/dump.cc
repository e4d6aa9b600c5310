// --dump FILE: recognise what the customer sent by its content and open the matching source.
#include "p2pcheck/import/dump.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <sys/stat.h>

#include "lspci_listing.h"
#include "lspci_tree.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/import/input_kind.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/rules/cpu.h"
#include "p2pcheck/source/archive.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/host_files.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

std::string read_host_file(const std::string& file) {
  return read_input_file(file, kMaxFileBytes, "dump", "no dump format p2pcheck reads is that large");
}

const char* kExpected =
    "expected a capture (tar archive of a Linux root, or a directory), lspci -xxxx or lspci -nnvvv output, "
    "udevadm info --export-db output, hwloc XML (lstopo --of xml), a sosreport or an nvidia-bug-report.log";

// The parts of a sosreport the import uses: its copies of /proc (not the per-process
// directories), /etc, /sys and /boot, os-release, the hostname, and the outputs of the commands
// that describe devices, kernel and CPU.
bool sos_wanted(const std::string& rel) {
  std::vector<std::string> parts = split(rel, '/');
  if (parts.empty()) return false;
  const std::string& top = parts[0];
  if (top == "etc" || top == "sys" || top == "boot") return true;
  if (top == "proc") return parts.size() == 1 || !is_dec_digits(parts[1]);
  if (top == "usr")
    return parts.size() == 1 ||
           (parts[1] == "lib" && (parts.size() == 2 || (parts.size() == 3 && parts[2] == "os-release")));
  if (top == "hostname") return parts.size() == 1;
  if (top != "sos_commands") return false;
  static const char* const kPlugins[] = {"devices", "pci",   "kernel", "processor", "host",
                                         "release", "block", "nvme",   "filesys"};
  if (parts.size() == 1) return true;
  for (const char* plugin : kPlugins)
    if (parts[1] == plugin) return true;
  return false;
}

std::unique_ptr<Source> import_source(MemoryTree tree, const std::string& description) {
  return open_memory_source(std::move(tree), description);
}

// An lspci -t drawing shows the tree, not what decides a path: say how much it shows and what goes with it.
[[noreturn]] void throw_tree_alone(const std::string& text, const std::string& file) {
  std::string shown;
  try {
    shown = "it draws " + std::to_string(parse_lspci_tree(text, file).size()) + " PCI functions, ";
  } catch (const Error&) {  // the refusal stands; only its count is lost
  }
  throw Error(file, "lspci -t output alone has no config space (" + shown +
                        "without IDs, ACS or links): ask for `sudo lspci -xxxx` from the same machine and put both "
                        "in a directory");
}

std::unique_ptr<Source> open_text(const std::string& text, const std::string& file, const ImportOptions& options) {
  switch (sniff_text(text)) {
    case TextFormat::kLspciDump:
      return import_source(import_lspci(text, nullptr, "", file, options), "lspci dump " + file);
    case TextFormat::kUdevDb: return import_source(import_udev(text, file, options), "udev database " + file);
    case TextFormat::kHwlocXml: return import_source(import_hwloc(text, file, options), "hwloc XML " + file);
    case TextFormat::kNvidiaBugReport:
      return import_source(import_nvidia_bug_report(text, file, options), "nvidia-bug-report " + file);
    case TextFormat::kLspciText:
      return import_source(import_lspci_text(text, nullptr, "", file, options), "lspci -vvv text " + file);
    case TextFormat::kLspciNoHex: {
      throw Error(file, "lspci output without a config-space hex dump or -v details (" +
                            std::to_string(lspci_listed_count(text)) +
                            " functions listed, by name only): ask for `sudo lspci -nnDvvvk` (or `sudo lspci -xxxx`), "
                            "optionally with `lspci -tv` beside it in a directory");
    }
    case TextFormat::kLspciTree: throw_tree_alone(text, file);
    case TextFormat::kCpuinfo:
      throw Error(file, "/proc/cpuinfo alone describes no PCI devices (it shows " + cpuinfo_shown(text) +
                            "): ask for `sudo lspci -xxxx` and `lspci -tv` from the same machine and put them in a "
                            "directory beside it, or pass it with --cpu to an lspci dump (or ask for a `p2pcheck "
                            "capture`)");
    case TextFormat::kUnknown: break;
  }
  // A zero-byte file is what a failed copy or a full disk leaves: say so, it is not a format.
  if (text.empty()) throw Error(file, std::string("an empty file (0 bytes: a failed upload or copy?); ") + kExpected);
  // A plan describes a server not built yet: it has its own option, and says so.
  if (identify_head(std::string_view(text).substr(0, kInputHeadBytes)) == InputKind::kPlan)
    throw Error(file, "a plan of a server not built yet (docs/plan.md), not a machine's dump: `p2pcheck --plan " +
                          file + " check` judges it");
  throw Error(file, std::string("not a recognised dump: ") + kExpected);
}

// A directory holding one machine's inputs each (captures, sosreports, one dump per host) is a
// fleet: say where it goes instead of "not a recognised dump". `names`: what looked like machines.
[[noreturn]] void throw_fleet_directory(const std::string& dir, const std::vector<std::string>& names) {
  std::string listed;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) listed += (i ? ", " : "") + names[i];
  if (names.size() > 3) listed += ", ...";
  throw Error(dir, "holds " + std::to_string(names.size()) + " machines' inputs (" + listed +
                       "), not one machine's dump: `p2pcheck fleet " + dir + "` reads every one, `--dump " + dir + "/" +
                       names.front() + "` one of them");
}

// Compressed or a tar header (identify_head): libarchive reads it; anything else is text.
bool looks_like_archive(std::string_view bytes) {
  return identify_head(bytes.substr(0, kInputHeadBytes)) == InputKind::kArchive;
}

// A directory of loose files: one device description plus what completes it.
std::unique_ptr<Source> open_bundle(const std::string& dir, const ImportOptions& options) {
  MemoryTree files;
  load_host_tree(
      dir, files, [](const std::string& rel) { return rel.find('/', 1) == std::string::npos; }, 0);
  std::map<TextFormat, std::pair<std::string, std::string>> found;  // format -> (name, text)
  std::vector<std::string> archives, primaries_seen;
  for (const auto& name : files.children("/")) {
    const MemoryTree::Node* node = files.find("/" + name);
    if (!node || node->kind != EntryKind::kFile) continue;
    if (looks_like_archive(node->data)) archives.push_back(printable(name));
    TextFormat f = sniff_text(node->data);
    if (f == TextFormat::kUnknown) continue;
    const bool primary = f == TextFormat::kLspciDump || f == TextFormat::kLspciText || f == TextFormat::kUdevDb ||
                         f == TextFormat::kHwlocXml || f == TextFormat::kNvidiaBugReport;
    if (primary) primaries_seen.push_back(printable(name));
    if (primary && found.count(f)) throw_fleet_directory(dir, primaries_seen);
    if (found.count(f))
      throw Error(dir,
                  "two " + std::string(to_string(f)) + " files (" + found[f].first + ", " + name + "); expected one");
    found[f] = {name, node->data};
  }
  if (found.empty() && !archives.empty()) throw_fleet_directory(dir, archives);
  std::string cpuinfo = found.count(TextFormat::kCpuinfo) ? found[TextFormat::kCpuinfo].second : "";
  int primaries = static_cast<int>(found.count(TextFormat::kLspciDump) + found.count(TextFormat::kLspciText) +
                                   found.count(TextFormat::kUdevDb) + found.count(TextFormat::kHwlocXml));
  if (primaries != 1)
    throw Error(dir,
                primaries == 0
                    ? std::string("not a recognised dump directory: no sys/, no sos_commands/, and no file in it is a "
                                  "dump this p2pcheck reads; ") +
                          kExpected
                    : "holds more than one device description (lspci dump or -vvv text, udev database, hwloc XML); "
                      "give one");
  if (auto it = found.find(TextFormat::kLspciDump); it != found.end()) {
    const std::string* tree = found.count(TextFormat::kLspciTree) ? &found[TextFormat::kLspciTree].second : nullptr;
    return import_source(import_lspci(it->second.second, tree, cpuinfo, dir + "/" + it->second.first, options),
                         "lspci dump " + dir);
  }
  if (auto it = found.find(TextFormat::kLspciText); it != found.end()) {
    const std::string* tree = found.count(TextFormat::kLspciTree) ? &found[TextFormat::kLspciTree].second : nullptr;
    return import_source(import_lspci_text(it->second.second, tree, cpuinfo, dir + "/" + it->second.first, options),
                         "lspci -vvv text " + dir);
  }
  if (!cpuinfo.empty())
    throw Error(dir, "a cpuinfo file goes with lspci dumps; udev databases and hwloc XML carry the CPU");
  if (auto it = found.find(TextFormat::kUdevDb); it != found.end())
    return import_source(import_udev(it->second.second, dir + "/" + it->second.first, options), "udev database " + dir);
  auto& [name, text] = found[TextFormat::kHwlocXml];
  return import_source(import_hwloc(text, dir + "/" + name, options), "hwloc XML " + dir);
}

// A tree (archive or directory) is a captured root, or a sosreport, at its top or in one folder.
std::optional<std::string> top_with(const MemoryTree& tree, const std::string& child) {
  if (tree.find("/" + child)) return "";
  auto top = tree.children("/");
  if (top.size() == 1 && tree.find("/" + top[0] + "/" + child)) return "/" + top[0];
  return std::nullopt;
}

// What opening a dump learnt of its manifest: `known` once it was parsed (`info` is then what
// read_capture_info would answer), so nobody parses it again.
struct Manifest {
  bool known = false;
  std::optional<CaptureInfo> info;
};

// An archive is a captured root or a sosreport (at its top or in one folder), or compressed text.
std::unique_ptr<Source> open_loaded_archive(LoadedArchive loaded, const std::string& file, const ImportOptions& options,
                                            Manifest* manifest) {
  if (loaded.raw) return open_text(loaded.tree.find("/data")->data, file, options);
  if (auto prefix = top_with(loaded.tree, "sos_commands"))
    return import_source(import_sosreport(std::move(loaded.tree).subtree(*prefix), file, options), "sosreport " + file);
  if (auto prefix = top_with(loaded.tree, "sys")) {
    MemoryTree root = std::move(loaded.tree).subtree(*prefix);
    // A p2pcheck capture says which files could not be read on the machine: they replay as such
    // (the Source makes each a file of its directory; from schema 3 no member holds its place).
    FailureMap failures;
    if (const MemoryTree::Node* m = root.find(kManifestPath); m && m->kind == EntryKind::kFile) {
      std::string member = (prefix->empty() ? "" : prefix->substr(1) + "/") + (kManifestPath + 1);
      auto info = parse_capture_manifest(m->data, file + ":" + member);
      if (info) {
        failures = std::move(info->failures);
        info->failures.clear();
        root.set_not_carried(info->not_carried);
      }
      // The source reads these same bytes at this path, unless the manifest names itself unreadable.
      if (manifest) *manifest = {true, failures.count(kManifestPath) ? std::nullopt : std::move(info)};
    }
    // A loaded tar holds no failures of its own: the manifest's are all the source has.
    auto source = open_memory_source(std::move(root), "archive " + file);
    if (!failures.empty()) source->set_recorded_failures(std::move(failures));
    return source;
  }
  std::vector<std::string> top = loaded.tree.children("/");
  std::string shown;
  for (std::size_t i = 0; i < top.size() && i < 5; ++i) shown += (i ? ", " : "") + printable(top[i].substr(0, 60));
  if (top.size() > 5) shown += ", ... (" + std::to_string(top.size()) + " in all)";
  throw Error(file, "no sys/ directory at the top of the archive or inside its single top folder (it holds " +
                        (top.empty() ? std::string("nothing") : shown) +
                        "); expected a capture of a Linux root (or a sosreport, with sos_commands/): ask for a "
                        "`p2pcheck capture`, or `sos report -o devices,pci,kernel,processor,block`");
}

std::unique_ptr<Source> open_dump_file(const std::string& file, const IdentifiedInput& in, const ImportOptions& options,
                                       Manifest* manifest) {
  struct stat st;
  // A FIFO, device or socket is refused here: a blocking read of one never returns.
  if (input_type(file, "dump") == InputType::kDirectory) {
    // A sosreport copies parts of /sys too: its sos_commands/ decides.
    if (stat((file + "/sos_commands").c_str(), &st) == 0) {
      MemoryTree sos;
      load_host_tree(file, sos, sos_wanted);
      return import_source(import_sosreport(sos, file, options), "sosreport " + file);
    }
    if (stat((file + "/sys").c_str(), &st) == 0) {
      return with_capture_manifest(open_tree_source(file));
    }
    // An unpacked capture or tarball: the root inside its one top folder, as for archives.
    if (DIR* d = opendir(file.c_str())) {
      std::vector<std::string> entries;
      while (struct dirent* e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") entries.push_back(e->d_name);
      closedir(d);
      std::string inner = entries.size() == 1 ? file + "/" + entries[0] : "";
      if (!inner.empty() &&
          (stat((inner + "/sys").c_str(), &st) == 0 || stat((inner + "/sos_commands").c_str(), &st) == 0))
        return open_dump_file(inner, {InputKind::kDirectory, ""}, options, manifest);
    }
    return open_bundle(file, options);
  }
  // The head identify_input() read decides; text is read whole, since its whole text decides the format.
  if (in.kind != InputKind::kArchive) return open_text(read_host_file(file), file, options);
  return open_loaded_archive(load_archive(file), file, options, manifest);
}

}  // namespace

std::unique_ptr<Source> open_dump_source(const std::string& file) { return open_dump_source(file, ImportOptions{}); }

std::unique_ptr<Source> open_dump_source(const std::string& file, const ImportOptions& options) {
  return open_dump_file(file, identify_input(file), options, nullptr);
}

OpenedDump open_dump(const std::string& file, const ImportOptions& options) {
  return open_dump(file, identify_input(file), options);
}

OpenedDump open_dump(const std::string& file, const IdentifiedInput& in, const ImportOptions& options) {
  Manifest manifest;
  OpenedDump opened{open_dump_file(file, in, options, &manifest), std::nullopt};
  // Imports describe themselves in a small manifest of their own; read as any replay reads it.
  opened.info = manifest.known ? std::move(manifest.info) : read_capture_info(*opened.source);
  refuse_plan_manifest(opened.info, file);
  return opened;
}

void refuse_plan_manifest(const std::optional<CaptureInfo>& info, const std::string& file) {
  if (info && info->format == "plan")
    throw Error(file,
                "its manifest.json says format \"plan\"; expected a capture's manifest (a plan is read from "
                "its TOML file with --plan FILE)");
}

std::unique_ptr<Source> open_dump_bytes(const std::string& bytes, const std::string& name,
                                        const ImportOptions& options) {
  if (bytes.size() > kMaxFileBytes)
    throw Error(name, "larger than " + std::to_string(kMaxFileBytes >> 20) +
                          " MiB; no dump format p2pcheck reads is that large");
  if (!looks_like_archive(bytes)) return open_text(bytes, name, options);
  return open_loaded_archive(load_archive_bytes(bytes, name), name, options, nullptr);
}

std::string cpuinfo_for_option(const std::string& cpu) {
  // Families chosen at the boundary each rule looks at (rules/cpu.h): Zen's first family, Hygon is
  // its own vendor (0x18), pre-Zen Bulldozer-class parts are 0x15.
  struct Known {
    const char* key;
    const char* vendor;
    int family;
    const char* what;
  };
  static const Known known[] = {{"amd-zen", "AuthenticAMD", kFirstZenFamily, "AMD Zen or newer"},
                                {"amd-pre-zen", "AuthenticAMD", 0x15, "AMD before Zen"},
                                {"intel", "GenuineIntel", 6, "Intel"},
                                {"hygon", "HygonGenuine", 0x18, "Hygon"}};
  // Not x86: the kernel's CPU rule does not exist there; the keys are those each one's
  // show_cpuinfo() prints, which parse_cpuinfo() tells the architecture by.
  if (cpu == "power") return "processor\t: 0\ncpu\t\t: POWER (assumed from --cpu power)\n\n";
  if (cpu == "arm64")
    return "processor\t: 0\nCPU implementer\t: 0x00\nmodel name\t: arm64 (assumed from --cpu arm64)\n\n";
  for (const auto& k : known)
    if (cpu == k.key)
      return "processor\t: 0\nvendor_id\t: " + std::string(k.vendor) + "\ncpu family\t: " + std::to_string(k.family) +
             "\nmodel\t\t: 0\nmodel name\t: " + k.what + " (assumed from --cpu " + k.key + ")\n\n";
  struct stat st;
  if (stat(cpu.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    std::string text = read_host_file(cpu);
    if (sniff_text(text) != TextFormat::kCpuinfo) throw UsageError("--cpu " + cpu + ": not a /proc/cpuinfo file");
    return text;
  }
  throw UsageError("--cpu " + cpu + ": expected one of " + kCpuOptionValues + " or a /proc/cpuinfo file");
}

}  // namespace p2pcheck
