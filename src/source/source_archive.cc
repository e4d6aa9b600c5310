// Archive backend: a tar (optionally gzip/xz/zstd compressed) of a Linux root, read into memory.
// Nothing is unpacked to disk, so a hostile archive cannot write anywhere.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <sys/stat.h>

#include "p2pcheck/source/archive.h"
#include "p2pcheck/source/error.h"
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

// Reads every member of the opened archive `ar` (named `file` in messages) into memory.
LoadedArchive read_members(archive* ar, const std::string& file) {
  LoadedArchive loaded;
  // Everything the archive expands to in memory counts against the limits: member data, each hard
  // link's copy of its target (a 5 KB archive of links to one large file once reached 1.3 GB), and
  // a node's worth for every entry and link target.
  std::uint64_t total = 0;
  auto expand = [&](std::uint64_t bytes, const std::string& where) {
    total += bytes;
    if (total > kMaxArchiveBytes)
      throw Error(where, "archive expands beyond " + mib(kMaxArchiveBytes) + " in total; refusing (compression bomb?)");
    // Checked as we go, so a bomb is stopped after kBombCheckBytes, not after a gigabyte.
    std::uint64_t packed = static_cast<std::uint64_t>(std::max<la_int64_t>(archive_filter_bytes(ar, -1), 0));
    if (total > kBombCheckBytes && total > packed * kMaxExpansionRatio)
      throw Error(where, "archive expands more than " + std::to_string(kMaxExpansionRatio) +
                             " times its compressed size (" + mib(total) + " from " + std::to_string(packed >> 10) +
                             " KiB so far); refusing a compression bomb");
  };
  std::string last;  // the member before a broken header, so the message says where it broke
  archive_entry* entry = nullptr;
  for (;;) {
    int rc = archive_read_next_header(ar, &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN)
      throw Error(last.empty() ? file : file + ":" + last, std::string("broken or truncated archive") +
                                                               (last.empty() ? "" : " after this member") + ": " +
                                                               archive_error_text(ar));
    bool raw = archive_format(ar) == ARCHIVE_FORMAT_RAW;
    if (raw && archive_filter_count(ar) <= 1)
      throw Error(file, "not a recognised dump: neither a tar archive nor compressed text");
    const char* raw_name = archive_entry_pathname(entry);
    std::string member = raw ? "data" : raw_name ? raw_name : "";
    std::string name = clean_member_name(file, member);
    std::string where = file + ":" + member;
    last = member;
    if (name.empty()) continue;
    expand(kEntryBytes + name.size(), where);
    if (const char* hard = archive_entry_hardlink(entry)) {
      std::string target = clean_member_name(file, hard);
      const MemoryTree::Node* node = loaded.tree.find(target);
      if (!node) throw Error(where, "hard link to a member that is not earlier in the archive");
      expand(node->data.size(), where);
      MemoryTree::Node copy = *node;
      if (copy.kind == EntryKind::kFile)
        loaded.tree.add_file(std::move(name), std::move(copy.data));
      else if (copy.kind == EntryKind::kLink)
        loaded.tree.add_link(std::move(name), std::move(copy.data));
      else
        loaded.tree.add_dir(std::move(name));
      continue;
    }
    switch (raw ? AE_IFREG : archive_entry_filetype(entry)) {
      case AE_IFDIR: loaded.tree.add_dir(std::move(name)); break;
      case AE_IFLNK: {
        std::string target = archive_entry_symlink(entry) ? archive_entry_symlink(entry) : "";
        if (target.size() >= kMaxPathBytes)
          throw Error(where, "symlink target of " + std::to_string(target.size()) +
                                 " bytes; Linux link targets are shorter than " + std::to_string(kMaxPathBytes));
        expand(target.size(), where);
        loaded.tree.add_link(std::move(name), std::move(target));
        break;
      }
      case AE_IFREG: {
        la_int64_t size = archive_entry_size(entry);
        if (!raw && (size < 0 || static_cast<std::uint64_t>(size) > kMaxFileBytes))
          throw Error(
              where, "member is " + std::to_string(size) + " bytes; no captured file may exceed " + mib(kMaxFileBytes));
        std::string data;
        char buf[65536];
        for (;;) {
          la_ssize_t n = archive_read_data(ar, buf, sizeof buf);
          if (n < 0) throw Error(where, "cannot read member data: " + archive_error_text(ar));
          if (n == 0) break;
          data.append(buf, static_cast<size_t>(n));
          if (data.size() > kMaxFileBytes) throw Error(where, "member expands beyond " + mib(kMaxFileBytes));
          expand(static_cast<std::uint64_t>(n), where);
        }
        loaded.tree.add_file(std::move(name), std::move(data));
        break;
      }
      default:
        throw Error(where, "device node, fifo or socket in a dump; expected only files, directories and symlinks");
    }
    if (raw) {
      loaded.raw = true;
      break;
    }
  }
  return loaded;
}

