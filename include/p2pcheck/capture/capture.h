// `p2pcheck capture`: a compressed tar of exactly what the analysis reads, replayable with --dump.
//
// Capture makes every read of the whole analysis (read_check_inputs: topology, inventory, machine,
// every check's read step; the pairs selected, not decided, since deciding reads no file) on a
// recording source, then stores every file it read, every link it followed, every directory it
// listed (with each entry's kind, so list() answers the same on replay) and every path it found,
// in the capture format (format.h). Same input, same bytes: members sorted, fixed owners and times.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "p2pcheck/live/device_actions.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

struct CaptureEntry {
  std::string path;  // absolute inside the captured root: "/sys/bus/pci/devices/0000:00:01.0"
  EntryKind kind = EntryKind::kFile;
  std::string data;  // file bytes or link target
};

struct CaptureSet {
  std::vector<CaptureEntry> entries;  // sorted by path; parents are implied
  nlohmann::ordered_json manifest;
  std::vector<std::string> notes;  // for the user: what is missing and why
  std::int64_t mtime = 0;          // every member's mtime: the capture time, or 0 when unknown
};

// Runs the analysis on `source` while recording and gathers what to store. `actions` is the live
// machine's (nullptr for every replay source); with `redact`, identifiers are replaced (redact.h).
// A non-empty `selection` (capture --gpu/--nvme) is checked on the machine and recorded in the
// manifest; a capture of a capture without one keeps the replayed capture's. Throws what
// run_check throws (UsageError for a selector that matches nothing).
CaptureSet collect_capture(Source& source, DeviceActions* actions, bool redact, const PairSelection& selection = {});

// The compression a capture named FILE gets: "zstd" (.tar.zst, .tzst), "gzip" (.tar.gz, .tgz),
// "xz" (.tar.xz, .txz), "none" (.tar). Throws UsageError for any other name (foo.zip is not a zip).
std::string capture_compression_for(const std::string& file);

struct CaptureOutput {
  std::string file;    // named as capture_compression_for() accepts
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

}  // namespace p2pcheck
