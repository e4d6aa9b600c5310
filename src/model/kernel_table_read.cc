// The running kernel's pci_p2pdma_whitelist[] through the Source: the symbol's address from
// /proc/kallsyms, the rows from /proc/kcore; or what a capture stored of them. When the table cannot
// be read, the reason names the one thing to change (root, lockdown, a kernel option).
#include <nlohmann/json.hpp>

#include "p2pcheck/model/kernel_table.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_read.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

constexpr const char* kKallsyms = "/proc/kallsyms";
constexpr const char* kKcore = "/proc/kcore";
constexpr std::size_t kKallsymsPart = 1u << 20;

// The symbol's line in /proc/kallsyms, read a part at a time (it is ~12 MB with KALLSYMS_ALL).
// Sets `status` to how the first part read (kMissing: no kallsyms).
std::optional<std::uint64_t> kallsyms_address(Source& source, FileRead& first) {
  std::string carry;
  for (std::uint64_t offset = 0; offset < kMaxSymbolMapBytes;) {
    FileRead part = source.read_part(kKallsyms, offset, kKallsymsPart);
    if (offset == 0) first = {part.status, "", part.error};
    if (!part.ok() || part.bytes.empty()) return std::nullopt;
    offset += part.bytes.size();
    carry += part.bytes;
    std::size_t last = carry.rfind('\n');
    if (last == std::string::npos) {
      if (carry.size() > 4096) return std::nullopt;  // no line is this long
      continue;
    }
    if (auto address = find_symbol(std::string_view(carry).substr(0, last + 1), kTableSymbol)) return address;
    carry.erase(0, last + 1);
  }
  return std::nullopt;
}

std::string kcore_refusal(Source& source, const FileRead& read) {
  if (read.status == ReadStatus::kMissing) return "no /proc/kcore: kernel built without CONFIG_PROC_KCORE";
  if (read.status == ReadStatus::kDenied) {
    std::string lockdown = read_text(source, "/sys/kernel/security/lockdown");
    if (lockdown.find("[confidentiality]") != std::string::npos)
      return "/proc/kcore is refused: kernel lockdown is in confidentiality mode (" + read.error + ")";
    return "/proc/kcore needs root (" + read.error + ")";
  }
  return "/proc/kcore could not be read (" + (read.error.empty() ? "not a regular file" : read.error) + ")";
}

// Why the symbol is not there: the kernel has no table, or lists no static symbols.
std::string symbol_absent(const KernelConfig& config) {
  if (auto p2pdma = config.get("CONFIG_PCI_P2PDMA"); p2pdma && *p2pdma != "y")
    return "kernel built without CONFIG_PCI_P2PDMA (" + config.file + "): it has no table";
  std::string why =
      std::string(kTableSymbol) + " is not in /proc/kallsyms: a static symbol, listed only with CONFIG_KALLSYMS_ALL";
  if (auto all = config.get("CONFIG_KALLSYMS_ALL"); all && *all != "y") why += " (not set in " + config.file + ")";
  return why;
}

KernelTable read_running_table(Source& source, const KernelConfig& config) {
  KernelTable table;
  FileRead first;
  std::optional<std::uint64_t> address = kallsyms_address(source, first);
  if (first.status == ReadStatus::kMissing || first.status == ReadStatus::kNotCarried) {
    // On the live machine it is a kernel option; an input without it (an import, a capture made before
    // captures stored the table) says so, so that no reader takes the version table for the kernel's own.
    if (source.is_live())
      table.why_not = "no /proc/kallsyms: kernel built without CONFIG_KALLSYMS";
    else if (auto phrase = source.not_carried("/proc/kallsyms"))
      table.why_not = *phrase;
    else
      table.why_not = "neither the table nor /proc/kallsyms is in this input";
    return table;
  }
  if (!first.ok()) {
    table.why_not = "/proc/kallsyms could not be read (" + first.error + ")";
  } else if (!address) {
    table.why_not = symbol_absent(config);
  } else if (*address == 0) {
    table.why_not = "/proc/kallsyms hides addresses from this reader: run as root (kernel.kptr_restrict)";
  } else if (FileRead head = source.read_part(kKcore, 0, 64); !head.ok()) {
    table.why_not = kcore_refusal(source, head);
  } else {
    std::string error;
    auto reader = [&](std::uint64_t offset, std::size_t length) { return source.read_part(kKcore, offset, length); };
    auto rows = read_table_at(reader, *address, error);
    if (!rows) {
      table.why_not = "/proc/kcore at " + std::string(kTableSymbol) + " (0x" + hex(*address) + "): " + error;
      return table;
    }
    table.origin = KernelTableOrigin::kRunningKernel;
    table.rows = std::move(*rows);
    table.how =
        "/proc/kallsyms " + std::string(kTableSymbol) + " at 0x" + hex(*address) + ", rows read from /proc/kcore";
    if (FileRead notes = source.read("/sys/kernel/notes"); notes.ok()) table.build_id = notes_build_id(notes.bytes);
  }
  return table;
}

}  // namespace

