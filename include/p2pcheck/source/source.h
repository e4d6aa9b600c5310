// The one narrow interface through which every byte of machine state is read.
//
// A Source is a read-only view of a Linux root (/sys, /proc, /boot, /etc, /lib/modules): the running
// machine, a captured directory tree, or a tar archive of one. Paths are absolute inside that root
// ("/sys/bus/pci/devices"); symlinks are resolved inside the root, the way a chroot would, and a link
// that climbs out of it is an error naming the link. Nothing else in p2pcheck opens machine files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace p2pcheck {

enum class ReadStatus {
  kOk,       // bytes holds the content
  kMissing,  // no such file (absent is a fact, e.g. no p2pmem/ directory)
  kDenied,   // exists but this reader may not read it (not root): unknown, not absent
  kFailed,   // exists but reading failed (I/O error, a sysfs attribute that refuses reads)
  // Not there because the source's format cannot carry it (drivers in an lspci dump, mounts in a
  // udev database, anything in a plan): unknown, never absent. `error` is NotCarried::phrase.
  kNotCarried,
};

struct FileRead {
  ReadStatus status = ReadStatus::kMissing;
  std::string bytes;
  std::string error;  // for kDenied / kFailed: what the OS or archive said

  bool ok() const { return status == ReadStatus::kOk; }
};

// What a source's format cannot carry, declared by whoever built it (an import, a plan): a file
// missing in one of these places reads as kNotCarried ("not in this lspci output"), not as absent.
struct NotCarried {
  std::string format;              // "lspci", "udev", "hwloc", "sosreport", "plan"
  std::string phrase;              // "not in this lspci output", "not in a plan"
  std::vector<std::string> paths;  // absolute patterns: "*" is one path component, "**" (at most one) any number
  // Registers are named below their function's config file (".../config/acs", "/rebar",
  // "/sriov"): a config image made without them leaves them unknown (model/topology.cc).
  bool empty() const { return paths.empty(); }
  // Whether `path` (absolute, as asked or canonical) is at or below one of `paths`.
  bool covers(std::string_view path) const;
};
// A pattern NotCarried::paths accepts: absolute, at most one "**", bounded (patterns can come from a dump).
bool valid_not_carried_pattern(std::string_view pattern);

// What kind of node a recording source found at a path (capture stores each as that kind).
enum class EntryKind { kFile, kDir, kLink, kOther };

struct RecordedEntry {
  EntryKind kind = EntryKind::kFile;
  std::string link_target;  // for kLink
};

// Reads a replay must answer as the original machine did (denied, failed, not captured), by
// canonical path. Hashed: every read of a replay looks itself up here.
using FailureMap = std::unordered_map<std::string, FileRead>;

// What a source was asked, for the read-once rule and for capture (which stores exactly these).
struct AccessLog {
  // Counted in the source's path tree as it goes, and written out here when access_log() is asked:
  // keyed by canonical path, they cost a hash of the whole path and an allocation on every read.
  std::unordered_map<std::string, int> file_reads;              // canonical path -> times read
  std::unordered_map<std::string, int> dir_lists;               // canonical path -> times listed
  std::unordered_map<std::string, std::string> links_followed;  // canonical link path -> its target text

  // Filled only while recording (Source::set_recording), so capture can store what the analysis
  // saw rather than read the machine a second time: the first answer to each read, every
  // directory listing with the kind of each entry, and every path resolve() found.
  std::map<std::string, FileRead> contents;
  std::map<std::string, std::map<std::string, RecordedEntry>> listings;
  std::map<std::string, EntryKind> found;
};

class Source {
 public:
  virtual ~Source() = default;

  // Where the bytes come from, for reports: "live /", "tree DIR", "archive FILE".
  virtual std::string describe() const = 0;
  // True only for the running machine; live-only checks (kernel module, DMA) look at this.
  virtual bool is_live() const { return false; }

