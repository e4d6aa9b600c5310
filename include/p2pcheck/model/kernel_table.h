// The kernel's own host-bridge allowlist, pci_p2pdma_whitelist[] of drivers/pci/p2pdma.c, read where
// it is: the running kernel (/proc/kallsyms + /proc/kcore), a capture that stored it
// (live/kernel_table.json), or a kernel image or package (kernel_image.h). The rows are data; the
// rules decide with them (rules/kernel_rules.h) and say which differ from the upstream table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/source/source.h"

namespace p2pcheck {

struct KernelConfig;

// One row of struct pci_p2pdma_whitelist_entry { unsigned short vendor, device; enum flags; }.
struct KernelTableRow {
  std::uint16_t vendor = 0, device = 0;
  std::uint32_t flags = 0;
  auto operator<=>(const KernelTableRow&) const = default;
};
// REQ_SAME_HOST_BRIDGE, the only flag the kernel defines (6.1 to 7.3).
inline constexpr std::uint32_t kReqSameHostBridge = 1;

enum class KernelTableOrigin { kNone, kRunningKernel, kCapture, kKernelImage };
// "none", "running kernel", "capture", "kernel image": the names text and JSON give the source.
const char* to_string(KernelTableOrigin origin);

struct KernelTable {
  KernelTableOrigin origin = KernelTableOrigin::kNone;
  std::vector<KernelTableRow> rows;  // in the kernel's order, without the zero row that ends them
  std::string how;                   // evidence: where the symbol was and what was read
  std::string release;               // the release of the kernel the rows come from ("" unknown)
  std::string build_id;              // that kernel's GNU build id in hex ("" unknown)
  std::string why_not;               // origin kNone: why the kernel's own table was not read ("" not tried)
  bool read() const { return origin != KernelTableOrigin::kNone; }
};

// The table's name in the kernel, and its layout on 64-bit little-endian kernels (x86_64, arm64,
// ppc64le, riscv64): two u16 and a 4-byte enum, 8 bytes a row.
inline constexpr const char* kTableSymbol = "pci_p2pdma_whitelist";
inline constexpr std::size_t kTableRowBytes = 8;
// 6.12's table has 10 rows and 7.3's 25: one without its zero row within this many is not the table.
inline constexpr std::size_t kMaxTableRows = 256;
// ELF program headers read at most (kcore has one PT_LOAD per memory range: hundreds at most).
inline constexpr std::size_t kMaxElfSegments = 8192;
// A System.map or /proc/kallsyms longer than this is not one (6.12 with KALLSYMS_ALL: ~12 MB).
inline constexpr std::size_t kMaxSymbolMapBytes = 256u << 20;

// The rows in `bytes` (at the symbol) up to the zero row. nullopt, with `error` saying why, when they
// are not the table: no zero row within kMaxTableRows, a row of vendor 0 or 0xffff, an unknown flag.
std::optional<std::vector<KernelTableRow>> parse_table_rows(std::string_view bytes, std::string& error);

// "8086:09a2" and "8086:09a2 REQ_SAME_HOST_BRIDGE".
std::string row_ids(const KernelTableRow& row);
std::string row_text(const KernelTableRow& row);

// Reads part of an ELF file: (offset, length) -> up to length bytes (fewer at its end).
using ElfPartReader = std::function<FileRead(std::uint64_t offset, std::size_t length)>;
// Where virtual address `address` is in the file: its offset and how many bytes of its PT_LOAD
// segment follow. nullopt, with `error`, when the headers are not a 64-bit little-endian ELF or no
// segment maps the address. Reads the headers through libelf, bounded by kMaxElfSegments.
struct ElfPlace {
  std::uint64_t offset = 0, available = 0;
};
std::optional<ElfPlace> elf_place(const ElfPartReader& read, std::uint64_t address, std::string& error);
// The table at `address` of the ELF `read` reads (a core like /proc/kcore, or a vmlinux).
std::optional<std::vector<KernelTableRow>> read_table_at(const ElfPartReader& read, std::uint64_t address,
                                                         std::string& error);
// The GNU build id of an ELF's PT_NOTE segments, or "" (vmlinux).
std::string elf_build_id(const ElfPartReader& read);
// The GNU build id in ELF notes as the kernel exports them (/sys/kernel/notes), or "".
std::string notes_build_id(std::string_view notes);

// The address of `symbol` in System.map or /proc/kallsyms text ("ffffffff82a3b5c0 r NAME" lines).
// nullopt when absent; 0 when listed with a hidden address (kallsyms to a reader who is not root).
std::optional<std::uint64_t> find_symbol(std::string_view map_text, std::string_view symbol);

// The kernel table of the machine `source` shows: a capture's live/kernel_table.json, else the
// running kernel's through /proc/kallsyms and /proc/kcore (a live machine, or a tree holding them).
// Not read: origin kNone, why_not says why (not root, lockdown, no CONFIG_KALLSYMS_ALL, ...).
KernelTable read_kernel_table(Source& source, const KernelConfig& config);

// live/kernel_table.json: what capture stores, and reads back (Error naming `file` when broken).
inline constexpr const char* kKernelTableFile = "/live/kernel_table.json";
std::string kernel_table_json(const KernelTable& table);
KernelTable parse_kernel_table_json(const std::string& bytes, const std::string& file);

}  // namespace p2pcheck
