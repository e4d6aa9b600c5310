// Writing a CaptureSet: a deterministic tar (sorted members, fixed owners and times) into a
// temporary file beside FILE, renamed into place only when complete (capture.h).
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <sys/stat.h>
#include <vector>

#include "p2pcheck/capture/capture.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

struct Writer {
  archive* ar = archive_write_new();
  ~Writer() { archive_write_free(ar); }
};

void check(archive* ar, int rc, const std::string& file) {
  if (rc < ARCHIVE_WARN)
    throw Error(file, std::string("cannot write the capture: ") +
                          (archive_error_string(ar) ? archive_error_string(ar) : "libarchive error"));
}

// The directory FILE goes into: "." for a bare name, "/" for "/name".
std::string directory_of(const std::string& file) {
  size_t slash = file.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? std::string("/") : file.substr(0, slash);
}

[[noreturn]] void refuse(const CaptureOutput& output, const std::string& why) {
  throw UsageError("capture -o " + output.file + ": " + why);
}

// Refuses before anything is written: no directory, no write permission, an existing FILE.
// Returns the directory the temporary file goes into.
std::string check_output_target(const CaptureOutput& output) {
  if (output.file.empty()) throw UsageError("capture: -o FILE is required");
  std::string dir = directory_of(output.file);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) refuse(output, "directory " + dir + " does not exist");
  if (access(dir.c_str(), W_OK | X_OK) != 0) refuse(output, "cannot write into " + dir + ": " + std::strerror(errno));
  if (lstat(output.file.c_str(), &st) == 0 && !output.force) refuse(output, "file exists; pass --force to replace it");
  return dir;
}

// The filter for the compression FILE's name asks for (capture_compression_for). Returns its name.
std::string set_compression(archive* ar, const std::string& file) {
  std::string compression = capture_compression_for(file);
  if (compression == "gzip") {
    check(ar, archive_write_add_filter_gzip(ar), file);
    check(ar, archive_write_set_filter_option(ar, "gzip", "timestamp", nullptr), file);  // same input, same bytes
    check(ar, archive_write_set_filter_option(ar, "gzip", "compression-level", "9"), file);
  } else if (compression == "xz") {
    check(ar, archive_write_add_filter_xz(ar), file);
  } else if (compression == "zstd") {
    check(ar, archive_write_add_filter_zstd(ar), file);
    // zstd's own default. Level 9 made a 1,252-function capture 28% smaller (273 KB against 379
    // KB) but cost a third of the capture's CPU time, on the machine under test (bench/README.md).
    check(ar, archive_write_set_filter_option(ar, "zstd", "compression-level", "3"), file);
  }
  return compression;
}

using Member = std::pair<std::string_view, const CaptureEntry*>;  // no entry: an implied directory

bool by_path(const Member& a, const Member& b) { return a.first < b.first; }