  // Reads a whole file. Missing, denied and failed reads are results, not exceptions; an escaping
  // link, a link loop or a file larger than the source's cap throws Error.
  FileRead read(std::string_view path);
  // Up to `length` bytes of a file from `offset` (/proc/kcore, whose size is the address space;
  // /proc/kallsyms, read in parts). Fewer at its end. Not recorded for capture: the caller stores
  // what it made of the bytes (live/kernel_table.json), never a copy of kernel memory.
  FileRead read_part(std::string_view path, std::uint64_t offset, std::size_t length);
  // Sorted entry names of a directory; empty when it does not exist.
  std::vector<std::string> list(std::string_view path);
  // The canonical path (no links, no "..") or nullopt when some component does not exist.
  std::optional<std::string> resolve(std::string_view path);
  // resolve() of a path the caller expects to be a directory (a device's link, /sys/block/NAME):
  // the same answer whatever it turns out to be, in fewer system calls on a tree (the directory
  // is opened to look at it, and its reads go through that descriptor).
  std::optional<std::string> resolve_directory(std::string_view path);
  // The text of the symlink at `path` itself (parents resolved), or nullopt if it is not a link.
  std::optional<std::string> link_target(std::string_view path);
  bool exists(std::string_view path) { return resolve(path).has_value(); }

  // What this source's format cannot carry (empty for a live machine, a tree, a capture of one).
  const NotCarried& not_carried() const { return not_carried_; }
  void set_not_carried(NotCarried not_carried) { not_carried_ = std::move(not_carried); }
  // The phrase ("not in this lspci output") when `path` does not exist here because the format
  // cannot carry it; nullopt when it exists or its absence is a fact. For read steps that list
  // directories or follow links, where no FileRead carries the status.
  std::optional<std::string> not_carried(std::string_view path);

  // Valid until the next call on this source.
  const AccessLog& access_log();

  // Capture: keep what every read, listing and lookup answered (see AccessLog).
  void set_recording(bool on) { recording_ = on; }
  // Replay of a capture: files the capture could not read (denied, failed) or did not store answer
  // with the recorded status. Canonical paths. Each one is a file of its directory, listed and
  // found, even where the backend has no placeholder for it (an unpacked capture of schema 3).
  void set_recorded_failures(FailureMap failures);

 protected:
  enum class NodeType { kMissing, kFile, kDir, kLink, kOther };
  // Backends answer on canonical paths: absolute, no ".", "..", or links before the last component.
  virtual NodeType node_type(const std::string& path) = 0;
  virtual std::string node_link(const std::string& path) = 0;
  virtual FileRead node_read(const std::string& path) = 0;
  // read_part() on a canonical path; the default cuts the part out of node_read().
  virtual FileRead node_read_part(const std::string& path, std::uint64_t offset, std::size_t length);
  virtual std::vector<std::string> node_list(const std::string& path) = 0;
  // node_list with the type of each entry where the backend learns it in the same step (a tree's
  // getdents d_type), so later lookups of those entries ask the backend nothing; nullopt where it
  // does not know. The default knows none.
  struct ListedEntry {
    std::string name;
    std::optional<NodeType> type;
  };
  virtual std::vector<ListedEntry> node_list_typed(const std::string& path);
  // node_type() for a lookup that expects a directory or a link (`expected` kDir or kLink; any other
  // value expects nothing). A backend may answer it with the step that comes next: a tree opens an
  // expected directory, keeping the descriptor for the reads below it, and reads an expected link,
  // keeping the text for node_link(): one system call where lstat and then open or readlink were two.
  virtual NodeType node_type_expecting(const std::string& path, NodeType expected);

