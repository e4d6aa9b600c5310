// What kind of text the customer sent, from its content alone.
#include "p2pcheck/import/import.h"

#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

const char* to_string(TextFormat format) {
  switch (format) {
    case TextFormat::kLspciDump: return "lspci -x dump";
    case TextFormat::kLspciText: return "lspci -vvv text";
    case TextFormat::kLspciNoHex: return "lspci output";
    case TextFormat::kLspciTree: return "lspci -t tree";
    case TextFormat::kUdevDb: return "udev database";
    case TextFormat::kHwlocXml: return "hwloc XML";
    case TextFormat::kCpuinfo: return "cpuinfo";
    case TextFormat::kNvidiaBugReport: return "nvidia-bug-report";
    case TextFormat::kUnknown: break;
  }
  return "unknown";
}

namespace {

// Plain string tests, one per shape the sniffer looks for: no std::regex on customer text.

// "[dddd:]bb:dd.f " at the start of a line, as lspci prints a device (the domain 4 or 5 digits).
bool lspci_device_line(std::string_view line) {
  size_t space = line.find(' ');
  return space != std::string_view::npos && Bdf::shaped(line.substr(0, space), 4, 5);
}

// "\tKEY: " of a line lspci -v prints in a function's block (not the plain listing).
bool lspci_verbose_line(std::string_view line) {
  static constexpr std::string_view kKeys[] = {
      "\tSubsystem: ",    "\tFlags: ",     "\tControl: ",     "\tCapabilities: ",         "\tRegion ",
      "\tBus: ",          "\tNUMA node: ", "\tIOMMU group: ", "\tKernel driver in use: ", "\tKernel modules: ",
      "\tPhysical Slot: "};
  for (std::string_view key : kKeys)
    if (line.substr(0, key.size()) == key) return true;
  return false;
}

// "X: value": udevadm's one-letter record lines.
bool udev_line(std::string_view line) {
  return line.size() >= 3 && line[0] >= 'A' && line[0] <= 'Z' && line.substr(1, 2) == ": ";
}

// "E: KEY=" with KEY in [A-Z_]+.
bool udev_env_line(std::string_view line) {
  if (line.substr(0, 3) != "E: ") return false;
  size_t eq = line.find('=', 3);
  if (eq == std::string_view::npos || eq == 3) return false;
  for (char c : line.substr(3, eq - 3))
    if (!((c >= 'A' && c <= 'Z') || c == '_')) return false;
  return true;
}

// A "P: /..." record whose one-letter lines lead to an "E: KEY=" line.
bool udev_start(std::string_view text) {
  bool in_record = false;
  for (std::string_view line : split_lines(text)) {
    if (in_record && udev_env_line(line)) return true;
    if (line.substr(0, 4) == "P: /")
      in_record = true;
    else if (!udev_line(line))
      in_record = false;
  }
  return false;
}

bool lower_hex(std::string_view text) {
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return !text.empty();
}

// "00: 86 80 ..." with 16 lower-case bytes, as lspci -x prints a config-space row.
bool lspci_hex_row(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t colon = line.find(':');
  if ((colon != 2 && colon != 3) || !lower_hex(line.substr(0, colon))) return false;
  std::string_view bytes = line.substr(colon + 1);
  if (bytes.size() != 16 * 3) return false;
  for (size_t i = 0; i < 16; ++i)
    if (bytes[i * 3] != ' ' || !lower_hex(bytes.substr(i * 3 + 1, 2))) return false;
  return true;
}

// "-[0000:00]-" after the drawing characters that open an lspci -t tree.
bool lspci_tree_start(std::string_view text) {
  size_t k = 0;
  while (k < text.size() && (text[k] == '-' || text[k] == '+' || text[k] == '\\' || text[k] == ' ')) ++k;
  if (k == 0 || text[k - 1] != '-' || k >= text.size() || text[k] != '[') return false;
  std::string_view rest = text.substr(k + 1);
  if (rest.size() >= 5 && rest[4] == ':' && is_hex_digits(rest.substr(0, 4))) rest.remove_prefix(5);
  return rest.size() >= 4 && is_hex_digits(rest.substr(0, 2)) && rest.substr(2, 2) == "]-";
}

// "processor<ws>: N" and, on a later line, "vendor_id<ws>: ".
bool cpuinfo_start(std::string_view text) {
  auto key_is = [](std::string_view line, std::string_view key) -> std::optional<std::string_view> {
    if (line.substr(0, key.size()) != key) return std::nullopt;
    size_t i = key.size();
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (line.substr(i, 2) != ": ") return std::nullopt;
    return line.substr(i + 2);
  };
  std::vector<std::string> lines = split_lines(text);
  bool processor = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (processor && key_is(line, "vendor_id")) return true;
    // The processor line must be a whole line, with the vendor_id line after it.
    if (auto n = key_is(line, "processor"); n && is_dec_digits(*n) && i + 1 < lines.size()) processor = true;
  }
  return false;
}

}  // namespace

TextFormat sniff_text(std::string_view text) {
  // Binary data is none of these.
  std::string_view head = text.substr(0, 65536);
  if (head.find('\0') != std::string_view::npos) return TextFormat::kUnknown;
  std::string start(trim(head.substr(0, 4096)));
  // Before the lspci test: the report holds lspci dumps among its other sections.
  if (start.find("Start of NVIDIA bug report log file") != std::string::npos) return TextFormat::kNvidiaBugReport;
  if ((start.rfind("<?xml", 0) == 0 || start.rfind("<topology", 0) == 0) &&
      start.find("<topology") != std::string::npos)
    return TextFormat::kHwlocXml;
  if (start.rfind("P: /", 0) == 0 && udev_start(start)) return TextFormat::kUdevDb;
  // A device line in the head; its hex rows anywhere (a device's name line may be long).
  bool device = false, verbose = false;
  for (const std::string& line : split_lines(head)) {
    device = device || lspci_device_line(line);
    verbose = verbose || (device && lspci_verbose_line(line));
  }
  if (device) {
    for (size_t at = text.find('\n'); at != std::string_view::npos; at = text.find('\n', at + 1)) {
      size_t end = text.find('\n', at + 1);
      if (lspci_hex_row(text.substr(at + 1, end == std::string_view::npos ? end : end - at - 1)))
        return TextFormat::kLspciDump;
    }
    return verbose ? TextFormat::kLspciText : TextFormat::kLspciNoHex;
  }
  if (lspci_tree_start(start)) return TextFormat::kLspciTree;
  if (cpuinfo_start(start)) return TextFormat::kCpuinfo;
  return TextFormat::kUnknown;
}

std::string cpuinfo_shown(std::string_view text) {
  CpuInfo cpu = parse_cpuinfo(text);
  std::size_t processors = 0;
  for (std::string_view rest = text; !rest.empty();) processors += next_line(rest).substr(0, 9) == "processor";
  std::string out = cpu.vendor_id.empty() ? "a CPU of no vendor_id line" : "CPU " + printable(cpu.vendor_id);
  if (cpu.family >= 0) out += " family " + std::to_string(cpu.family);
  if (cpu.model >= 0) out += " model " + std::to_string(cpu.model);
  if (!cpu.model_name.empty()) out += " (" + printable(cpu.model_name.substr(0, 80)) + ")";
  return out + ", " + std::to_string(processors) + " processor" + (processors == 1 ? "" : "s");
}

}  // namespace p2pcheck
