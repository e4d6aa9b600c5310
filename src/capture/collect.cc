// Capture: record what the analysis reads, then gather exactly that into a CaptureSet (capture.h).
#include <algorithm>
#include <set>

#include "live_probes.h"
#include "p2pcheck/capture/capture.h"
#include "p2pcheck/capture/redact.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {
namespace {

using nlohmann::ordered_json;

// Live-changing PCIe error counters: read through the source so they land in the capture as the
// sysfs files they are, and a replay shows the counters of the captured moment.
void read_aer_counters(Source& source, const Topology& topo) {
  static const char* files[] = {"aer_dev_correctable",
                                "aer_dev_fatal",
                                "aer_dev_nonfatal",
                                "aer_rootport_total_err_cor",
                                "aer_rootport_total_err_fatal",
                                "aer_rootport_total_err_nonfatal"};
  for (const auto& [bdf, fn] : topo.functions)
    for (const char* f : files)
      if (source.exists(fn.sysfs_path + "/" + f)) source.read(fn.sysfs_path + "/" + f);
}

// Every read of the whole analysis on a recording source: afterwards its AccessLog holds every
// answer it gave. The pairs are selected, not decided: deciding reads no file, and a fabric's tens
// of thousands of decisions cost most of a capture's time and memory. With a selection, its pairs
// are the ones analysed, so the reads their replay needs are recorded.
CheckInputs record_analysis(Source& source, const PairSelection& selection) {
  source.set_recording(true);
  CheckOptions options;
  options.selection = selection;
  CheckInputs in = read_check_inputs(source, options);
  read_aer_counters(source, in.state.topo);
  if (!source.is_live())  // a capture of a capture keeps the original machine's live answers
    for (const std::string& name : source.list("/live")) source.read("/live/" + name);
  source.set_recording(false);
  return in;
}

// What the manifest and the notes say of the analysis.
struct Analysed {
  bool config_truncated = false;  // some config space held only 64 bytes
  std::string kernel_release, kernel_version;
};

struct Gathered {
  std::map<std::string, CaptureEntry> entries;  // each entry's path is its key (left empty in the entry)
  // Placeholders: named in the manifest only, each one's directory an entry (format.h).
  std::map<std::string, FileRead> unreadable;  // reads the machine refused
  std::set<std::string> uncaptured;            // entries listed but never read
};

// Everything the log saw, each path once: the first kind that claims it wins, and files the
// analysis read win over placeholders.
Gathered gather_entries(const AccessLog& log, const std::map<std::string, std::string>& live_files) {
  Gathered g;
  auto put = [&](const std::string& path, EntryKind kind, std::string data) {
    if (path == kManifestPath || path == "/") return;
    g.entries.emplace(path, CaptureEntry{"", kind, std::move(data)});
  };
  auto placeholder = [&](const std::string& path, std::optional<FileRead> why) {
    if (g.entries.count(path) || g.unreadable.count(path) || g.uncaptured.count(path) || path == kManifestPath) return;
    // Its directory is stored, so the unpacked capture holds the place the manifest names.
    if (std::size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0)
      put(path.substr(0, slash), EntryKind::kDir, "");
    if (why && why->error != kNotCaptured)
      g.unreadable[path] = *why;
    else
      g.uncaptured.insert(path);
  };
  for (const auto& [path, r] : log.contents) {
    if (r.ok())
      put(path, EntryKind::kFile, r.bytes);
    else if (r.status != ReadStatus::kMissing)
      placeholder(path, r);
  }
  for (const auto& [path, target] : log.links_followed) put(path, EntryKind::kLink, target);
  for (const auto& [path, kind] : log.found) {
    if (kind == EntryKind::kDir)
      put(path, EntryKind::kDir, "");
    else if (kind == EntryKind::kFile)
      placeholder(path, std::nullopt);
    else if (kind == EntryKind::kOther)
      placeholder(path, FileRead{ReadStatus::kFailed, "", "not a regular file"});
  }
  for (const auto& [dir, names] : log.listings) {
    put(dir, EntryKind::kDir, "");
    for (const auto& [name, e] : names) {
      std::string path = (dir == "/" ? "" : dir) + "/" + name;
      if (e.kind == EntryKind::kLink)
        put(path, EntryKind::kLink, e.link_target);
      else if (e.kind == EntryKind::kDir)
        put(path, EntryKind::kDir, "");
      else if (e.kind == EntryKind::kFile)
        placeholder(path, std::nullopt);
      else
        placeholder(path, FileRead{ReadStatus::kFailed, "", "not a regular file"});
    }
  }
  for (const auto& [path, bytes] : live_files) put(path, EntryKind::kFile, bytes);
  return g;
}

// Who took it, when, as root or not: the live machine's answers, or those of the capture replayed.
struct CaptureProvenance {
  std::optional<bool> as_root;
  std::optional<std::time_t> taken;
  std::string hostname;
  ordered_json source_manifest;  // the replayed capture's manifest, without its failure lists
};

CaptureProvenance provenance(DeviceActions* actions, const std::optional<CaptureInfo>& from) {
  CaptureProvenance p;
  if (actions) {
    p.as_root = actions->is_root();
    p.taken = actions->now();
    p.hostname = actions->hostname();
  } else if (from) {
    const auto& m = from->manifest;
    p.source_manifest = m;
    p.source_manifest.erase("unreadable");
    p.source_manifest.erase("uncaptured");
    if (m.contains("as_root") && m["as_root"].is_boolean()) p.as_root = m["as_root"].get<bool>();
    if (m.contains("captured_at") && m["captured_at"].is_string())
      p.taken = parse_iso_time(m["captured_at"].get<std::string>());
    if (m.contains("hostname") && m["hostname"].is_string()) p.hostname = m["hostname"].get<std::string>();
  }
  return p;
}

std::vector<std::string> capture_notes(const std::optional<CaptureInfo>& from, const CaptureProvenance& p,
                                       const Analysed& analysed, const Gathered& g) {
  std::vector<std::string> notes;
  if (from) {
    for (const auto& n : from->notes) notes.push_back(n);
    for (const auto& n : from->input_notes) notes.push_back("left out of the input: " + n);
  }
  if (p.as_root == false)
    notes.push_back(
        "captured without root: the kernel showed only the first 64 bytes of each config space, so "
        "ACS, port types and link capabilities are unknown; capture again as root for the full answer");
  else if (analysed.config_truncated && !p.as_root.has_value())
    notes.push_back(
        "some config spaces hold only 64 bytes (read without root): ACS, port types and link "
        "capabilities of those functions are unknown");
  if (!g.unreadable.empty())
    notes.push_back(std::to_string(g.unreadable.size()) +
                    " file(s) could not be read on the captured machine (manifest.json \"unreadable\"); they "
                    "replay as unreadable, not as empty");
  return notes;
}

// With --redact every identifier is replaced; without it the text passes unchanged.
class Cleaner {
 public:
  Cleaner(bool redact, const Gathered& g, const CaptureProvenance& p, const std::vector<std::string>& serials)
      : redact_(redact) {
    if (!redact) return;
    for (const auto& [path, e] : g.entries)
      if (e.kind == EntryKind::kFile) redactor_.learn(path, e.data);
    if (!p.hostname.empty()) redactor_.add_hostname(p.hostname);
    for (const auto& s : serials) redactor_.add_serial(s);
  }
  bool redacting() const { return redact_; }
  std::string text(const std::string& s) { return redact_ ? redactor_.text(s) : s; }
  // Taken, not copied: a fabric's capture holds tens of thousands of entries.
  CaptureEntry entry(std::string path, CaptureEntry e) {
    if (!redact_) {
      e.path = std::move(path);
      return e;
    }
    if (e.kind == EntryKind::kFile)
      e.data = redactor_.file(path, e.data);
    else if (e.kind == EntryKind::kLink)
      e.data = redactor_.text(e.data);
    e.path = redactor_.text(path);
    return e;
  }