 private:
  // Looked up by string_view: the path asked, or a prefix of it, without copying it first.
  struct PathHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view path) const { return std::hash<std::string_view>{}(path); }
  };
  template <typename T>
  using PathMap = std::unordered_map<std::string, T, PathHash, std::equal_to<>>;
  // What the backend said a canonical path is, kept as a tree of the components walked: a lookup
  // hashes one short name in its directory, not the whole path (every read resolves ~15 shared
  // prefixes, and asking the backend each time was most of the run time: an lstat each). Missing
  // paths are not kept (a counter may appear during a transfer); file contents and listings never
  // are. Nodes are never removed, so pointers to them stay valid for the life of the Source.
  struct PathNode {
    PathNode* parent = nullptr;  // nullptr for "/"
    NodeType type = NodeType::kMissing;
    bool link_known = false;
    std::string link;  // for kLink: its target, once read
    // The access log's counts for this path (AccessLog).
    int reads = 0;
    int lists = 0;
    bool followed = false;
    PathMap<std::unique_ptr<PathNode>> children;
    // For a directory listed: its entries' types as the listing gave them, sorted by name. An
    // entry becomes a child only when it is looked up (most of a listing never is).
    std::vector<std::pair<std::string, NodeType>> listed;
  };

  // Resolves every component; follow_last=false leaves a final symlink unresolved. `type` is set
  // to what the result is, and `node` (when given) to its node, so callers need not look it up again.
  // `last_expected` is what the caller expects the path to be (kDir, kLink, else nothing): every
  // component before the last is expected to be a directory.
  std::optional<std::string> canonicalize(std::string_view path, bool follow_last, NodeType& type,
                                          PathNode** node = nullptr, NodeType last_expected = NodeType::kMissing);
  // resolve() that also says what it found.
  std::optional<std::string> resolve_typed(std::string_view path, NodeType& type, PathNode** node = nullptr,
                                           NodeType expected = NodeType::kMissing);
  // The entry `name` of `dir`, asking the backend (about `path`, its canonical path, expected to be
  // `expected`: node_type_expecting) only the first time; nullptr when it is missing.
  PathNode* child_of(PathNode& dir, std::string_view name, const std::string& path,
                     NodeType expected = NodeType::kMissing);
  // The root's node, its type asked of the backend once.
  PathNode& root_node();
  // A link node's target, read from the backend once (`path` is its canonical path).
  const std::string& link_of(PathNode& node, const std::string& path);
  static EntryKind entry_kind(NodeType type);
  struct FoundDir {
    std::string path;  // canonical
    PathNode* node;
  };
  // Sets `dir` to the canonical form of `path`'s directory (through dirs_), nullptr when that is
  // missing; false when `path` is not plain ("..", ".", "//") or deeper than kMaxCachedDepth, so
  // canonicalize walks it all.
  bool canonical_parent(std::string_view path, const FoundDir*& dir);
  static constexpr long kMaxCachedDepth = 64;
  PathNode root_;
  // Directory as asked -> its canonical path and node, for directories found.
  PathMap<FoundDir> dirs_;
  const PathMap<FoundDir>::value_type* last_dir_ = nullptr;  // the entry canonical_parent() used last
  AccessLog log_;
  bool recording_ = false;
  FailureMap failures_;
  // The failures' names by their directory, for list(): canonical directory -> names.
  std::unordered_map<std::string, std::vector<std::string>> failed_names_;
  NotCarried not_carried_;
};

// A small text attribute, trimmed; "" when it cannot be read (`raw`, when given, says why).
std::string read_text(Source& source, const std::string& path, FileRead* raw = nullptr);

// The running machine, read from `/`.
std::unique_ptr<Source> open_live_source();
// A directory laid out like a Linux root (hwloc fsroot convention): DIR/sys, DIR/proc, ...
std::unique_ptr<Source> open_tree_source(const std::string& dir);
// A .tar, .tar.gz, .tar.xz or .tar.zst holding such a tree (at its top or under one top folder),
// read into memory without unpacking anything to disk. Throws Error naming the member on bad input.
std::unique_ptr<Source> open_archive_source(const std::string& file);

// Limits that keep hostile input from exhausting memory: no sysfs or proc file we read is near these.
inline constexpr std::uint64_t kMaxFileBytes = 64ull << 20;
// The most read_part() returns at once.
inline constexpr std::size_t kMaxPartBytes = 16u << 20;
inline constexpr std::uint64_t kMaxArchiveBytes = 1ull << 30;
// PATH_MAX: no Linux path or link target is this long; a longer one in a dump is not from a machine.
inline constexpr std::size_t kMaxPathBytes = 4096;

}  // namespace p2pcheck