KernelTable read_kernel_table(Source& source, const KernelConfig& config) {
  if (FileRead saved = source.read(kKernelTableFile); saved.ok())
    return parse_kernel_table_json(saved.bytes, kKernelTableFile);
  return read_running_table(source, config);
}

std::string kernel_table_json(const KernelTable& table) {
  nlohmann::ordered_json j;
  j["schema"] = "p2pcheck.kernel_table";
  j["version"] = 1;
  j["origin"] = to_string(table.origin);
  j["how"] = table.how;
  j["release"] = table.release;
  j["build_id"] = table.build_id;
  j["why_not"] = table.why_not;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const KernelTableRow& r : table.rows)
    rows.push_back({{"vendor", r.vendor}, {"device", r.device}, {"flags", r.flags}});
  j["rows"] = std::move(rows);
  return json_text(j) + "\n";
}

namespace {

std::vector<KernelTableRow> parse_rows_json(const JsonFields& top) {
  std::vector<KernelTableRow> rows;
  const nlohmann::ordered_json* list = top.array("rows");
  if (!list) return rows;
  if (list->size() > kMaxTableRows) top.fail("rows", "at most " + std::to_string(kMaxTableRows) + " rows");
  for (std::size_t i = 0; i < list->size(); ++i) {
    JsonFields row((*list)[i], top.file(), top.member("rows", i));
    KernelTableRow r{static_cast<std::uint16_t>(row.integer("vendor", 1, 0xfffe).value_or(0)),
                     static_cast<std::uint16_t>(row.integer("device", 0, 0xffff).value_or(0)),
                     static_cast<std::uint32_t>(row.integer("flags", 0, kReqSameHostBridge).value_or(0))};
    if (r.vendor == 0) row.fail("vendor", "a PCI vendor ID (1-0xfffe)");
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

KernelTable parse_kernel_table_json(const std::string& bytes, const std::string& file) {
  auto doc = parse_outside_json(bytes, file);
  if (!doc || !doc->is_object()) throw Error(file, "not JSON: expected a p2pcheck.kernel_table document");
  JsonFields top(*doc, file);
  if (top.text("schema") != "p2pcheck.kernel_table") top.fail("schema", "\"p2pcheck.kernel_table\"");
  if (top.integer("version", 0, 1000) != 1) top.fail("version", "1 (a newer p2pcheck wrote it)");
  KernelTable table;
  std::string origin = top.text("origin").value_or("none");
  if (origin != "none" && origin != "running kernel" && origin != "kernel image")
    top.fail("origin", "\"none\", \"running kernel\" or \"kernel image\"");
  table.rows = parse_rows_json(top);
  table.how = top.text("how").value_or("");
  table.release = top.text("release").value_or("");
  table.build_id = top.text("build_id").value_or("");
  table.why_not = top.text("why_not").value_or("");
  if (origin != "none") {
    table.origin = KernelTableOrigin::kCapture;
    table.how = "stored by capture (" + origin + ": " + table.how + ")";
  } else if (!table.rows.empty()) {
    top.fail("rows", "no rows where origin is \"none\"");
  }
  return table;
}

}  // namespace p2pcheck
