// `p2pcheck capture`: a compressed tar of exactly what the analysis reads, replayable with --dump.
//
// Capture runs the whole analysis (run_check: topology, inventory, machine, every check) on a
// recording source, then stores every file it read, every link it followed, every directory it
// listed (with each entry's kind, so list() answers the same on replay) and every path it found,
// under one top folder:
//
//   p2pcheck-capture/manifest.json   what made it, when, from what, as root or not, notes
//   p2pcheck-capture/sys/... proc/... etc/... boot/...   the root as the analysis saw it
//   p2pcheck-capture/live/*.json     what only the live machine could tell (one file per probe)
//
// Files the machine refused to read, and entries that were listed but never read, are stored as
// empty placeholders and named in the manifest, so a replay reports them unreadable ("unknown"),
// never empty or absent. Same input, same bytes: members sorted, fixed owners and times.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/live/device_actions.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

inline constexpr const char* kManifestPath = "/manifest.json";
inline constexpr const char* kCaptureSchema = "p2pcheck.capture";
// Bumped when a manifest field changes meaning or disappears; live/ files carry their own.
inline constexpr int kCaptureSchemaVersion = 1;
inline constexpr const char* kCaptureTopFolder = "p2pcheck-capture";

struct CaptureEntry {
  std::string path;  // absolute inside the captured root: "/sys/bus/pci/devices/0000:00:01.0"
  EntryKind kind = EntryKind::kFile;
  std::string data;  // file bytes or link target
};

struct CaptureSet {
  std::vector<CaptureEntry> entries;  // sorted by path; parents are implied
  nlohmann::ordered_json manifest;
  std::vector<std::string> notes;     // for the user: what is missing and why
  std::int64_t mtime = 0;             // every member's mtime: the capture time, or 0 when unknown
};

// Runs the analysis on `source` while recording and gathers what to store. `actions` is the live
// machine's (nullptr for every replay source); with `redact`, identifiers are replaced (redact.h).
// Throws what run_check throws.
CaptureSet collect_capture(Source& source, DeviceActions* actions, bool redact);

struct CaptureOutput {
  std::string file;   // .tar.zst (default for other names), .tar.gz/.tgz, .tar.xz, .tar
  bool force = false;  // replace an existing file
};

struct CaptureWritten {
  std::string file;
  std::string compression;  // "zstd", "gzip", "xz", "none"
  std::uint64_t bytes = 0;
  std::size_t members = 0;
};

// Writes a temporary file in the target directory and renames it into place, so FILE is either the
// whole capture or untouched. Throws UsageError when FILE exists (without force) or its directory
// does not, Error naming FILE when writing fails.
CaptureWritten write_capture(const CaptureSet& set, const CaptureOutput& output);

// What a replayed capture (or an import, which describes itself the same way) says about itself.
struct CaptureInfo {
  std::string format;  // "capture", "lspci", "udev", "hwloc", "sosreport"
  nlohmann::ordered_json manifest;
  std::vector<std::string> notes;
};
// Reads /manifest.json through `source`; nullopt when there is none or it is not ours. Throws
// Error when it is ours but broken.
std::optional<CaptureInfo> read_capture_info(Source& source);
// The manifest's unreadable and uncaptured files as the failures their reads must replay.
std::map<std::string, FileRead> capture_failures(const nlohmann::json& manifest);
// For a capture opened as a tree (--root of an unpacked capture): applies its failures.
std::unique_ptr<Source> with_capture_manifest(std::unique_ptr<Source> source);

// What the CLI shows on replay: "capture"/import summary object for --json output.
nlohmann::ordered_json capture_summary_json(const CaptureInfo& info);

}  // namespace p2pcheck
