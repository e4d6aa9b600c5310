// What kind of text the customer sent, from its content alone.
#include "p2pcheck/import/import.h"

#include <regex>

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

const char* to_string(TextFormat format) {
  switch (format) {
    case TextFormat::kLspciDump: return "lspci -x dump";
    case TextFormat::kLspciNoHex: return "lspci output";
    case TextFormat::kLspciTree: return "lspci -t tree";
    case TextFormat::kUdevDb: return "udev database";
    case TextFormat::kHwlocXml: return "hwloc XML";
    case TextFormat::kCpuinfo: return "cpuinfo";
    case TextFormat::kUnknown: break;
  }
  return "unknown";
}

TextFormat sniff_text(std::string_view text) {
  // Binary data is none of these.
  std::string_view head = text.substr(0, 65536);
  if (head.find('\0') != std::string_view::npos) return TextFormat::kUnknown;
  std::string start(trim(head.substr(0, 4096)));
  if ((start.rfind("<?xml", 0) == 0 || start.rfind("<topology", 0) == 0) &&
      start.find("<topology") != std::string::npos)
    return TextFormat::kHwlocXml;
  static const std::regex udev_first("P: /[^\n]*\n(?:[A-Z]: [^\n]*\n)*E: [A-Z_]+=");
  if (start.rfind("P: /", 0) == 0 && std::regex_search(start, udev_first)) return TextFormat::kUdevDb;
  static const std::regex device_line("(^|\n)(?:[0-9a-fA-F]{4,5}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7] [^\n]*");
  static const std::regex hex_line("\n[0-9a-f]{2,3}: [0-9a-f]{2}( [0-9a-f]{2}){15}\r?(\n|$)");
  std::string sample(head);
  if (std::regex_search(sample, device_line))
    return std::regex_search(sample, hex_line) ? TextFormat::kLspciDump : TextFormat::kLspciNoHex;
  static const std::regex tree_line("^[-+\\\\ ]*-\\[([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}\\]-");
  if (std::regex_search(start, tree_line)) return TextFormat::kLspciTree;
  static const std::regex cpuinfo("(^|\n)processor\\s*: \\d+\n(.*\n)*?vendor_id\\s*: ");
  if (std::regex_search(start, cpuinfo)) return TextFormat::kCpuinfo;
  return TextFormat::kUnknown;
}

}  // namespace p2pcheck
