// What --what-if-kernel FILE names: an image (with System.map beside it), a directory holding one
// (/boot, /lib/modules/REL, a build's output), or a kernel .deb/.rpm read by libarchive without
// unpacking it: a .deb's data.tar is streamed from inside the ar, an .rpm's cpio payload directly.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>

#include <map>
#include <memory>
#include <set>
#include <sys/stat.h>

#include "kernel_image_parts.h"
#include "p2pcheck/model/kernel_image.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// At most this many members are looked at (a kernel package with its modules: ~6,000).
constexpr std::size_t kMaxMembers = 200000;

ArchivePtr new_reader() {
  ArchivePtr a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_ar(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_gnutar(a.get());
  archive_read_support_format_cpio(a.get());
  return a;
}

// The kernel files among a package's members, by release: boot/vmlinuz-REL, boot/System.map-REL,
// boot/config-REL (Debian, SUSE) or lib/modules/REL/{vmlinuz,System.map,config} (RHEL, Fedora).
struct Found {
  std::map<std::string, KernelParts> by_release;
};

void take_member(archive* a, const std::string& file, std::string name, Found& found) {
  if (name.rfind("./", 0) == 0) name.erase(0, 2);
  if (!name.empty() && name[0] == '/') name.erase(0, 1);
  std::string release, kind;
  std::size_t slash = name.rfind('/');
  std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  std::string dir = slash == std::string::npos ? "" : name.substr(0, slash);
  if (dir == "boot" || dir == "usr/lib/linux") {
    for (const char* stem : {"vmlinuz-", "vmlinux-", "System.map-", "config-"})
      if (base.rfind(stem, 0) == 0) kind = stem, release = base.substr(kind.size());
  } else if (dir.rfind("lib/modules/", 0) == 0 || dir.rfind("usr/lib/modules/", 0) == 0) {
    if (base == "vmlinuz" || base == "System.map" || base == "config") kind = base + "-", release = basename(dir);
  }
  if (kind.empty() || release.empty() || release.size() > kMaxReleaseBytes) return;
  KernelParts& p = found.by_release[release];
  p.release = release;
  std::string what = file + ":" + name;
  if (kind == "vmlinuz-" || kind == "vmlinux-") {
    p.image = read_archive_member(a, kMaxVmlinuxBytes, what);
    p.image_name = what;
  } else if (kind == "System.map-") {
    p.system_map = read_archive_member(a, kMaxSymbolMapBytes, what);
  } else {
    p.config = read_archive_member(a, 16u << 20, what);
    p.config_name = what;
  }
}

struct Nested {
  archive* outer;
  char buf[65536];
};

la_ssize_t nested_read(archive*, void* data, const void** out) {
  auto* n = static_cast<Nested*>(data);
  *out = n->buf;
  return archive_read_data(n->outer, n->buf, sizeof n->buf);
}

void scan(archive* a, const std::string& file, Found& found, int depth);

// A .deb's data.tar.*: opened as an archive streamed out of the ar member.
void scan_nested(archive* outer, const std::string& file, Found& found, int depth) {
  Nested n{outer, {}};
  ArchivePtr inner = new_reader();
  if (archive_read_open(inner.get(), &n, nullptr, nested_read, nullptr) != ARCHIVE_OK)
    throw Error(file, "cannot read its data archive: " + archive_text(inner.get()));
  scan(inner.get(), file, found, depth + 1);
}

void scan(archive* a, const std::string& file, Found& found, int depth) {
  archive_entry* entry = nullptr;
  for (std::size_t members = 0;; ++members) {
    int rc = archive_read_next_header(a, &entry);
    if (rc == ARCHIVE_EOF) return;
    if (rc < ARCHIVE_WARN) throw Error(file, "broken or truncated package: " + archive_text(a));
    if (members > kMaxMembers)
      throw Error(file, "more than " + std::to_string(kMaxMembers) + " members: not a kernel package");
    const char* raw = archive_entry_pathname(entry);
    std::string name = raw ? raw : "";
    if (depth == 0 && name.rfind("data.tar", 0) == 0) {
      scan_nested(a, file + ":" + name, found, depth);
    } else if (archive_entry_filetype(entry) == AE_IFREG) {
      take_member(a, file, name, found);
    }
  }
}

KernelImage read_package(const std::string& file) {
  Fd fd = open_input_file(file, "--what-if-kernel");
  ArchivePtr a = new_reader();
  // An .rpm is its header, then a compressed cpio: libarchive's rpm filter strips the header.
  archive_read_support_filter_rpm(a.get());
  if (archive_read_open_fd(a.get(), fd.get(), 1 << 16) != ARCHIVE_OK)
    throw Error(file, "not a readable package: " + archive_text(a.get()));
  Found found;
  scan(a.get(), file, found, 0);
  std::vector<std::string> complete;
  for (auto& [release, parts] : found.by_release)
    if (!parts.image.empty()) complete.push_back(release);
  if (complete.empty())
    throw Error(file, "no kernel image in this package (expected boot/vmlinuz-REL or lib/modules/REL/vmlinuz)");
  if (complete.size() > 1) throw Error(file, "several kernels in this package: " + join(complete, ", "));
  return image_from_parts(file, std::move(found.by_release[complete.front()]));
}

KernelImage read_directory(const std::string& dir) {
  auto names = list_names(Fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
  if (!names) throw Error(dir, "cannot read directory");
  std::set<std::string> have(names->begin(), names->end());
  for (const char* plain : {"vmlinuz", "bzImage", "vmlinux"})
    if (have.count(plain) && have.count("System.map")) return image_from_parts(dir, parts_beside(dir, plain));
  std::vector<std::string> releases;
  for (const std::string& name : have)
    if (name.rfind("vmlinuz-", 0) == 0 && have.count("System.map-" + name.substr(8)))
      releases.push_back(name.substr(8));
  if (releases.size() == 1) return image_from_parts(dir, parts_beside(dir, "vmlinuz-" + releases.front()));
  if (releases.empty())
    throw Error(dir,
                "no kernel here: expected vmlinuz (or bzImage, vmlinux) with System.map, or vmlinuz-REL with "
                "System.map-REL");
  throw Error(dir, "several kernels here (" + join(releases, ", ") + "): name one, e.g. " + dir + "/vmlinuz-" +
                       releases.front());
}

}  // namespace

bool names_kernel_image(const std::string& value) {
  if (value.find('/') != std::string::npos) return true;
  struct stat st;
  return stat(value.c_str(), &st) == 0;
}

KernelImage read_kernel_image(const std::string& path) {
  if (input_type(path, "--what-if-kernel") == InputType::kDirectory) return read_directory(path);
  std::string head = read_input_head(path, 0x210);
  if (head.rfind("!<arch>\n", 0) == 0 || head.rfind("\xed\xab\xee\xdb", 0) == 0) return read_package(path);
  bool elf = head.rfind(
                 "\x7f"
                 "ELF",
                 0) == 0;
  bool bz = head.size() >= 0x206 && head.compare(0x202, 4, "HdrS") == 0;
  if (!elf && !bz)
    throw Error(path,
                "not a kernel image or package: expected an x86 bzImage/vmlinuz or a vmlinux (with System.map "
                "beside it), a .deb or .rpm, or a directory such as /boot (other architectures' compressed "
                "images: give their vmlinux)");
  std::size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return image_from_parts(path, parts_beside(dir, path.substr(slash == std::string::npos ? 0 : slash + 1)));
}

}  // namespace p2pcheck