// The decompressed bytes of an archive opened with libarchive's "raw" format, read on demand.
class Stream {
 public:
  explicit Stream(archive* ar) : ar_(ar) {}
  // The next `n` bytes (valid until the next call), or nullptr when the stream ends or fails first.
  const char* take(std::size_t n) {
    if (buf_.size() - pos_ < n) {
      buf_.erase(0, pos_);
      pos_ = 0;
      while (buf_.size() < n) {
        std::size_t had = buf_.size();
        buf_.resize(std::max<std::size_t>(n, had + (1 << 16)));
        la_ssize_t got = archive_read_data(ar_, buf_.data() + had, buf_.size() - had);
        buf_.resize(had + static_cast<std::size_t>(std::max<la_ssize_t>(got, 0)));
        if (got <= 0) return nullptr;
      }
    }
    pos_ += n;
    return buf_.data() + pos_ - n;
  }

 private:
  archive* ar_;
  std::string buf_;
  std::size_t pos_ = 0;
};

// Reading a tar header, what is not exactly as expected ends the plain reader (see read_plain_tar).
struct NotPlain {};

// A NUL-terminated header field; only ASCII, so no locale can read it differently.
std::string text_field(const char* h, std::size_t at, std::size_t len) {
  std::string_view field(h + at, len);
  field = field.substr(0, std::min(field.find('\0'), len));
  for (char c : field)
    if (static_cast<unsigned char>(c) >= 0x80) throw NotPlain{};
  return std::string(field);
}

// An octal number field: optional spaces, digits, then only spaces and NULs (as tar writes them).
std::uint64_t octal_field(const char* h, std::size_t at, std::size_t len) {
  std::size_t i = at, end = at + len;
  while (i < end && h[i] == ' ') ++i;
  std::uint64_t value = 0;
  std::size_t digits = 0;
  for (; i < end && h[i] >= '0' && h[i] <= '7'; ++i, ++digits)
    value = value * 8 + static_cast<std::uint64_t>(h[i] - '0');
  if (digits == 0 || digits > 21) throw NotPlain{};
  for (; i < end; ++i)
    if (h[i] != ' ' && h[i] != '\0') throw NotPlain{};
  return value;
}

// A pax extended header's records ("LEN key=value\n"): only the names matter here; the times and
// owners are ignored as libarchive's entries carry them unused; any other key is not plain.
void read_pax(std::string_view body, std::string& path, std::string& linkpath) {
  while (!body.empty()) {
    std::size_t space = body.find(' ');
    if (space == 0 || space > 10 || space == std::string_view::npos) throw NotPlain{};
    std::size_t len = 0;
    for (char c : body.substr(0, space)) {
      if (c < '0' || c > '9') throw NotPlain{};
      len = len * 10 + static_cast<std::size_t>(c - '0');
    }
    if (len <= space + 1 || len > body.size() || body[len - 1] != '\n') throw NotPlain{};
    std::string_view record = body.substr(space + 1, len - space - 2);
    std::size_t eq = record.find('=');
    if (eq == std::string_view::npos) throw NotPlain{};
    std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
    if (value.empty()) throw NotPlain{};
    for (char c : value)
      if (c == '\0' || static_cast<unsigned char>(c) >= 0x80) throw NotPlain{};
    if (key == "path")
      path = value;
    else if (key == "linkpath")
      linkpath = value;
    else if (key != "mtime" && key != "atime" && key != "ctime" && key != "uid" && key != "gid" && key != "uname" &&
             key != "gname")
      throw NotPlain{};
    body.remove_prefix(len);
  }
}

