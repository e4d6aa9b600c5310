// Archive backend: a tar (optionally gzip/xz/zstd compressed) of a Linux root, read into memory.
// Nothing is unpacked to disk, so a hostile archive cannot write anywhere.
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "p2pcheck/error.h"
#include "p2pcheck/source.h"

namespace p2pcheck {
namespace {

struct Node {
  enum Kind { kFile, kDir, kLink } kind = kDir;
  std::string data;  // file bytes, or link target
};

// Member names must be plain relative paths: "./sys/x" and "sys/x" are fine; "/etc/x" and "a/../b" are not.
std::string clean_member_name(const std::string& archive, const std::string& raw) {
  if (raw.empty()) throw Error(archive + ":<empty name>", "archive member without a name");
  if (raw.front() == '/') throw Error(archive + ":" + raw, "absolute member name; expected a path relative to the captured root");
  std::string out;
  size_t i = 0;
  while (i <= raw.size()) {
    size_t j = raw.find('/', i);
    if (j == std::string::npos) j = raw.size();
    std::string part = raw.substr(i, j - i);
    if (part == "..") throw Error(archive + ":" + raw, "member name contains '..'; refusing to open it");
    if (!part.empty() && part != ".") out += "/" + part;
    i = j + 1;
  }
  return out;  // "" for the top itself
}

class ArchiveSource : public Source {
 public:
  explicit ArchiveSource(std::string file) : file_(std::move(file)) {
    load();
    choose_root();
  }

  std::string describe() const override { return "archive " + file_; }

 protected:
  NodeType node_type(const std::string& path) override {
    const Node* node = find(path);
    if (!node) return NodeType::kMissing;
    switch (node->kind) {
      case Node::kFile: return NodeType::kFile;
      case Node::kDir: return NodeType::kDir;
      case Node::kLink: return NodeType::kLink;
    }
    return NodeType::kOther;
  }
  std::string node_link(const std::string& path) override { return find(path)->data; }
  FileRead node_read(const std::string& path) override { return {ReadStatus::kOk, find(path)->data, ""}; }
  std::vector<std::string> node_list(const std::string& path) override {
    std::vector<std::string> names;
    auto it = children_.find(prefix_ + (path == "/" ? "" : path));
    if (it != children_.end()) names = it->second;
    return names;
  }

 private:
  const Node* find(const std::string& path) const {
    std::string key = prefix_ + (path == "/" ? "" : path);
    auto it = nodes_.find(key);
    return it == nodes_.end() ? nullptr : &it->second;
  }

  void add(const std::string& name, Node node) {
    // Parents exist implicitly even when the archive lists no entry for them.
    std::string path = name;
    while (!path.empty()) {
      size_t slash = path.rfind('/');
      std::string parent = path.substr(0, slash);
      std::string base = path.substr(slash + 1);
      auto& kids = children_[parent];
      if (std::find(kids.begin(), kids.end(), base) == kids.end()) kids.push_back(base);
      if (nodes_.count(parent) || parent.empty()) break;
      nodes_[parent] = Node{};
      path = parent;
    }
    // A later member replaces an earlier one of the same name, as tar extraction would.
    auto existing = nodes_.find(name);
    if (existing == nodes_.end()) {
      nodes_.emplace(name, std::move(node));
    } else if (!(existing->second.kind == Node::kDir && node.kind == Node::kDir)) {
      existing->second = std::move(node);
    }
  }

