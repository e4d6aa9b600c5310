// CPU, kernel, distribution, kernel configuration, modules and mounts, read through the source.
#include "p2pcheck/model/machine.h"

#include <zlib.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"
#include "p2pcheck/source/table_text.h"

namespace p2pcheck {
namespace {

std::optional<std::string> gunzip(const std::string& in);
void parse_config(KernelConfig& config, std::string_view text, const std::string& file);

}  // namespace

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo cpu;
  // CPU 0's block comes first and no kernel prints one of more than a few KB (x86's flags line is
  // the longest); the rest of a file of megabytes is never walked.
  text = text.substr(0, kCpu0BlockBytes);
  int processors = 0;
  while (!text.empty()) {
    std::string_view line = next_line(text);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = trim(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    // cpu_supports_p2pdma() looks at CPU 0 only; so do we, and stop at the next CPU's block
    // (8,192 CPUs print ~16 MB).
    if (key == "processor" && ++processors == 2) break;
    // Each architecture's show_cpuinfo() prints its own keys (arch/*/kernel/*cpuinfo*.c).
    if (key == "vendor_id")
      cpu.architecture = value == "IBM/S390" ? "s390" : "x86";
    else if (key == "cpu" && cpu.architecture.empty() && value.substr(0, 5) == "POWER")
      cpu.architecture = "powerpc";
    else if (key == "CPU implementer")
      cpu.architecture = "arm64";
    else if (key == "isa" && value.substr(0, 2) == "rv")
      cpu.architecture = "riscv";
    if (key == "vendor_id")
      cpu.vendor_id = printable(value);  // shown as any name from input (printable.h)
    else if (key == "cpu family")
      cpu.family = static_cast<int>(parse_dec(value).value_or(-1));
    else if (key == "model")
      cpu.model = static_cast<int>(parse_dec(value).value_or(-1));
    else if (key == "model name")
      cpu.model_name = printable(value);
    else if (key == "flags") {
      cpu.flags_read = true;
      for (std::string_view flag = next_word(value); !flag.empty(); flag = next_word(value))
        if (flag == "hypervisor") cpu.hypervisor = true;
    }
  }
  return cpu;
}

namespace {

std::optional<std::string> gunzip(const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return std::nullopt;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[65536];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return std::nullopt;
    }
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > kMaxFileBytes) {
      inflateEnd(&zs);
      return std::nullopt;
    }
  } while (rc != Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

void parse_config(KernelConfig& config, std::string_view text, const std::string& file) {
  // "CONFIG_NAME=value"; comments ("# CONFIG_X is not set") and anything else are skipped. Bounded
  // as a table: an allyesconfig has ~15,000 lines, and each option read is a map entry.
  for (std::string_view line : split_table_lines(text, file)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t eq = line.find('=');
    if (line.substr(0, 7) != "CONFIG_" || eq == std::string_view::npos || eq == 7) continue;
    std::string_view name = line.substr(0, eq);
    bool word = true;
    for (char c : name) word = word && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (word) config.options[std::string(name)] = std::string(line.substr(eq + 1));
  }
}

// The places hipFile's documentation (and everyone else) looks, in that order.
KernelConfig read_kernel_config(Source& src, const std::string& release, std::map<std::string, std::string>& unread) {
  KernelConfig config;
  std::vector<std::string> candidates;
  if (!release.empty()) candidates.push_back("/boot/config-" + release);
  candidates.push_back("/proc/config.gz");
  if (!release.empty()) candidates.push_back("/lib/modules/" + release + "/build/.config");
  for (const std::string& path : candidates) {
    config.tried.push_back(path);
    FileRead r = src.read(path);
    if (!r.ok()) {
      if (r.status != ReadStatus::kMissing) unread[path] = why_unread(r);
      continue;
    }
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
      auto plain = gunzip(r.bytes);
      if (!plain) throw Error(path, "not a valid gzip stream; expected the kernel's compressed config");
      r.bytes = std::move(*plain);
    }
    config.file = path;
    parse_config(config, r.bytes, path);
    return config;
  }
  return config;
}

}  // namespace

KernelConfig parse_kernel_config(std::string bytes, const std::string& file) {
  KernelConfig config;
  if (bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b') {
    auto plain = gunzip(bytes);
    if (!plain) throw Error(file, "not a valid gzip stream; expected the kernel's compressed config");
    bytes = std::move(*plain);
  }
  config.file = file;
  parse_config(config, bytes, file);
  return config;
}