 private:
  bool redact_;
  Redactor redactor_;
};

// By directory: a fabric lists tens of thousands of them, and each full path is ~130 bytes. An
// array of {dir, names}, not an object keyed by directory: ordered_json finds a key by searching
// every key before it, so a fabric's thousands of directories would cost its reader quadratic time.
ordered_json uncaptured_json(const Gathered& g, Cleaner& clean) {
  std::map<std::string, std::vector<std::string>> uncaptured;
  for (const auto& path : g.uncaptured) {
    std::string named = clean.text(path);
    std::size_t slash = named.rfind('/');
    uncaptured[slash == 0 ? "/" : named.substr(0, slash)].push_back(named.substr(slash + 1));
  }
  ordered_json out = ordered_json::array();
  for (auto& [dir, names] : uncaptured) {
    ordered_json group = ordered_json::object();
    group["dir"] = dir;
    group["names"] = std::move(names);
    out.push_back(std::move(group));
  }
  return out;
}

// The manifest of the capture this one was taken from (a capture of a replay), redacted as this one is.
ordered_json source_manifest_json(ordered_json sm, Cleaner& clean) {
  if (!clean.redacting()) return sm;
  if (sm.contains("source") && sm["source"].is_string()) {
    std::string s = sm["source"].get<std::string>();
    sm["source"] = s.substr(0, s.find(' '));
  }
  // Redacting the JSON text could in principle break it (a hostname made of JSON syntax): then
  // the replayed capture's manifest is left out rather than thrown over.
  sm = ordered_json::parse(clean.text(json_text(sm, -1)), nullptr, false);
  return sm.is_discarded() ? ordered_json() : sm;
}

ordered_json build_manifest(Source& source, const Analysed& analysed, const CaptureProvenance& p, const Gathered& g,
                            const std::map<std::string, std::string>& live_files, const CaptureSet& set,
                            const std::vector<std::string>& notes, const PairSelection& selection, Cleaner& clean) {
  ordered_json m;
  m["schema"] = kCaptureSchema;
  m["schema_version"] = kCaptureSchemaVersion;
  m["tool_version"] = kToolVersion;
  m["format"] = "capture";
  m["captured_at"] = p.taken ? ordered_json(iso_time(*p.taken)) : ordered_json();
  std::string described = source.describe();
  if (clean.redacting() && !source.is_live())
    described = described.substr(0, described.find(' '));  // file names can name the customer
  m["source"] = described;
  m["hostname"] = p.hostname.empty() ? ordered_json() : ordered_json(clean.text(p.hostname));
  m["as_root"] = p.as_root ? ordered_json(*p.as_root) : ordered_json();
  m["config_space_complete"] = !analysed.config_truncated;
  m["kernel"] = {{"release", analysed.kernel_release.empty() ? ordered_json() : ordered_json(analysed.kernel_release)},
                 {"version", analysed.kernel_version.empty() ? ordered_json()
                                                             : ordered_json(clean.text(analysed.kernel_version))}};
  m["redacted"] = clean.redacting();
  m["live"] = ordered_json::array();
  for (const auto& [path, bytes] : live_files) m["live"].push_back(path.substr(1));
  if (!source.is_live())
    for (const auto& e : set.entries)
      if (e.path.rfind("/live/", 0) == 0 && e.kind == EntryKind::kFile) m["live"].push_back(e.path.substr(1));
  m["notes"] = ordered_json::array();
  for (const auto& n : notes) m["notes"].push_back(clean.text(n));
  m["unreadable"] = ordered_json::object();
  for (const auto& [path, r] : g.unreadable)
    m["unreadable"][clean.text(path)] = {{"status", read_status_name(r.status)}, {"error", r.error}};
  m["uncaptured"] = uncaptured_json(g, clean);
  // A capture of an import keeps what the import's format cannot carry, so the replay says so too.
  if (!source.not_carried().empty()) m["not_carried"] = not_carried_json(source.not_carried());
  // The pairs it was taken for: a replay judges these unless told others.
  if (auto sel = selection_json(selection); !sel.is_null()) m["selection"] = sel;
  if (!p.source_manifest.is_null()) m["source_manifest"] = source_manifest_json(p.source_manifest, clean);
  return m;
}

}  // namespace

