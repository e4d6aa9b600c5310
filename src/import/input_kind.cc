// Telling inputs apart by their first bytes, in one place (input_kind.h).
#include "p2pcheck/import/input_kind.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sys/stat.h>

#include "p2pcheck/import/import.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

bool starts_with(std::string_view bytes, const char* magic, std::size_t len, std::size_t offset = 0) {
  return bytes.size() >= offset + len && std::memcmp(bytes.data() + offset, magic, len) == 0;
}

// Compressed (gzip, xz, zstd, bzip2) or a tar header: libarchive reads it.
bool looks_like_archive(std::string_view head) {
  return starts_with(head, "\x1f\x8b", 2) ||
         starts_with(head,
                     "\xfd"
                     "7zXZ\0",
                     6) ||
         starts_with(head, "\x28\xb5\x2f\xfd", 4) || starts_with(head, "BZh", 3) || starts_with(head, "ustar", 5, 257);
}

// A saved report is text starting with '{'. JSON cannot hold raw control bytes, so a binary file
// whose first byte happens to be '{' is not taken for one.
bool looks_like_json(std::string_view head) {
  auto first =
      std::find_if(head.begin(), head.end(), [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
  if (first == head.end() || *first != '{') return false;
  return std::none_of(head.begin(), head.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r';
  });
}

// A plan's tables (docs/plan.md) as TOML heads them: "[cpu]", "[[gpu]]", with spaces or a comment.
bool looks_like_plan(std::string_view head) {
  static const char* const kTables[] = {"[cpu]",   "[kernel]", "[[host_bridge]]", "[[root_port]]",        "[[switch]]",
                                        "[[gpu]]", "[[nvme]]", "[[device]]",      "[[switch.downstream]]"};
  for (std::string_view rest = head; !rest.empty();) {
    std::string_view line = next_line(rest);
    line = line.substr(0, line.find('#'));
    std::string table;
    for (char c : line)
      if (!std::isspace(static_cast<unsigned char>(c))) table += c;
    if (std::any_of(std::begin(kTables), std::end(kTables), [&](const char* t) { return table == t; })) return true;
  }
  return false;
}

}  // namespace

const char* to_string(InputKind kind) {
  switch (kind) {
    case InputKind::kDirectory: return "directory";
    case InputKind::kArchive: return "archive";
    case InputKind::kLspci: return "lspci output";
    case InputKind::kLspciTree: return "lspci -t output";
    case InputKind::kUdevDb: return "udev database";
    case InputKind::kHwlocXml: return "hwloc XML";
    case InputKind::kNvidiaBugReport: return "nvidia-bug-report";
    case InputKind::kCpuinfo: return "cpuinfo";
    case InputKind::kPlan: return "plan";
    case InputKind::kCheckJson: return "check --json";
    case InputKind::kEmpty: return "empty file";
    case InputKind::kUnknown: break;
  }
  return "unknown";
}

InputKind identify_head(std::string_view head) {
  if (head.empty()) return InputKind::kEmpty;
  if (looks_like_archive(head)) return InputKind::kArchive;
  if (looks_like_json(head)) return InputKind::kCheckJson;
  switch (sniff_text(head)) {  // binary bytes are kUnknown there
    case TextFormat::kLspciDump:
    case TextFormat::kLspciText:
    case TextFormat::kLspciNoHex: return InputKind::kLspci;
    case TextFormat::kLspciTree: return InputKind::kLspciTree;
    case TextFormat::kUdevDb: return InputKind::kUdevDb;
    case TextFormat::kHwlocXml: return InputKind::kHwlocXml;
    case TextFormat::kNvidiaBugReport: return InputKind::kNvidiaBugReport;
    case TextFormat::kCpuinfo: return InputKind::kCpuinfo;
    case TextFormat::kUnknown: break;
  }
  if (head.find('\0') == std::string_view::npos && looks_like_plan(head)) return InputKind::kPlan;
  return InputKind::kUnknown;
}

IdentifiedInput identify_input(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {InputKind::kUnknown, ""};
  if (S_ISDIR(st.st_mode)) return {InputKind::kDirectory, ""};
  if (!S_ISREG(st.st_mode)) return {InputKind::kUnknown, ""};
  IdentifiedInput in;
  in.head = read_input_head(path, kInputHeadBytes);
  // Nothing read from a file that has bytes: it could not be read, which is no kind of its own.
  in.kind = in.head.empty() && st.st_size != 0 ? InputKind::kUnknown : identify_head(in.head);
  return in;
}

}  // namespace p2pcheck