std::optional<std::string> KernelConfig::get(const std::string& name) const {
  if (!known()) return std::nullopt;
  auto it = options.find(name);
  return it == options.end() ? std::string("n") : it->second;
}

std::vector<std::pair<std::string_view, std::string_view>> parse_cmdline(std::string_view cmdline) {
  std::vector<std::pair<std::string_view, std::string_view>> params;
  for (std::string_view word = next_word(cmdline); !word.empty(); word = next_word(cmdline)) {
    if (word == "--") break;  // what follows belongs to init
    size_t eq = word.find('=');
    if (eq == std::string_view::npos)
      params.emplace_back(word, "");
    else
      params.emplace_back(word.substr(0, eq), word.substr(eq + 1));
  }
  return params;
}

std::optional<KernelVersion> parse_kernel_version(const std::string& release) {
  // "6.8.0-45-generic" -> 6.8.0; from_chars, as sscanf's %d is undefined on an out-of-range number.
  KernelVersion v;
  const char* end = release.data() + release.size();
  auto major = std::from_chars(release.data(), end, v.major);
  if (major.ec != std::errc() || major.ptr == end || *major.ptr != '.') return std::nullopt;
  auto minor = std::from_chars(major.ptr + 1, end, v.minor);
  if (minor.ec != std::errc()) return std::nullopt;
  if (minor.ptr != end && *minor.ptr == '.' && std::from_chars(minor.ptr + 1, end, v.patch).ec != std::errc())
    v.patch = 0;
  return v;
}

std::string KernelVersion::str() const {
  return std::to_string(major) + "." + std::to_string(minor) + (patch ? "." + std::to_string(patch) : "");
}

std::string why_unread(const FileRead& r) {
  switch (r.status) {
    case ReadStatus::kOk: return "read";
    case ReadStatus::kMissing: return "not present";
    case ReadStatus::kDenied: return "not readable (" + r.error + "): needs root";
    case ReadStatus::kFailed: return "read failed (" + r.error + ")";
    case ReadStatus::kNotCarried: return r.error;
  }
  return "not read";
}

std::string Machine::not_carried(std::initializer_list<const char*> paths) const {
  for (const char* path : paths)
    if (auto it = unread.find(path); it != unread.end() && it->second.rfind("not in ", 0) == 0) return it->second;
  return "";
}

MachineIdentity read_identity(Source& source) {
  MachineIdentity id;
  static const std::pair<const char*, const char*> kFiles[] = {{"hostname", "/proc/sys/kernel/hostname"},
                                                               {"dmi_vendor", "/sys/class/dmi/id/sys_vendor"},
                                                               {"dmi_product", "/sys/class/dmi/id/product_name"},
                                                               {"dmi_serial", "/sys/class/dmi/id/product_serial"}};
  for (const auto& [key, path] : kFiles) {
    FileRead r = source.read(path);
    // Kept to the kernel's own caps: a host name has at most 64 bytes (__NEW_UTS_LEN), DMI strings
    // are short SMBIOS strings; a dump's 60 MB host-name file is cut there, never kept or escaped whole.
    const std::size_t cap = key == std::string("hostname") ? 64 : 256;
    if (r.ok()) r.bytes = std::string(utf8_prefix(trim(r.bytes), cap));
    std::string text = r.ok() ? r.bytes : "";
    id.reads[path] = r;
    std::optional<std::string>* slot = key == std::string("hostname")      ? &id.hostname
                                       : key == std::string("dmi_vendor")  ? &id.dmi_vendor
                                       : key == std::string("dmi_product") ? &id.dmi_product
                                                                           : &id.dmi_serial;
    // Never an empty string: an empty or unreadable value is null with the reason. "(none)" is what
    // the kernel names a host nobody named (UTS_NODENAME): no host name, not a host called that.
    if (key == std::string("hostname") && text == "(none)")
      id.why[key] = "the kernel's default \"(none)\": never set";
    else if (!text.empty())
      *slot = printable(text);
    else
      id.why[key] = r.ok() ? "empty" : why_unread(r);
  }
  return id;
}

