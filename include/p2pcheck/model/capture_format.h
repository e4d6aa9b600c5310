// The capture format: what `p2pcheck capture` writes and every replay reads.
//
//   p2pcheck-capture/manifest.json   what made it, when, from what, as root or not, notes
//   p2pcheck-capture/sys/... proc/... etc/... boot/...   the root as the analysis saw it
//   p2pcheck-capture/live/*.json     what only the live machine could tell (one file per probe)
//
// Files the machine refused to read, and entries that were listed but never read, are named in the
// manifest ("unreadable", "uncaptured"), their directories stored, so a replay lists them and
// reports them unreadable ("unknown"), never empty or absent. Up to schema 2 each was also an empty
// member. Imports describe themselves with the same manifest schema (with "format").
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/inventory.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

inline constexpr const char* kManifestPath = "/manifest.json";
inline constexpr const char* kCaptureSchema = "p2pcheck.capture";
// Bumped when a manifest field, or what a capture holds, changes meaning or disappears; live/ files
// carry their own. 2: a function's vendor, device, revision, subsystem and link attribute files are
// left out where its config space holds their values (the walk reads them there), so a reader of
// version 1 would take them for missing; it is told to use a newer p2pcheck instead. 3: placeholders
// are no longer members (half a fabric capture's members, and most of a replay's time went to
// reading them), and "uncaptured" groups its names by directory.
inline constexpr int kCaptureSchemaVersion = 3;
// A format's not-carried patterns are a handful; more in a manifest is not from p2pcheck.
inline constexpr std::size_t kMaxNotCarriedPatterns = 256;
inline constexpr const char* kCaptureTopFolder = "p2pcheck-capture";
// What a replayed read of a placeholder says, so it is never mistaken for an empty file.
inline constexpr const char* kNotCaptured = "not in this capture: only what the analysis read was stored";

// Records of an import's input left out for the same reason, as one note: "50 devices have no
// config space dump: 0000:00:01.0 ...". Kept as data so the note is made here, never read back.
struct InputNoteGroup {
  std::string kind;                   // what the records share, plural: "devices have no config space dump"
  std::size_t count = 0;              // how many records; may exceed subjects.size()
  std::vector<std::string> subjects;  // which ("0000:00:01.0"), the first kMaxGroupSubjects
  std::string first;                  // the first record's whole note, with file and line
};
// Subjects kept per group: a domain's 65,536 functions fit; more in a manifest is not from p2pcheck.
inline constexpr std::size_t kMaxGroupSubjects = 65536;
// Groups in a manifest: one per kind, and one per record that has no kind (the first 50).
inline constexpr std::size_t kMaxInputNoteGroups = 256;

// What a replayed capture (or an import, which describes itself the same way) says about itself.
struct CaptureInfo {
  std::string format;  // "capture", "lspci", "udev", "hwloc", "sosreport"
  nlohmann::ordered_json manifest;
  std::vector<std::string> notes;
  // "input_notes": records of an import's input left out as unreadable ("FILE: line N: what").
  std::vector<std::string> input_notes;
  // "input_note_groups": the same records by kind (imports from this version on; empty before).
  std::vector<InputNoteGroup> input_note_groups;
  FailureMap failures;     // its unreadable and uncaptured files, as their reads replay
  NotCarried not_carried;  // "not_carried": what the format it came from cannot carry
  // "selection": the --gpu/--nvme given to `capture`, so a replay (check, fleet) judges the pairs
  // the capture was taken for, as the live check did; empty sides: every GPU or NVMe.
  PairSelection selection;
};
// At most this many selectors per side in a manifest; a machine has far fewer devices.
inline constexpr std::size_t kMaxSelectors = 1024;
// The manifest's "selection" member for a pair selection (null when both sides are empty).
nlohmann::ordered_json selection_json(const PairSelection& selection);
// The manifest's "input_note_groups" member (null when there is none).
nlohmann::ordered_json input_note_groups_json(const std::vector<InputNoteGroup>& groups);
// The manifest's "not_carried" member for a declaration (null when there is none).
nlohmann::ordered_json not_carried_json(const NotCarried& not_carried);
// Reads /manifest.json through `source`; nullopt when there is none or it is not ours. Throws
// Error when it is ours but broken.
std::optional<CaptureInfo> read_capture_info(Source& source);
// The same for manifest bytes read elsewhere (an archive member); `file` names them in errors.
std::optional<CaptureInfo> parse_capture_manifest(const std::string& bytes, const std::string& file);
// For a capture opened as a tree (--root of an unpacked capture): applies its failures and what
// its format does not carry.
std::unique_ptr<Source> with_capture_manifest(std::unique_ptr<Source> source);

// What the CLI shows on replay: "capture"/import summary object for --json output.
nlohmann::ordered_json capture_summary_json(const CaptureInfo& info);

// The manifest's names for read outcomes ("denied", "failed"), and its time format (UTC ISO 8601).
const char* read_status_name(ReadStatus status);
std::string iso_time(std::time_t t);
std::optional<std::time_t> parse_iso_time(const std::string& text);

}  // namespace p2pcheck