// Adds every parent directory not given as a member, keeping `members` sorted. The paths below one
// directory sort next to each other, so a parent is new unless the path before shares it.
void add_implied_dirs(std::vector<Member>& members) {
  const std::size_t kept = members.size();
  std::vector<std::string_view> dirs{""};
  std::string_view before;
  for (const auto& [path, e] : members) {
    std::size_t same = std::mismatch(path.begin(), path.end(), before.begin(), before.end()).first - path.begin();
    for (size_t slash = path.find('/', 1); slash != std::string_view::npos; slash = path.find('/', slash + 1))
      if (slash >= same) dirs.push_back(path.substr(0, slash));
    before = path;
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  for (std::string_view d : dirs)
    if (!std::binary_search(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(kept), Member{d, nullptr},
                            by_path))
      members.emplace_back(d, nullptr);
  std::inplace_merge(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(kept), members.end(), by_path);
}

// One member's header and data, owned by root and dated `mtime` so the same input gives the same bytes.
void write_member(archive* ar, const Member& member, std::int64_t mtime, const std::string& file) {
  const auto& [path, e] = member;
  archive_entry* entry = archive_entry_new();
  std::string name = std::string(kCaptureTopFolder).append(path);
  archive_entry_set_pathname(entry, name.c_str());
  archive_entry_set_mtime(entry, mtime, 0);
  archive_entry_set_uid(entry, 0);
  archive_entry_set_gid(entry, 0);
  EntryKind kind = e ? e->kind : EntryKind::kDir;
  if (kind == EntryKind::kDir) {
    archive_entry_set_filetype(entry, AE_IFDIR);
    archive_entry_set_perm(entry, 0755);
  } else if (kind == EntryKind::kLink) {
    archive_entry_set_filetype(entry, AE_IFLNK);
    archive_entry_set_perm(entry, 0777);
    archive_entry_set_symlink(entry, e->data.c_str());
  } else {
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_size(entry, static_cast<la_int64_t>(e->data.size()));
  }
  int rc = archive_write_header(ar, entry);
  archive_entry_free(entry);
  check(ar, rc, file);
  if (kind == EntryKind::kFile && !e->data.empty() &&
      archive_write_data(ar, e->data.data(), e->data.size()) != static_cast<la_ssize_t>(e->data.size()))
    check(ar, ARCHIVE_FATAL, file);
}

// Members in sorted order, every directory listed before what it holds. Returns how many.
std::size_t write_members(archive* ar, const CaptureSet& set, const std::string& file) {
  // Views into the entries' paths, sorted: a fabric's capture has tens of thousands of members.
  CaptureEntry manifest{kManifestPath, EntryKind::kFile, json_text(set.manifest) + "\n"};
  std::vector<Member> members;
  members.reserve(set.entries.size() + 1);
  for (const auto& e : set.entries) members.emplace_back(e.path, &e);
  members.emplace_back(manifest.path, &manifest);
  std::stable_sort(members.begin(), members.end(), by_path);
  // The last given of a path wins (the manifest over any entry of that name).
  std::size_t kept = 0;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (i + 1 == members.size() || members[i + 1].first != members[i].first) members[kept++] = members[i];
  members.resize(kept);
  add_implied_dirs(members);
  for (const Member& member : members) write_member(ar, member, set.mtime, file);
  return members.size();
}

// The finished temporary file becomes FILE; without --force never over an existing one.
void move_into_place(const std::string& tmp, const CaptureOutput& output) {
  if (output.force) {
    if (rename(tmp.c_str(), output.file.c_str()) != 0)
      throw Error(output.file, std::string("cannot move the capture into place: ") + std::strerror(errno));
    return;
  }
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, output.file.c_str(), RENAME_NOREPLACE) == 0) return;
  int err = errno;
  if (err == EEXIST) refuse(output, "file exists; pass --force to replace it");
  // File systems without RENAME_NOREPLACE: link() refuses an existing name just as well.
  if ((err != EINVAL && err != ENOSYS) || link(tmp.c_str(), output.file.c_str()) != 0)
    throw Error(output.file,
                std::string("cannot move the capture into place: ") + std::strerror(errno == 0 ? err : errno));
  unlink(tmp.c_str());
}

}  // namespace

std::string capture_compression_for(const std::string& file) {
  if (ends_with(file, ".tar.zst") || ends_with(file, ".tzst")) return "zstd";
  if (ends_with(file, ".tar.gz") || ends_with(file, ".tgz")) return "gzip";
  if (ends_with(file, ".tar.xz") || ends_with(file, ".txz")) return "xz";
  if (ends_with(file, ".tar")) return "none";
  throw UsageError(file + ": a capture is a tar archive; name it .tar.zst (zstd), .tar.gz, .tar.xz or .tar");
}

CaptureWritten write_capture(const CaptureSet& set, const CaptureOutput& output) {
  CaptureWritten written;
  written.file = output.file;
  std::string dir = check_output_target(output);
  std::string tmp = dir + "/.p2pcheck-capture-XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0)
    throw Error(output.file, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  try {
    Writer w;
    archive_write_set_format_pax_restricted(w.ar);
    written.compression = set_compression(w.ar, output.file);
    check(w.ar, archive_write_open_fd(w.ar, fd), output.file);
    written.members = write_members(w.ar, set, output.file);
    check(w.ar, archive_write_close(w.ar), output.file);
    // mkostemp made it 0600; a capture is made to be handed on (the collecting user is often not
    // root), so it gets the mode any new file gets here: 0666 less the umask. --redact hides serials.
    const mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || fsync(fd) != 0)
      throw Error(output.file, std::string("cannot write the capture: ") + std::strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0) written.bytes = static_cast<std::uint64_t>(st.st_size);
    close(fd);
    fd = -1;
    move_into_place(tmp, output);
  } catch (...) {
    if (fd >= 0) close(fd);
    unlink(tmp.c_str());
    throw;
  }
  return written;
}

}  // namespace p2pcheck
