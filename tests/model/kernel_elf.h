// Crafted kernel bytes for the kernel-table tests: an ELF with PT_LOAD segments (a /proc/kcore or a
// vmlinux), pci_p2pdma_whitelist[] rows, ELF notes with a build id, compression through libarchive.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "p2pcheck/model/kernel_table.h"

namespace p2pcheck::test {

struct Segment {
  std::uint64_t vaddr;
  std::string data;
  std::uint32_t type = PT_LOAD;
};

// A 64-bit little-endian ELF holding `segments` after its headers, in order.
inline std::string make_elf(const std::vector<Segment>& segments, std::uint16_t type = ET_CORE) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = type;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof eh;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = static_cast<std::uint16_t>(segments.size());
  std::string out(reinterpret_cast<const char*>(&eh), sizeof eh);
  std::uint64_t offset = sizeof eh + segments.size() * sizeof(Elf64_Phdr);
  for (const Segment& s : segments) {
    Elf64_Phdr ph{};
    ph.p_type = s.type;
    ph.p_offset = offset;
    ph.p_vaddr = s.vaddr;
    ph.p_filesz = ph.p_memsz = s.data.size();
    out.append(reinterpret_cast<const char*>(&ph), sizeof ph);
    offset += s.data.size();
  }
  for (const Segment& s : segments) out += s.data;
  return out;
}

inline std::string table_bytes(const std::vector<KernelTableRow>& rows, bool zero_row = true) {
  std::string out;
  auto put = [&out](std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  for (const KernelTableRow& r : rows) put(r.vendor, 2), put(r.device, 2), put(r.flags, 4);
  if (zero_row) out.append(8, '\0');
  return out;
}

// ELF notes holding one NT_GNU_BUILD_ID, as /sys/kernel/notes shows them.
inline std::string build_id_notes(const std::string& id) {
  std::string out;
  auto put32 = [&out](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  put32(4), put32(static_cast<std::uint32_t>(id.size())), put32(NT_GNU_BUILD_ID);
  out.append("GNU\0", 4);
  out += id;
  out.append((4 - id.size() % 4) % 4, '\0');
  return out;
}

// `data` compressed by libarchive's filter `filter` (ARCHIVE_FILTER_GZIP, _XZ, _ZSTD), no container.
inline std::string compress(const std::string& data, int filter) {
  std::vector<char> buf(data.size() + (1 << 20));
  std::size_t used = 0;
  archive* a = archive_write_new();
  archive_write_add_filter(a, filter);
  archive_write_set_format_raw(a);
  archive_write_set_bytes_in_last_block(a, 1);
  archive_write_open_memory(a, buf.data(), buf.size(), &used);
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "data");
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
  archive_write_header(a, e);
  archive_write_data(a, data.data(), data.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  return std::string(buf.data(), used);
}

// An x86 bzImage: one setup sector, the boot header, the payload (with the 4-byte size the build
// appends), the version string.
inline std::string make_bzimage(const std::string& payload, const std::string& version) {
  std::string bz(1024, '\0');
  bz[0x1f1] = 1;  // setup_sects: the protected-mode code starts at (1 + 1) * 512
  bz.replace(0x202, 4, "HdrS");
  bz[0x206] = 0x0f, bz[0x207] = 0x02;  // protocol 2.15
  std::uint16_t version_at = 0x300 - 0x200;
  bz[0x20e] = static_cast<char>(version_at), bz[0x20f] = static_cast<char>(version_at >> 8);
  bz.replace(0x300, version.size() + 1, version + std::string(1, '\0'));
  std::uint32_t length = static_cast<std::uint32_t>(payload.size() + 4);
  for (int i = 0; i < 4; ++i) bz[0x24c + i] = static_cast<char>(length >> (8 * i));  // payload_offset 0
  bz += payload;
  bz.append(4, '\x01');  // size_append
  return bz;
}

}  // namespace p2pcheck::test