CaptureSet collect_capture(Source& source, DeviceActions* actions, bool redact, const PairSelection& selection) {
  std::optional<CaptureInfo> from = source.is_live() ? std::nullopt : read_capture_info(source);
  bool given = !selection.gpu.empty() || !selection.nvme.empty();
  const PairSelection& chosen = given || !from ? selection : from->selection;
  CaptureSet set;
  std::map<std::string, std::string> live_files;
  std::vector<std::string> identify_serials;
  Analysed analysed;
  {
    // The model of a fabric (config spaces, chains) is freed before the archive's entries are gathered.
    CheckInputs in = record_analysis(source, chosen);
    if (actions) live_probes(*actions, in, live_files, set.notes, identify_serials);
    // The kernel's own allowlist as read (or why not): kcore is never stored, the rows are.
    const KernelTable& table = in.state.machine.kernel_table;
    if (table.origin == KernelTableOrigin::kRunningKernel || (source.is_live() && !table.read()))
      live_files[kKernelTableFile] = kernel_table_json(table);
    if (source.is_live() && !table.read())
      set.notes.push_back("the kernel's own P2PDMA allowlist is not in this capture: " + table.why_not);
    analysed = {in.state.topo.config_truncated, in.state.machine.kernel_release, in.state.machine.kernel_version};
  }

  Gathered gathered = gather_entries(source.access_log(), live_files);
  CaptureProvenance prov = provenance(actions, from);
  set.mtime = prov.taken ? static_cast<std::int64_t>(*prov.taken) : 0;

  Cleaner clean(redact, gathered, prov, identify_serials);
  set.entries.reserve(gathered.entries.size());
  while (!gathered.entries.empty()) {  // each node freed as its entry moves over
    auto node = gathered.entries.extract(gathered.entries.begin());
    set.entries.push_back(clean.entry(std::move(node.key()), std::move(node.mapped())));
  }
  auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
  if (!std::is_sorted(set.entries.begin(), set.entries.end(), by_path))  // redacted names sort anew
    std::sort(set.entries.begin(), set.entries.end(), by_path);

  std::vector<std::string> notes = capture_notes(from, prov, analysed, gathered);
  set.manifest = build_manifest(source, analysed, prov, gathered, live_files, set, notes, chosen, clean);
  for (const auto& n : notes) set.notes.push_back(n);
  return set;
}

}  // namespace p2pcheck
