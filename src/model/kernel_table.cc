// pci_p2pdma_whitelist[] as bytes: the rows, where an ELF file (kcore, vmlinux) keeps an address, and
// the symbol maps that give the address. Every size read is bounded; the bytes are hostile.
#include "p2pcheck/model/kernel_table.h"

#include <gelf.h>
#include <libelf.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

const char* to_string(KernelTableOrigin origin) {
  switch (origin) {
    case KernelTableOrigin::kNone: return "none";
    case KernelTableOrigin::kRunningKernel: return "running kernel";
    case KernelTableOrigin::kCapture: return "capture";
    case KernelTableOrigin::kKernelImage: return "kernel image";
  }
  return "none";
}

namespace {

std::uint32_t le32(std::string_view b, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}

std::uint16_t le16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8);
}

std::string hex_bytes(std::string_view bytes) {
  std::string out;
  for (char c : bytes) append_hex(out, static_cast<unsigned char>(c), 2);
  return out;
}

std::string hex_address(std::uint64_t address) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
  return buf;
}

}  // namespace

std::string row_ids(const KernelTableRow& row) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%04x", row.vendor, row.device);
  return buf;
}

std::string row_text(const KernelTableRow& row) {
  return row_ids(row) + (row.flags & kReqSameHostBridge ? " REQ_SAME_HOST_BRIDGE" : "");
}

std::optional<std::vector<KernelTableRow>> parse_table_rows(std::string_view bytes, std::string& error) {
  std::vector<KernelTableRow> rows;
  for (std::size_t i = 0; i <= kMaxTableRows; ++i) {
    std::size_t at = i * kTableRowBytes;
    if (bytes.size() < at + kTableRowBytes) {
      error =
          "the bytes end after " + std::to_string(i) + " rows, before the zero row that ends " + kTableSymbol + "[]";
      return std::nullopt;
    }
    KernelTableRow row{le16(bytes, at), le16(bytes, at + 2), le32(bytes, at + 4)};
    if (row == KernelTableRow{} && i == 0) {
      error = std::string("the zero row comes first: an empty table is not ") + kTableSymbol + "[] (a wrong address?)";
      return std::nullopt;
    }
    if (row == KernelTableRow{}) return rows;
    if (row.vendor == 0 || row.vendor == 0xffff || (row.flags & ~kReqSameHostBridge) != 0) {
      char flags[16];
      std::snprintf(flags, sizeof flags, "0x%x", row.flags);
      error = "row " + std::to_string(i) + " (" + row_ids(row) + ", flags " + flags +
              ") is not a (vendor, device, REQ_SAME_HOST_BRIDGE flag) row: not " + kTableSymbol + "[]";
      return std::nullopt;
    }
    rows.push_back(row);
  }
  error = "no zero row within " + std::to_string(kMaxTableRows) + " rows: not " + kTableSymbol + "[]";
  return std::nullopt;
}

namespace {

struct ElfEnd {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfEnd>;

// The program headers of a 64-bit little-endian ELF, read in two bounded steps (the header, then
// the table it names) and parsed by libelf from memory.
std::optional<std::vector<GElf_Phdr>> program_headers(const ElfPartReader& read, std::string& error) {
  FileRead head = read(0, sizeof(Elf64_Ehdr));
  if (!head.ok()) {
    error = "cannot read the ELF header (" + head.error + ")";
    return std::nullopt;
  }
  if (head.bytes.size() < sizeof(Elf64_Ehdr) || head.bytes.compare(0, SELFMAG, ELFMAG) != 0) {
    error = "not an ELF file (no ELF header)";
    return std::nullopt;
  }
  if (head.bytes[EI_CLASS] != ELFCLASS64 || head.bytes[EI_DATA] != ELFDATA2LSB) {
    error = "not a 64-bit little-endian ELF file";
    return std::nullopt;
  }
  elf_version(EV_CURRENT);
  ElfPtr e(elf_memory(head.bytes.data(), head.bytes.size()));
  GElf_Ehdr eh;
  if (!e || !gelf_getehdr(e.get(), &eh)) {
    error = std::string("broken ELF header (") + elf_errmsg(-1) + ")";
    return std::nullopt;
  }
  if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM || eh.e_phnum > kMaxElfSegments ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > kMaxPartBytes) {
    error = "ELF program headers out of bounds (" + std::to_string(eh.e_phnum) + " at offset " +
            std::to_string(eh.e_phoff) + ")";
    return std::nullopt;
  }
  std::size_t need = static_cast<std::size_t>(eh.e_phoff) + eh.e_phnum * sizeof(Elf64_Phdr);
  FileRead all = read(0, need);
  if (!all.ok() || all.bytes.size() < need) {
    error = "the ELF program headers end early: truncated (" + std::to_string(all.bytes.size()) + " of " +
            std::to_string(need) + " bytes)";
    return std::nullopt;
  }
  ElfPtr whole(elf_memory(all.bytes.data(), all.bytes.size()));
  std::vector<GElf_Phdr> out(eh.e_phnum);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!whole || !gelf_getphdr(whole.get(), static_cast<int>(i), &out[i])) {
      error = std::string("broken ELF program header (") + elf_errmsg(-1) + ")";
      return std::nullopt;
    }
  return out;
}

}  // namespace