// The tar that captures are (POSIX pax or ustar, GNU tar's own format) read directly from the
// decompressed stream. libarchive's tar reader turns every file's name into wide characters on
// the way (mbrtowc per byte: 10% of a replay's time); this reader does not. Where an archive holds
// anything beyond plain files, directories and links with ASCII names and checksummed headers,
// or breaks a limit, it answers nullopt and libarchive's reader reads it instead, with its
// messages: either reader gives the same tree. Every limit of read_members is counted the same.
std::optional<LoadedArchive> read_plain_tar(archive* ar, const std::string& file) {
  archive_entry* entry = nullptr;
  if (archive_read_next_header(ar, &entry) != ARCHIVE_OK) return std::nullopt;
  Stream stream(ar);
  LoadedArchive loaded;
  std::uint64_t total = 0;
  auto expand = [&](std::uint64_t bytes) {
    total += bytes;
    std::uint64_t packed = static_cast<std::uint64_t>(std::max<la_int64_t>(archive_filter_bytes(ar, -1), 0));
    if (total > kMaxArchiveBytes || (total > kBombCheckBytes && total > packed * kMaxExpansionRatio)) throw NotPlain{};
  };
  // Bytes of an entry's data, read whole, with its padding to the next 512-byte block.
  auto data = [&](std::uint64_t size) {
    if (size > kMaxFileBytes) throw NotPlain{};
    std::uint64_t padded = (size + 511) / 512 * 512;
    const char* p = stream.take(static_cast<std::size_t>(padded));
    if (!p) throw NotPlain{};
    return std::string(p, static_cast<std::size_t>(size));
  };
  try {
    std::string long_name, long_link, pax_path, pax_link;
    bool have_long_name = false, have_long_link = false, have_pax = false;
    for (;;) {
      const char* h = stream.take(512);
      if (!h) throw NotPlain{};  // no end-of-archive block
      if (std::all_of(h, h + 512, [](char c) { return c == 0; })) break;
      std::uint64_t sum = 0;
      for (std::size_t i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
      if (sum != octal_field(h, 148, 8)) throw NotPlain{};
      bool posix = std::memcmp(h + 257,
                               "ustar\0"
                               "00",
                               8) == 0;
      if (!posix && std::memcmp(h + 257, "ustar  \0", 8) != 0) throw NotPlain{};
      char type = h[156];
      std::uint64_t size = octal_field(h, 124, 12);
      // Extensions that name the next entry: each at most once before it.
      if (type == 'x' || type == 'L' || type == 'K') {
        if ((type == 'x' && (have_pax || !posix)) || (type != 'x' && posix)) throw NotPlain{};
        bool& have = type == 'x' ? have_pax : type == 'L' ? have_long_name : have_long_link;
        if (have) throw NotPlain{};
        have = true;
        std::string body = data(size);
        if (type == 'x') {
          read_pax(body, pax_path, pax_link);
        } else {
          body.resize(std::min(body.find('\0'), body.size()));
          if (body.empty() ||
              std::any_of(body.begin(), body.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
            throw NotPlain{};
          (type == 'L' ? long_name : long_link) = std::move(body);
        }
        continue;
      }
      std::string member = text_field(h, 0, 100);
      if (posix) {
        std::string prefix = text_field(h, 345, 155);
        if (!prefix.empty()) member = prefix + (prefix.back() == '/' ? "" : "/") + member;
      }
      std::string link = text_field(h, 157, 100);
      if (!pax_path.empty()) member = std::move(pax_path);
      if (!pax_link.empty()) link = std::move(pax_link);
      if (have_long_name) member = std::move(long_name);
      if (have_long_link) link = std::move(long_link);
      pax_path.clear(), pax_link.clear(), long_name.clear(), long_link.clear();
      have_pax = have_long_name = have_long_link = false;
      // A regular file named "x/" is a directory to libarchive; other types with data are not plain.
      bool regular = type == '0' || type == '\0';
      if (member.empty() || (regular && member.back() == '/') || (!regular && size != 0)) throw NotPlain{};
      std::string name = clean_member_name(file, member);
      if (name.empty()) {
        if (regular) data(size);
        continue;
      }
      expand(kEntryBytes + name.size());
      if (type == '1') {
        const MemoryTree::Node* node = loaded.tree.find(clean_member_name(file, link));
        if (!node) throw NotPlain{};
        expand(node->data.size());
        MemoryTree::Node copy = *node;
        if (copy.kind == EntryKind::kFile)
          loaded.tree.add_file(std::move(name), std::move(copy.data));
        else if (copy.kind == EntryKind::kLink)
          loaded.tree.add_link(std::move(name), std::move(copy.data));
        else
          loaded.tree.add_dir(std::move(name));
      } else if (type == '5') {
        loaded.tree.add_dir(std::move(name));
      } else if (type == '2') {
        if (link.size() >= kMaxPathBytes) throw NotPlain{};
        expand(link.size());
        loaded.tree.add_link(std::move(name), std::move(link));
      } else if (regular) {
        std::string bytes = data(size);
        expand(bytes.size());
        loaded.tree.add_file(std::move(name), std::move(bytes));
      } else {
        throw NotPlain{};
      }
    }
  } catch (const NotPlain&) {
    return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  return loaded;
}

// Opens `ar` on the archive: a file, or bytes in memory.
using Open = std::function<int(archive*)>;

LoadedArchive load(const Open& open, const std::string& file, TarReader which) {
  if (which != TarReader::kLibarchive) {
    Reader plain;
    archive_read_support_filter_all(plain.ar);
    archive_read_support_format_raw(plain.ar);
    if (open(plain.ar) == ARCHIVE_OK)
      if (auto loaded = read_plain_tar(plain.ar, file)) return std::move(*loaded);
    if (which == TarReader::kPlainOnly) throw Error(file, "not a plain tar");
  }
  Reader reader;
  support_dump_formats(reader.ar);
  if (open(reader.ar) != ARCHIVE_OK) refuse_unopened(reader.ar, file);
  return read_members(reader.ar, file);
}

}  // namespace

LoadedArchive load_archive(const std::string& file) {
  struct stat st;
  if (stat(file.c_str(), &st) != 0) throw Error(file, std::string("cannot open dump: ") + std::strerror(errno));
  return load([&](archive* ar) { return archive_read_open_filename(ar, file.c_str(), 1 << 16); }, file,
              TarReader::kAny);
}

LoadedArchive load_archive_bytes(std::string_view bytes, const std::string& name, TarReader reader) {
  return load([&](archive* ar) { return archive_read_open_memory(ar, bytes.data(), bytes.size()); }, name, reader);
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