  void load() {
    struct stat st;
    if (stat(file_.c_str(), &st) != 0) throw Error(file_, std::string("cannot open dump: ") + std::strerror(errno));
    archive* ar = archive_read_new();
    archive_read_support_filter_all(ar);
    archive_read_support_format_tar(ar);
    archive_read_support_format_gnutar(ar);
    if (archive_read_open_filename(ar, file_.c_str(), 1 << 16) != ARCHIVE_OK) {
      std::string msg = archive_error_string(ar) ? archive_error_string(ar) : "unreadable";
      archive_read_free(ar);
      throw Error(file_, "not a readable tar archive: " + msg);
    }
    nodes_[""] = Node{};
    std::uint64_t total = 0;
    archive_entry* entry = nullptr;
    try {
      for (;;) {
        int rc = archive_read_next_header(ar, &entry);
        if (rc == ARCHIVE_EOF) break;
        if (rc < ARCHIVE_WARN)
          throw Error(file_, std::string("broken or truncated archive: ") + archive_error_string(ar));
        const char* raw_name = archive_entry_pathname(entry);
        std::string raw = raw_name ? raw_name : "";
        std::string name = clean_member_name(file_, raw);
        std::string where = file_ + ":" + raw;
        if (name.empty()) continue;
        if (const char* hard = archive_entry_hardlink(entry)) {
          std::string target = clean_member_name(file_, hard);
          auto it = nodes_.find(target);
          if (it == nodes_.end()) throw Error(where, "hard link to a member that is not earlier in the archive");
          add(name, it->second);
          continue;
        }
        switch (archive_entry_filetype(entry)) {
          case AE_IFDIR: add(name, Node{}); break;
          case AE_IFLNK: {
            const char* target = archive_entry_symlink(entry);
            add(name, Node{Node::kLink, target ? target : ""});
            break;
          }
          case AE_IFREG: {
            la_int64_t size = archive_entry_size(entry);
            if (size < 0 || static_cast<std::uint64_t>(size) > kMaxFileBytes)
              throw Error(where, "member is " + std::to_string(size) + " bytes; no captured file may exceed " +
                                     std::to_string(kMaxFileBytes >> 20) + " MiB");
            std::string data;
            char buf[65536];
            for (;;) {
              la_ssize_t n = archive_read_data(ar, buf, sizeof buf);
              if (n < 0) throw Error(where, std::string("cannot read member data: ") + archive_error_string(ar));
              if (n == 0) break;
              data.append(buf, static_cast<size_t>(n));
              total += static_cast<std::uint64_t>(n);
              if (data.size() > kMaxFileBytes)
                throw Error(where, "member expands beyond " + std::to_string(kMaxFileBytes >> 20) + " MiB");
              if (total > kMaxArchiveBytes)
                throw Error(where, "archive expands beyond " + std::to_string(kMaxArchiveBytes >> 20) +
                                       " MiB in total; refusing (compression bomb?)");
            }
            add(name, Node{Node::kFile, std::move(data)});
            break;
          }
          default:
            throw Error(where, "device node, fifo or socket in a dump; expected only files, directories and symlinks");
        }
      }
    } catch (...) {
      archive_read_free(ar);
      throw;
    }
    archive_read_free(ar);
  }

  // A dump holds the root at its top, or inside one top-level folder (tar czf x.tgz capture-host/).
  void choose_root() {
    if (nodes_.count("/sys")) return;
    const auto& top = children_[""];
    if (top.size() == 1 && nodes_.count("/" + top[0] + "/sys")) {
      prefix_ = "/" + top[0];
      return;
    }
    throw Error(file_, "no sys/ directory at the top of the archive or inside its single top folder; "
                       "expected a capture of a Linux root");
  }

  std::string file_;
  std::string prefix_;  // archive path of the captured root ("" or "/topdir")
  std::unordered_map<std::string, Node> nodes_;
  std::unordered_map<std::string, std::vector<std::string>> children_;
};

bool starts_with(const std::string& bytes, const char* magic, size_t len, size_t offset = 0) {
  return bytes.size() >= offset + len && std::memcmp(bytes.data() + offset, magic, len) == 0;
}

}  // namespace

std::unique_ptr<Source> open_archive_source(const std::string& file) { return std::make_unique<ArchiveSource>(file); }

std::unique_ptr<Source> open_dump_source(const std::string& file) {
  struct stat st;
  if (stat(file.c_str(), &st) != 0) throw Error(file, std::string("cannot open dump: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return open_tree_source(file);
  std::ifstream in(file, std::ios::binary);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  bool compressed = starts_with(head, "\x1f\x8b", 2) || starts_with(head, "\xfd" "7zXZ\0", 6) ||
                    starts_with(head, "\x28\xb5\x2f\xfd", 4) || starts_with(head, "BZh", 3);
  bool tar = starts_with(head, "ustar", 5, 257);
  if (compressed || tar) return open_archive_source(file);
  throw Error(file, "not a recognised dump: expected a tar archive (.tar, .tar.gz, .tar.xz, .tar.zst) of a "
                    "captured Linux root, or a directory");
}

}  // namespace p2pcheck