std::optional<ElfPlace> elf_place(const ElfPartReader& read, std::uint64_t address, std::string& error) {
  auto headers = program_headers(read, error);
  if (!headers) return std::nullopt;
  std::size_t loads = 0;
  for (const GElf_Phdr& ph : *headers) {
    if (ph.p_type != PT_LOAD) continue;
    ++loads;
    if (address < ph.p_vaddr || address - ph.p_vaddr >= ph.p_filesz) continue;
    std::uint64_t into = address - ph.p_vaddr;
    if (ph.p_offset > UINT64_MAX - into || ph.p_offset + into > static_cast<std::uint64_t>(INT64_MAX)) {
      error = "the PT_LOAD segment of " + hex_address(address) + " has an impossible file offset";
      return std::nullopt;
    }
    return ElfPlace{ph.p_offset + into, ph.p_filesz - into};
  }
  error = "no PT_LOAD segment maps address " + hex_address(address) + " (" + std::to_string(loads) + " segments)";
  return std::nullopt;
}

std::optional<std::vector<KernelTableRow>> read_table_at(const ElfPartReader& read, std::uint64_t address,
                                                         std::string& error) {
  auto place = elf_place(read, address, error);
  if (!place) return std::nullopt;
  std::uint64_t want = (kMaxTableRows + 1) * kTableRowBytes;
  FileRead part = read(place->offset, static_cast<std::size_t>(std::min(want, place->available)));
  if (!part.ok()) {
    error = "cannot read " + hex_address(address) + " (" + part.error + ")";
    return std::nullopt;
  }
  return parse_table_rows(part.bytes, error);
}

std::string notes_build_id(std::string_view notes) {
  // Elf64_Nhdr: namesz, descsz, type; the name and the descriptor each padded to 4 bytes.
  std::size_t at = 0;
  for (int n = 0; n < 64 && at + 12 <= notes.size(); ++n) {
    std::uint64_t namesz = le32(notes, at), descsz = le32(notes, at + 4), type = le32(notes, at + 8);
    std::uint64_t name_at = at + 12, desc_at = name_at + ((namesz + 3) & ~3ull);
    std::uint64_t next = desc_at + ((descsz + 3) & ~3ull);
    if (next > notes.size()) break;
    if (type == NT_GNU_BUILD_ID && namesz == 4 && notes.substr(name_at, 4) == std::string_view("GNU\0", 4) &&
        descsz > 0 && descsz <= 64)
      return hex_bytes(notes.substr(desc_at, descsz));
    at = next;
  }
  return "";
}

std::string elf_build_id(const ElfPartReader& read) {
  std::string error;
  auto headers = program_headers(read, error);
  if (!headers) return "";
  for (const GElf_Phdr& ph : *headers) {
    if (ph.p_type != PT_NOTE || ph.p_offset > static_cast<std::uint64_t>(INT64_MAX)) continue;
    FileRead notes = read(ph.p_offset, static_cast<std::size_t>(std::min<std::uint64_t>(ph.p_filesz, 1 << 16)));
    if (!notes.ok()) continue;
    if (std::string id = notes_build_id(notes.bytes); !id.empty()) return id;
  }
  return "";
}

std::optional<std::uint64_t> find_symbol(std::string_view map_text, std::string_view symbol) {
  // "ffffffff82a3b5c0 r pci_p2pdma_whitelist" (kallsyms adds "\t[module]" to a module's symbols).
  for (std::size_t at = 0; at < map_text.size();) {
    std::size_t end = map_text.find('\n', at);
    if (end == std::string_view::npos) end = map_text.size();
    std::string_view line = map_text.substr(at, end - at);
    at = end + 1;
    std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 16 || line.size() < space + 3 ||
        line[space + 2] != ' ')
      continue;
    std::string_view name = line.substr(space + 3);
    name = name.substr(0, name.find('\t'));
    if (name != symbol) continue;
    std::uint64_t address = 0;
    for (char c : line.substr(0, space)) {
      int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0) return std::nullopt;
      address = address << 4 | static_cast<std::uint64_t>(digit);
    }
    return address;
  }
  return std::nullopt;
}

}  // namespace p2pcheck
