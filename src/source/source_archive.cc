// Archive backend: a tar (optionally gzip/xz/zstd compressed) of a Linux root, read into memory.
// Nothing is unpacked to disk, so a hostile archive cannot write anywhere.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cstring>
#include <sys/stat.h>

#include "p2pcheck/source/archive.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {
namespace {

// Member names must be plain relative paths: "./sys/x" and "sys/x" are fine; "/etc/x" and "a/../b" are not.
std::string clean_member_name(const std::string& archive, const std::string& raw) {
  if (raw.empty()) throw Error(archive + ":<empty name>", "archive member without a name");
  // No file on Linux has a longer path, and building a tree from one costs its length squared.
  if (raw.size() >= kMaxPathBytes)
    throw Error(archive + ":" + raw.substr(0, 100) + "...", "member name of " + std::to_string(raw.size()) +
                                                                " bytes; Linux paths are shorter than " +
                                                                std::to_string(kMaxPathBytes));
  if (raw.front() == '/')
    throw Error(archive + ":" + raw, "absolute member name; expected a path relative to the captured root");
  std::string out;
  out.reserve(raw.size() + 1);
  std::string_view name = raw;
  size_t i = 0;
  while (i <= name.size()) {
    size_t j = name.find('/', i);
    if (j == std::string_view::npos) j = name.size();
    std::string_view part = name.substr(i, j - i);
    if (part == "..") throw Error(archive + ":" + raw, "member name contains '..'; refusing to open it");
    if (!part.empty() && part != ".") {
      out += '/';
      out += part;
    }
    i = j + 1;
  }
  return out;  // "" for the top itself
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Owns the libarchive handle so every throw frees it.
struct Reader {
  archive* ar = archive_read_new();
  ~Reader() { archive_read_free(ar); }
};

void support_dump_formats(archive* ar) {
  archive_read_support_filter_all(ar);
  archive_read_support_format_tar(ar);
  archive_read_support_format_gnutar(ar);
  // Bids last: only a compressed stream that is no tar comes out as "raw" (lspci.txt.gz).
  archive_read_support_format_raw(ar);
}

// libarchive's message for the last failure; it has none for some (a truncated xz block's read
// returned ARCHIVE_FATAL with a null string, and appending that null crashed on fuzzed input).
std::string archive_error_text(archive* ar) {
  const char* text = archive_error_string(ar);
  return text ? text : "unreadable (libarchive gave no reason)";
}

void refuse_unopened(archive* ar, const std::string& file) {
  throw Error(file, "not a readable tar archive: " + archive_error_text(ar));
}

// One pass over an opened archive `ar` (named `file` in messages), reading every member into memory.
class MemberReader {
 public:
  MemberReader(archive* ar, const std::string& file) : ar_(ar), file_(file) {}
  LoadedArchive read();

 private:
  // archive:member, for a message about the member read last; made only when one is thrown.
  std::string where() const { return file_ + ":" + last_; }
  void expand(std::uint64_t bytes);
  void copy_hard_link(std::string name, const char* hard);
  void add_symlink(std::string name, const char* target_text);
  std::string read_data(archive_entry* entry, bool raw);

  archive* ar_;
  const std::string& file_;
  LoadedArchive loaded_;
  // Everything the archive expands to in memory counts against the limits: member data, each hard
  // link's copy of its target (a 5 KB archive of links to one large file once reached 1.3 GB), and
  // a node's worth for every entry and link target.
  std::uint64_t total_ = 0;
  // The member read last (kept across headers so a broken one is placed after it): one buffer
  // for every name, as an archive has tens of thousands of members.
  std::string last_;
};

void MemberReader::expand(std::uint64_t bytes) {
  total_ += bytes;
  if (total_ > kMaxArchiveBytes)
    throw Error(where(), "archive expands beyond " + mib(kMaxArchiveBytes) + " in total; refusing (compression bomb?)");
  // Checked as we go, so a bomb is stopped after kBombCheckBytes, not after a gigabyte.
  std::uint64_t packed = static_cast<std::uint64_t>(std::max<la_int64_t>(archive_filter_bytes(ar_, -1), 0));
  if (total_ > kBombCheckBytes && total_ > packed * kMaxExpansionRatio)
    throw Error(where(), "archive expands more than " + std::to_string(kMaxExpansionRatio) +
                             " times its compressed size (" + mib(total_) + " from " + std::to_string(packed >> 10) +
                             " KiB so far); refusing a compression bomb");
}

void MemberReader::copy_hard_link(std::string name, const char* hard) {
  std::string target = clean_member_name(file_, hard);
  const MemoryTree::Node* node = loaded_.tree.find(target);
  if (!node) throw Error(where(), "hard link to a member that is not earlier in the archive");
  expand(node->data.size());
  MemoryTree::Node copy = *node;
  if (copy.kind == EntryKind::kFile)
    loaded_.tree.add_file(std::move(name), std::move(copy.data));
  else if (copy.kind == EntryKind::kLink)
    loaded_.tree.add_link(std::move(name), std::move(copy.data));
  else
    loaded_.tree.add_dir(std::move(name));
}

void MemberReader::add_symlink(std::string name, const char* target_text) {
  std::string target = target_text ? target_text : "";
  if (target.size() >= kMaxPathBytes)
    throw Error(where(), "symlink target of " + std::to_string(target.size()) +
                             " bytes; Linux link targets are shorter than " + std::to_string(kMaxPathBytes));
  expand(target.size());
  loaded_.tree.add_link(std::move(name), std::move(target));
}

// The current member's bytes. A `raw` one (compressed text, no tar) has no header giving its size.
std::string MemberReader::read_data(archive_entry* entry, bool raw) {
  la_int64_t size = archive_entry_size(entry);
  if (!raw && (size < 0 || static_cast<std::uint64_t>(size) > kMaxFileBytes))
    throw Error(where(),
                "member is " + std::to_string(size) + " bytes; no captured file may exceed " + mib(kMaxFileBytes));
  std::string data;
  if (!raw) data.reserve(static_cast<std::size_t>(size));  // its header says how much comes
  char buf[65536];
  for (;;) {
    la_ssize_t n = archive_read_data(ar_, buf, sizeof buf);
    if (n < 0) throw Error(where(), "cannot read member data: " + archive_error_text(ar_));
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > kMaxFileBytes) throw Error(where(), "member expands beyond " + mib(kMaxFileBytes));
    expand(static_cast<std::uint64_t>(n));
  }
  return data;
}

LoadedArchive MemberReader::read() {
  archive_entry* entry = nullptr;
  for (;;) {
    int rc = archive_read_next_header(ar_, &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN)
      throw Error(last_.empty() ? file_ : where(), std::string("broken or truncated archive") +
                                                       (last_.empty() ? "" : " after this member") + ": " +
                                                       archive_error_text(ar_));
    bool raw = archive_format(ar_) == ARCHIVE_FORMAT_RAW;
    if (raw && archive_filter_count(ar_) <= 1)
      throw Error(file_, "not a recognised dump: neither a tar archive nor compressed text");
    const char* raw_name = archive_entry_pathname(entry);
    last_.assign(raw ? "data" : raw_name ? raw_name : "");
    std::string name = clean_member_name(file_, last_);
    if (name.empty()) continue;
    expand(kEntryBytes + name.size());
    if (const char* hard = archive_entry_hardlink(entry)) {
      copy_hard_link(std::move(name), hard);
      continue;
    }
    switch (raw ? AE_IFREG : archive_entry_filetype(entry)) {
      case AE_IFDIR: loaded_.tree.add_dir(std::move(name)); break;
      case AE_IFLNK: add_symlink(std::move(name), archive_entry_symlink(entry)); break;
      case AE_IFREG: {
        std::string data = read_data(entry, raw);
        loaded_.tree.add_file(std::move(name), std::move(data));
        break;
      }
      default:
        throw Error(where(), "device node, fifo or socket in a dump; expected only files, directories and symlinks");
    }
    if (raw) {
      loaded_.raw = true;
      break;
    }
  }
  return std::move(loaded_);
}

// Reads every member of the opened archive `ar` (named `file` in messages) into memory.
LoadedArchive read_members(archive* ar, const std::string& file) { return MemberReader(ar, file).read(); }

}  // namespace