namespace {

// A file that is there but could not be read is noted with the reason; a missing one is not.
void note_unread(Machine& m, const char* path, const FileRead& r) {
  if (!r.ok() && r.status != ReadStatus::kMissing) m.unread[path] = why_unread(r);
}

// The release (from /proc/version's third word when osrelease is unreadable), the version line and
// the command line, each refused when no kernel could have written it: they name files later.
void read_kernel_strings(Source& source, Machine& m) {
  FileRead raw;
  m.kernel_release = read_text(source, "/proc/sys/kernel/osrelease", &raw);
  note_unread(m, "/proc/sys/kernel/osrelease", raw);
  m.kernel_version = read_text(source, "/proc/version", &raw);
  note_unread(m, "/proc/version", raw);
  const char* release_file = "/proc/sys/kernel/osrelease";
  if (m.kernel_release.empty() && !m.kernel_version.empty()) {
    // "Linux version 6.8.0-142-generic (buildd@...) ...": the third word is the release.
    std::array<std::string_view, 3> words;
    if (first_words(m.kernel_version, words) == 3) m.kernel_release = words[2];
    release_file = "/proc/version";
  }
  // utsname's release field holds __NEW_UTS_LEN (64) characters; it names files (/boot/config-REL).
  if (m.kernel_release.size() > kMaxReleaseBytes)
    throw Error(release_file, "kernel release of " + std::to_string(m.kernel_release.size()) +
                                  " bytes; a kernel's is at most " + std::to_string(kMaxReleaseBytes));
  if (!is_printable(m.kernel_release))
    throw Error(release_file, "kernel release '" + printable(m.kernel_release) +
                                  "' holds control characters; a kernel's is printable text");
  m.cmdline = read_text(source, "/proc/cmdline", &raw);
  note_unread(m, "/proc/cmdline", raw);
  if (m.cmdline.size() > kMaxCmdlineBytes)
    throw Error("/proc/cmdline", std::to_string(m.cmdline.size()) + " bytes; a kernel's command line is at most " +
                                     std::to_string(kMaxCmdlineBytes));
}

// The first os-release file found; empty when neither is.
OsRelease read_os_release(Source& source) {
  OsRelease os;
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    FileRead r = source.read(path);
    if (!r.ok()) continue;
    os.file = path;
    for (std::string_view line : split_table_lines(r.bytes, path)) {
      size_t eq = line.find('=');
      if (eq == std::string_view::npos) continue;
      std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
        value = value.substr(1, value.size() - 2);
      if (key == "ID")
        os.id = value;
      else if (key == "ID_LIKE")
        os.id_like = value;
      else if (key == "VERSION_ID")
        os.version_id = value;
      else if (key == "PRETTY_NAME")
        os.pretty_name = printable(value);
    }
    break;
  }
  return os;
}

void read_modules(Source& source, Machine& m) {
  FileRead r = source.read("/proc/modules");
  if (!r.ok()) {
    note_unread(m, "/proc/modules", r);
    return;
  }
  m.modules_known = true;
  for (std::string_view line : split_table_lines(r.bytes, "/proc/modules")) {
    std::array<std::string_view, 5> words;  // name size refcount users state
    if (first_words(line, words) == 5) m.modules[std::string(words[0])] = words[4];
  }
}

void read_mounts(Source& source, Machine& m) {
  for (const char* path : {"/proc/mounts", "/proc/self/mounts"}) {
    FileRead r = source.read(path);
    if (!r.ok()) {
      note_unread(m, path, r);
      continue;
    }
    m.mounts_known = true;
    std::vector<std::string_view> rows = split_table_lines(r.bytes, path);
    m.mounts.reserve(rows.size());
    for (std::string_view line : rows) {
      std::array<std::string_view, 4> words;  // device mountpoint type options
      if (first_words(line, words) == 4)
        m.mounts.push_back(
            {std::string(words[0]), std::string(words[1]), std::string(words[2]), std::string(words[3])});
    }
    break;
  }
}

}  // namespace

Machine read_machine(Source& source) {
  Machine m;
  m.from_dump = !source.is_live();
  if (FileRead r = source.read("/proc/cpuinfo"); r.ok()) {
    m.cpu = parse_cpuinfo(r.bytes);
    m.cpu.evidence_file = "/proc/cpuinfo";
  } else {
    note_unread(m, "/proc/cpuinfo", r);
  }
  read_kernel_strings(source, m);
  m.os = read_os_release(source);
  m.config = read_kernel_config(source, m.kernel_release, m.unread);
  m.kernel_table = read_kernel_table(source, m.config);
  if (m.kernel_table.origin == KernelTableOrigin::kRunningKernel) m.kernel_table.release = m.kernel_release;
  read_modules(source, m);
  read_mounts(source, m);
  m.identity = read_identity(source);
  return m;
}

}  // namespace p2pcheck
