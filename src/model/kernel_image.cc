// A kernel image before it boots (kernel_image.h): the x86 boot header, the compressed payload
// unpacked by libarchive with a cap on what it may grow to, the vmlinux ELF read at System.map's
// addresses. The file is hostile: every offset is checked against its size first.
#include "p2pcheck/model/kernel_image.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include "kernel_image_parts.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::uint32_t le(std::string_view b, std::size_t at, int bytes) {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

// "Linux version 6.12.118 (user@host) ..." -> "6.12.118".
std::string banner_release(std::string_view banner) {
  constexpr std::string_view kPrefix = "Linux version ";
  if (banner.substr(0, kPrefix.size()) != kPrefix) return "";
  banner.remove_prefix(kPrefix.size());
  std::string_view release = banner.substr(0, std::min(banner.find_first_of(" \n", 0), kMaxReleaseBytes));
  return std::string(release);
}

}  // namespace

std::string archive_text(archive* a) {
  const char* text = archive_error_string(a);
  return text ? text : "unreadable (libarchive gave no reason)";
}

std::string read_archive_member(archive* a, std::size_t cap, const std::string& what) {
  std::string data;
  char buf[65536];
  for (;;) {
    la_ssize_t n = archive_read_data(a, buf, sizeof buf);
    if (n < 0) throw Error(what, "cannot decompress: " + archive_text(a));
    if (n == 0) return data;
    if (data.size() + static_cast<std::size_t>(n) > cap)
      throw Error(what, "decompresses to more than " + mib(cap) + ": not a kernel's (a decompression bomb?)");
    data.append(buf, static_cast<std::size_t>(n));
  }
}

std::string decompress_bounded(std::string_view bytes, std::size_t cap, const std::string& file) {
  ArchivePtr a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_raw(a.get());
  archive_entry* entry = nullptr;
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK ||
      archive_read_next_header(a.get(), &entry) != ARCHIVE_OK)
    throw Error(file, "not a compressed kernel: " + archive_text(a.get()));
  if (archive_filter_count(a.get()) <= 1) throw Error(file, "not compressed with a method the kernel uses");
  return read_archive_member(a.get(), cap, file);
}

std::string bzimage_vmlinux(std::string_view bz, const std::string& file) {
  // Documentation/arch/x86/boot.rst: setup_sects at 0x1f1, "HdrS" at 0x202, protocol at 0x206,
  // payload_offset/payload_length (2.08+) at 0x248/0x24c, relative to the protected-mode code.
  if (bz.size() < 0x250 || bz.substr(0x202, 4) != "HdrS")
    throw Error(file, "not an x86 bzImage (no \"HdrS\" boot header at 0x202)");
  if (le(bz, 0x206, 2) < 0x208) throw Error(file, "boot protocol older than 2.08: no payload to read");
  std::size_t setup = le(bz, 0x1f1, 1);
  std::size_t start = ((setup == 0 ? 4 : setup) + 1) * 512 + le(bz, 0x248, 4);
  std::size_t length = le(bz, 0x24c, 4);
  if (start > bz.size() || length > bz.size() - start || length < 16)
    throw Error(file, "the payload (" + std::to_string(length) + " bytes at " + std::to_string(start) +
                          ") is outside the file: truncated?");
  std::string vmlinux;
  try {
    vmlinux = decompress_bounded(bz.substr(start, length), kMaxVmlinuxBytes, file);
  } catch (const Error&) {
    // Most methods are followed by the 4-byte size the build appends (scripts/Makefile.lib size_append).
    vmlinux = decompress_bounded(bz.substr(start, length - 4), kMaxVmlinuxBytes, file);
  }
  if (vmlinux.compare(0, 4,
                      "\x7f"
                      "ELF") != 0)
    throw Error(file, "the decompressed payload is not an ELF vmlinux");
  return vmlinux;
}