LoadedArchive load_archive(const std::string& file) {
  // Through a descriptor checked to be a regular file: libarchive would block on a FIFO's open.
  Fd fd = open_input_file(file, "dump");
  Reader reader;
  support_dump_formats(reader.ar);
  if (archive_read_open_fd(reader.ar, fd.get(), 1 << 16) != ARCHIVE_OK) refuse_unopened(reader.ar, file);
  return read_members(reader.ar, file);
}

LoadedArchive load_archive_bytes(std::string_view bytes, const std::string& name) {
  Reader reader;
  support_dump_formats(reader.ar);
  if (archive_read_open_memory(reader.ar, bytes.data(), bytes.size()) != ARCHIVE_OK) refuse_unopened(reader.ar, name);
  return read_members(reader.ar, name);
}

std::unique_ptr<Source> open_archive_source(const std::string& file) {
  auto loaded = load_archive(file);
  if (loaded.raw) throw Error(file, "a compressed file, not a tar archive of a captured Linux root");
  // A dump holds the root at its top, or inside one top-level folder (tar czf x.tgz capture-host/).
  const MemoryTree& tree = loaded.tree;
  std::string prefix;
  if (!tree.find("/sys")) {
    auto top = tree.children("/");
    if (top.size() == 1 && tree.find("/" + top[0] + "/sys"))
      prefix = "/" + top[0];
    else
      throw Error(file,
                  "no sys/ directory at the top of the archive or inside its single top folder; "
                  "expected a capture of a Linux root");
  }
  return open_memory_source(std::move(loaded.tree).subtree(prefix), "archive " + file);
}

}  // namespace p2pcheck