KernelTable vmlinux_table(const std::string& vmlinux, std::string_view system_map, const std::string& what) {
  KernelTable table;
  auto reader = [&](std::uint64_t offset, std::size_t length) -> FileRead {
    if (offset >= vmlinux.size()) return {ReadStatus::kOk, "", ""};
    return {ReadStatus::kOk, vmlinux.substr(static_cast<std::size_t>(offset), length), ""};
  };
  // The banner tells which kernel the System.map describes; a map of another build misses it.
  std::string error;
  if (auto banner = find_symbol(system_map, "linux_banner"))
    if (auto place = elf_place(reader, *banner, error))
      table.release = banner_release(reader(place->offset, std::min<std::uint64_t>(place->available, 256)).bytes);
  auto address = find_symbol(system_map, kTableSymbol);
  if (!address) {
    table.why_not = std::string(kTableSymbol) + " is not in its System.map: kernel built without CONFIG_PCI_P2PDMA";
    return table;
  }
  auto rows = read_table_at(reader, *address, error);
  if (!rows) {
    table.why_not = what + " at " + kTableSymbol + " (0x" + hex(*address) + " in System.map): " + error;
    return table;
  }
  table.origin = KernelTableOrigin::kKernelImage;
  table.rows = std::move(*rows);
  table.how = what + ": " + kTableSymbol + " at 0x" + hex(*address) + " (System.map)";
  table.build_id = elf_build_id(reader);
  return table;
}

namespace {

// The kernel config built in with CONFIG_IKCONFIG: gzip between "IKCFG_ST" and "IKCFG_ED".
void ikconfig(const std::string& vmlinux, KernelImage& k) {
  std::size_t st = vmlinux.find("IKCFG_ST\x1f\x8b");
  if (st == std::string::npos) return;
  std::size_t ed = vmlinux.find("IKCFG_ED", st);
  if (ed == std::string::npos || ed - st > (16u << 20)) return;
  try {
    k.config = parse_kernel_config(vmlinux.substr(st + 8, ed - st - 8), k.file + " (IKCONFIG)");
  } catch (const Error&) {
    // A broken built-in config leaves the config unknown; the table does not depend on it.
  }
}

}  // namespace

KernelImage image_from_parts(const std::string& file, KernelParts parts) {
  KernelImage k;
  k.file = file;
  bool elf = parts.image.compare(0, 4,
                                 "\x7f"
                                 "ELF") == 0;
  std::string vmlinux = elf ? std::move(parts.image) : bzimage_vmlinux(parts.image, parts.image_name);
  if (parts.system_map.empty()) {
    k.table.why_not = "no System.map beside " + printable(parts.image_name) + ": it gives the table's address";
  } else {
    k.table = vmlinux_table(vmlinux, parts.system_map, parts.image_name);
  }
  k.release = !k.table.release.empty() ? k.table.release : parts.release;
  if (!elf && k.release.empty() && parts.image.size() > 0x210) {
    std::size_t at = 0x200 + le(parts.image, 0x20e, 2);
    if (at < parts.image.size()) k.release = banner_release("Linux version " + parts.image.substr(at, 128));
  }
  if (!parse_kernel_version(k.release))
    throw Error(file, "cannot tell the kernel's release (no banner, no version in the boot header or file name)");
  k.table.release = k.release;
  if (!parts.config.empty())
    k.config = parse_kernel_config(std::move(parts.config), parts.config_name);
  else
    ikconfig(vmlinux, k);
  return k;
}

namespace {

// A file beside `dir/name` if it is there: "" otherwise (the error comes when it is needed).
std::string optional_file(const std::string& path, std::size_t cap) {
  if (read_input_head(path, 1).empty()) return "";
  return read_input_file(path, cap, "kernel file", "not a kernel's");
}

// vmlinuz-REL -> REL; bzImage, vmlinuz, vmlinux -> "".
std::string release_suffix(const std::string& name) {
  for (const char* stem : {"vmlinuz-", "vmlinux-", "bzImage-"})
    if (name.rfind(stem, 0) == 0) return name.substr(std::string(stem).size());
  return "";
}

}  // namespace

KernelParts parts_beside(const std::string& dir, const std::string& name) {
  KernelParts p;
  p.image_name = dir + "/" + name;
  p.image = read_input_file(p.image_name, kMaxVmlinuxBytes, "--what-if-kernel", "not a kernel image");
  p.release = release_suffix(name);
  std::string suffix = p.release.empty() ? "" : "-" + p.release;
  p.system_map = optional_file(dir + "/System.map" + suffix, kMaxSymbolMapBytes);
  if (p.system_map.empty() && !suffix.empty()) p.system_map = optional_file(dir + "/System.map", kMaxSymbolMapBytes);
  p.config_name = dir + "/config" + suffix;
  p.config = optional_file(p.config_name, 16u << 20);
  if (p.config.empty() && !suffix.empty()) p.config = optional_file(p.config_name = dir + "/config", 16u << 20);
  return p;
}

}  // namespace p2pcheck
