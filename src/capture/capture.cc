// Capture: record what the analysis reads, then store exactly that (capture.h).
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/version.h"
#include "p2pcheck/capture/capture.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/capture/redact.h"
#include "p2pcheck/report/report.h"

namespace p2pcheck {
namespace {

using nlohmann::ordered_json;

// What a replayed read of a placeholder says, so it is never mistaken for an empty file.
constexpr const char* kNotCaptured = "not in this capture: only what the analysis read was stored";

const char* status_name(ReadStatus s) {
  switch (s) {
    case ReadStatus::kOk: return "ok";
    case ReadStatus::kMissing: return "missing";
    case ReadStatus::kDenied: return "denied";
    case ReadStatus::kFailed: return "failed";
  }
  return "failed";
}

std::string iso_time(std::time_t t) {
  char buf[32];
  struct tm tm;
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<std::time_t> parse_iso_time(const std::string& text) {
  struct tm tm = {};
  if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return std::nullopt;
  return timegm(&tm);
}

// Live-changing PCIe error counters: read through the source so they land in the capture as the
// sysfs files they are, and a replay shows the counters of the captured moment.
void read_aer_counters(Source& source, const Topology& topo) {
  static const char* files[] = {"aer_dev_correctable", "aer_dev_fatal", "aer_dev_nonfatal",
                                "aer_rootport_total_err_cor", "aer_rootport_total_err_fatal",
                                "aer_rootport_total_err_nonfatal"};
  for (const auto& [bdf, fn] : topo.functions)
    for (const char* f : files)
      if (source.exists(fn.sysfs_path + "/" + f)) source.read(fn.sysfs_path + "/" + f);
}

ordered_json nvme_json(const NvmeIdentity& id) {
  ordered_json c;
  c["controller"] = id.controller;
  c["bdf"] = id.bdf.str();
  ordered_json ident;
  ident["available"] = id.identify_ok;
  if (id.identify_ok) {
    char hex[16];
    ident["model"] = id.model;
    ident["serial"] = id.serial;
    ident["firmware"] = id.firmware;
    std::snprintf(hex, sizeof hex, "%04x", id.vid);
    ident["vid"] = hex;
    std::snprintf(hex, sizeof hex, "%04x", id.ssvid);
    ident["ssvid"] = hex;
    ident["cmic"] = id.cmic;
    ident["oacs"] = id.oacs;
    ident["version"] = id.version;
    ident["ctratt"] = id.ctratt;
  } else {
    ident["reason"] = id.identify_error;
  }
  c["identify"] = ident;
  ordered_json regs;
  regs["available"] = id.registers_ok;
  if (id.registers_ok) {
    regs["cap"] = id.cap;
    regs["vs"] = id.vs;
    regs["cmbloc"] = id.cmb.cmbloc;
    regs["cmbsz"] = id.cmb.cmbsz;
    ordered_json cmb;
    cmb["size"] = id.cmb.size;
    if (id.cmb.size) {
      cmb["bar"] = id.cmb.bar;
      cmb["offset"] = id.cmb.offset;
      cmb["sqs"] = id.cmb.sqs;
      cmb["cqs"] = id.cmb.cqs;
      cmb["lists"] = id.cmb.lists;
      cmb["rds"] = id.cmb.rds;
      cmb["wds"] = id.cmb.wds;
      // nvme_map_cmb(): registered when size and BAR offset are 2 MiB aligned; published with WDS and RDS.
      bool aligned = id.cmb.size % (2u << 20) == 0 && id.cmb.offset % (2u << 20) == 0;
      cmb["p2pmem_expected"] = aligned;
      cmb["published_expected"] = aligned && id.cmb.wds && id.cmb.rds;
    }
    regs["cmb"] = cmb;
  } else {
    regs["reason"] = id.registers_error;
  }
  c["registers"] = regs;
  return c;
}

ordered_json library_json(const LibraryProbe& p) {
  ordered_json j;
  j["library"] = p.library;
  j["loaded"] = p.loaded;
  j["path"] = p.path.empty() ? ordered_json() : ordered_json(p.path);
  j["error"] = p.error.empty() ? ordered_json() : ordered_json(p.error);
  ordered_json symbols = ordered_json::object();
  for (const auto& [name, found] : p.symbols) symbols[name] = p.loaded ? ordered_json(found) : ordered_json();
  j["symbols"] = symbols;
  j["runtime_version"] = p.runtime_version ? ordered_json(*p.runtime_version) : ordered_json();
  return j;
}

ordered_json probe_doc(const char* schema) {
  ordered_json j;
  j["schema"] = schema;
  j["schema_version"] = 1;
  j["tool_version"] = kToolVersion;
  return j;
}

// The live probes, one JSON document per file under /live.
void live_probes(DeviceActions& actions, const CheckReport& report, std::map<std::string, std::string>& files,
                 std::vector<std::string>& notes, std::vector<std::string>& serials) {
  bool root = actions.is_root();
  if (!report.inv.nvmes.empty()) {
    ordered_json doc = probe_doc("p2pcheck.live.nvme");
    doc["as_root"] = root;
    doc["controllers"] = ordered_json::array();
    for (const auto& c : report.inv.nvmes) {
      if (c.name.empty()) continue;  // no controller registered: nothing to open
      NvmeIdentity id = actions.nvme_identity(c.name, c.bdf);
      if (!id.identify_ok) notes.push_back(c.name + ": NVMe Identify unavailable (" + id.identify_error + ")");
      if (!id.registers_ok) notes.push_back(c.name + ": controller registers (CMB) unavailable (" + id.registers_error + ")");
      if (!id.serial.empty()) serials.push_back(id.serial);
      doc["controllers"].push_back(nvme_json(id));
    }
    files["/live/nvme.json"] = json_text(doc) + "\n";
  }
  HipProbe hip = actions.hip_probe();
  ordered_json h = probe_doc("p2pcheck.live.hip");
  h["hip_runtime"] = library_json(hip.hip_runtime);
  h["hipfile"] = library_json(hip.hipfile);
  files["/live/hip.json"] = json_text(h) + "\n";
  // The running kernel's own verdicts, when the p2pprobe module answers; nothing when it does not.
  // Every pair checked, and every p2pmem provider (CMB, p2pprobe-bound device) with every NVMe, so
  // a replay naming those with --gpu/--nvme has the kernel's answer too.
  std::vector<DevicePair> pairs;
  std::set<std::pair<Bdf, Bdf>> asked;
  auto ask = [&](const Bdf& provider, const Bdf& client) {
    if (provider != client && asked.insert({provider, client}).second) pairs.push_back({provider, client});
  };
  for (const auto& d : report.pairs) ask(d.path.pair.gpu, d.path.pair.nvme);
  for (const auto& [bdf, f] : report.topo.functions)
    if (f.p2pmem)
      for (const auto& n : report.inv.nvmes) ask(bdf, n.bdf);
  KernelModuleAnswers kmod = actions.kernel_module(pairs);
  if (kmod.available) {
    ordered_json k = probe_doc("p2pcheck.kmod");
    k["module"] = {{"api_version", kmod.info.api_version}, {"module_version", kmod.info.module_version},
                   {"kernel_release", kmod.info.kernel_release}, {"p2pdma", kmod.info.p2pdma},
                   {"provider_driver", kmod.info.provider_driver}};
    k["verdicts"] = ordered_json::array();
    for (const auto& [pair, v] : kmod.verdicts)
      k["verdicts"].push_back({{"provider", pair.gpu.str()}, {"client", pair.nvme.str()}, {"distance", v.distance},
                               {"map_type", to_string(v.map_type)}, {"map_note", v.map_note},
                               {"provider_has_p2pmem", v.provider_has_p2pmem}, {"provider_driver", v.provider_driver},
                               {"client_driver", v.client_driver}});
    k["failures"] = ordered_json::array();
    for (const auto& [pair, why] : kmod.failures)
      k["failures"].push_back({{"provider", pair.gpu.str()}, {"client", pair.nvme.str()}, {"error", why}});
    files["/live/kmod.json"] = json_text(k) + "\n";
  } else {
    notes.push_back("the running kernel's own verdicts are not in this capture: " + kmod.problem);
  }
  for (const SavedResults& saved : kSavedResults) {
    auto bytes = actions.saved_results(saved);
    if (!bytes) continue;
    auto j = nlohmann::json::parse(*bytes, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("schema", "") != saved.schema)
      notes.push_back(std::string(saved.path) + " is not a " + saved.schema + " document; left out");
    else
      files[std::string("/live/") + saved.name] = *bytes;
  }
}

}  // namespace

CaptureSet collect_capture(Source& source, DeviceActions* actions, bool redact) {
  std::optional<CaptureInfo> from = source.is_live() ? std::nullopt : read_capture_info(source);
  source.set_recording(true);
  auto report = run_check(source, CheckOptions{});
  read_aer_counters(source, report->topo);
  if (!source.is_live())  // a capture of a capture keeps the original machine's live answers
    for (const std::string& name : source.list("/live")) source.read("/live/" + name);
  source.set_recording(false);

  CaptureSet set;
  std::map<std::string, std::string> live_files;
  std::vector<std::string> identify_serials;
  if (actions) live_probes(*actions, *report, live_files, set.notes, identify_serials);

  // Everything the log saw, each path once: the first kind that claims it wins, and files the
  // analysis read win over placeholders.
  const AccessLog& log = source.access_log();
  std::map<std::string, CaptureEntry> entries;
  std::map<std::string, FileRead> unreadable;
  std::set<std::string> uncaptured;
  auto put = [&](const std::string& path, EntryKind kind, std::string data) {
    if (path == kManifestPath || path == "/") return;
    entries.emplace(path, CaptureEntry{path, kind, std::move(data)});
  };
  auto placeholder = [&](const std::string& path, std::optional<FileRead> why) {
    if (entries.count(path) || path == kManifestPath) return;
    put(path, EntryKind::kFile, "");
    if (why && why->error != kNotCaptured) unreadable[path] = *why;
    else uncaptured.insert(path);
  };
  for (const auto& [path, r] : log.contents) {
    if (r.ok()) put(path, EntryKind::kFile, r.bytes);
    else if (r.status != ReadStatus::kMissing) placeholder(path, r);
  }
  for (const auto& [path, target] : log.links_followed) put(path, EntryKind::kLink, target);
  for (const auto& [path, kind] : log.found) {
    if (kind == EntryKind::kDir) put(path, EntryKind::kDir, "");
    else if (kind == EntryKind::kFile) placeholder(path, std::nullopt);
    else if (kind == EntryKind::kOther) placeholder(path, FileRead{ReadStatus::kFailed, "", "not a regular file"});
  }
  for (const auto& [dir, names] : log.listings) {
    put(dir, EntryKind::kDir, "");
    for (const auto& [name, e] : names) {
      std::string path = (dir == "/" ? "" : dir) + "/" + name;
      if (e.kind == EntryKind::kLink) put(path, EntryKind::kLink, e.link_target);
      else if (e.kind == EntryKind::kDir) put(path, EntryKind::kDir, "");
      else if (e.kind == EntryKind::kFile) placeholder(path, std::nullopt);
      else placeholder(path, FileRead{ReadStatus::kFailed, "", "not a regular file"});
    }
  }
  for (auto& [path, bytes] : live_files) put(path, EntryKind::kFile, bytes);

  // Facts for the manifest.
  std::optional<bool> as_root;
  std::optional<std::time_t> taken;
  std::string hostname;
  ordered_json source_manifest;
  if (actions) {
    as_root = actions->is_root();
    taken = actions->now();
    hostname = actions->hostname();
  } else if (from) {
    source_manifest = from->manifest;
    source_manifest.erase("unreadable");
    source_manifest.erase("uncaptured");
    if (from->manifest.contains("as_root") && from->manifest["as_root"].is_boolean()) as_root = from->manifest["as_root"].get<bool>();
    if (from->manifest.contains("captured_at") && from->manifest["captured_at"].is_string())
      taken = parse_iso_time(from->manifest["captured_at"].get<std::string>());
    if (from->manifest.contains("hostname") && from->manifest["hostname"].is_string())
      hostname = from->manifest["hostname"].get<std::string>();
  }
  set.mtime = taken ? static_cast<std::int64_t>(*taken) : 0;

  Redactor redactor;
  if (redact) {
    for (const auto& [path, e] : entries)
      if (e.kind == EntryKind::kFile) redactor.learn(path, e.data);
    if (!hostname.empty()) redactor.add_hostname(hostname);
    for (const auto& s : identify_serials) redactor.add_serial(s);
  }
  auto clean = [&](const std::string& s) { return redact ? redactor.text(s) : s; };

  for (auto& [path, e] : entries) {
    CaptureEntry out{clean(path), e.kind, e.data};
    if (redact && e.kind == EntryKind::kFile) out.data = redactor.file(path, e.data);
    else if (redact && e.kind == EntryKind::kLink) out.data = redactor.text(e.data);
    set.entries.push_back(std::move(out));
  }
  std::sort(set.entries.begin(), set.entries.end(), [](const auto& a, const auto& b) { return a.path < b.path; });

  std::vector<std::string> notes;
  if (from)
    for (const auto& n : from->notes) notes.push_back(n);
  if (as_root == false)
    notes.push_back("captured without root: the kernel showed only the first 64 bytes of each config space, so "
                    "ACS, port types and link capabilities are unknown; capture again as root for the full answer");
  else if (report->topo.config_truncated && !as_root.has_value())
    notes.push_back("some config spaces hold only 64 bytes (read without root): ACS, port types and link "
                    "capabilities of those functions are unknown");
  if (!unreadable.empty())
    notes.push_back(std::to_string(unreadable.size()) +
                    " file(s) could not be read on the captured machine (manifest.json \"unreadable\"); they "
                    "replay as unreadable, not as empty");

  ordered_json m;
  m["schema"] = kCaptureSchema;
  m["schema_version"] = kCaptureSchemaVersion;
  m["tool_version"] = kToolVersion;
  m["format"] = "capture";
  m["captured_at"] = taken ? ordered_json(iso_time(*taken)) : ordered_json();
  std::string described = source.describe();
  if (redact && !source.is_live()) described = described.substr(0, described.find(' '));  // file names can name the customer
  m["source"] = described;
  m["hostname"] = hostname.empty() ? ordered_json() : ordered_json(clean(hostname));
  m["as_root"] = as_root ? ordered_json(*as_root) : ordered_json();
  m["config_space_complete"] = !report->topo.config_truncated;
  m["kernel"] = {{"release", report->machine.kernel_release.empty() ? ordered_json() : ordered_json(report->machine.kernel_release)},
                 {"version", report->machine.kernel_version.empty() ? ordered_json() : ordered_json(clean(report->machine.kernel_version))}};
  m["redacted"] = redact;
  m["live"] = ordered_json::array();
  for (const auto& [path, bytes] : live_files) m["live"].push_back(path.substr(1));
  if (!source.is_live())
    for (const auto& e : set.entries)
      if (e.path.rfind("/live/", 0) == 0 && e.kind == EntryKind::kFile) m["live"].push_back(e.path.substr(1));
  m["notes"] = ordered_json::array();
  for (const auto& n : notes) m["notes"].push_back(clean(n));
  m["unreadable"] = ordered_json::object();
  for (const auto& [path, r] : unreadable)
    m["unreadable"][clean(path)] = {{"status", status_name(r.status)}, {"error", r.error}};
  m["uncaptured"] = ordered_json::array();
  for (const auto& path : uncaptured) m["uncaptured"].push_back(clean(path));
  if (!source_manifest.is_null()) {
    if (redact && source_manifest.contains("source") && source_manifest["source"].is_string()) {
      std::string s = source_manifest["source"].get<std::string>();
      source_manifest["source"] = s.substr(0, s.find(' '));
    }
    m["source_manifest"] = redact ? ordered_json::parse(redactor.text(source_manifest.dump())) : source_manifest;
  }
  set.manifest = std::move(m);
  for (const auto& n : notes) set.notes.push_back(n);
  return set;
}

// ---- writing ------------------------------------------------------------------------------------

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
  if (rc < ARCHIVE_WARN) throw Error(file, std::string("cannot write the capture: ") + (archive_error_string(ar) ? archive_error_string(ar) : "libarchive error"));
}

}  // namespace

CaptureWritten write_capture(const CaptureSet& set, const CaptureOutput& output) {
  CaptureWritten written;
  written.file = output.file;
  if (output.file.empty()) throw UsageError("capture: -o FILE is required");
  std::string dir = output.file.find('/') == std::string::npos ? "." : output.file.substr(0, output.file.rfind('/'));
  if (dir.empty()) dir = "/";
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError("capture -o " + output.file + ": directory " + dir + " does not exist");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw UsageError("capture -o " + output.file + ": cannot write into " + dir + ": " + std::strerror(errno));
  if (lstat(output.file.c_str(), &st) == 0 && !output.force)
    throw UsageError("capture -o " + output.file + ": file exists; pass --force to replace it");

  std::string tmp = dir + "/.p2pcheck-capture-XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw Error(output.file, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  try {
    Writer w;
    archive* ar = w.ar;
    archive_write_set_format_pax_restricted(ar);
    if (ends_with(output.file, ".tar.gz") || ends_with(output.file, ".tgz")) {
      written.compression = "gzip";
      check(ar, archive_write_add_filter_gzip(ar), output.file);
      check(ar, archive_write_set_filter_option(ar, "gzip", "timestamp", nullptr), output.file);  // same input, same bytes
      check(ar, archive_write_set_filter_option(ar, "gzip", "compression-level", "9"), output.file);
    } else if (ends_with(output.file, ".tar.xz") || ends_with(output.file, ".txz")) {
      written.compression = "xz";
      check(ar, archive_write_add_filter_xz(ar), output.file);
    } else if (ends_with(output.file, ".tar")) {
      written.compression = "none";
    } else {
      written.compression = "zstd";
      check(ar, archive_write_add_filter_zstd(ar), output.file);
      check(ar, archive_write_set_filter_option(ar, "zstd", "compression-level", "9"), output.file);
    }
    check(ar, archive_write_open_fd(ar, fd), output.file);

    // Members in sorted order, every directory listed before what it holds.
    std::map<std::string, const CaptureEntry*> members;
    std::set<std::string> dirs{""};
    for (const auto& e : set.entries) {
      members[e.path] = &e;
      for (size_t slash = e.path.find('/', 1); slash != std::string::npos; slash = e.path.find('/', slash + 1))
        dirs.insert(e.path.substr(0, slash));
    }
    CaptureEntry manifest{kManifestPath, EntryKind::kFile, json_text(set.manifest) + "\n"};
    members[manifest.path] = &manifest;
    for (const auto& d : dirs)
      if (!members.count(d)) members[d] = nullptr;
    for (const auto& [path, e] : members) {
      archive_entry* entry = archive_entry_new();
      std::string name = std::string(kCaptureTopFolder) + path;
      archive_entry_set_pathname(entry, name.c_str());
      archive_entry_set_mtime(entry, set.mtime, 0);
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
      check(ar, rc, output.file);
      if (kind == EntryKind::kFile && !e->data.empty() &&
          archive_write_data(ar, e->data.data(), e->data.size()) != static_cast<la_ssize_t>(e->data.size()))
        check(ar, ARCHIVE_FATAL, output.file);
      ++written.members;
    }
    check(ar, archive_write_close(ar), output.file);
    if (fsync(fd) != 0) throw Error(output.file, std::string("cannot write the capture: ") + std::strerror(errno));
    if (fstat(fd, &st) == 0) written.bytes = static_cast<std::uint64_t>(st.st_size);
    close(fd);
    fd = -1;
    if (output.force) {
      if (rename(tmp.c_str(), output.file.c_str()) != 0)
        throw Error(output.file, std::string("cannot move the capture into place: ") + std::strerror(errno));
    } else if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, output.file.c_str(), RENAME_NOREPLACE) != 0) {
      int err = errno;
      if (err == EEXIST) throw UsageError("capture -o " + output.file + ": file exists; pass --force to replace it");
      // File systems without RENAME_NOREPLACE: link() refuses an existing name just as well.
      if ((err != EINVAL && err != ENOSYS) || link(tmp.c_str(), output.file.c_str()) != 0)
        throw Error(output.file, std::string("cannot move the capture into place: ") + std::strerror(errno == 0 ? err : errno));
      unlink(tmp.c_str());
    }
  } catch (...) {
    if (fd >= 0) close(fd);
    unlink(tmp.c_str());
    throw;
  }
  return written;
}

// ---- replay -------------------------------------------------------------------------------------

std::optional<CaptureInfo> read_capture_info(Source& source) {
  FileRead r = source.read(kManifestPath);
  if (!r.ok()) return std::nullopt;
  auto j = ordered_json::parse(r.bytes, nullptr, false);
  if (j.is_discarded()) {
    // Only complain about a manifest that claims to be ours; a root may hold its own manifest.json.
    if (r.bytes.find(kCaptureSchema) != std::string::npos)
      throw Error(kManifestPath, "not valid JSON; expected the p2pcheck.capture manifest");
    return std::nullopt;
  }
  if (!j.is_object() || j.value("schema", "") != kCaptureSchema) return std::nullopt;
  if (!j["schema_version"].is_number_integer() || j["schema_version"].get<int>() > kCaptureSchemaVersion)
    throw Error(kManifestPath, "schema_version " + j["schema_version"].dump() + " is newer than this p2pcheck reads (" +
                                   std::to_string(kCaptureSchemaVersion) + "); use a newer p2pcheck");
  CaptureInfo info;
  info.format = j.value("format", "capture");
  if (j.contains("notes") && j["notes"].is_array())
    for (const auto& n : j["notes"])
      if (n.is_string()) info.notes.push_back(n.get<std::string>());
  info.manifest = std::move(j);
  return info;
}

std::map<std::string, FileRead> capture_failures(const nlohmann::json& m) {
  std::map<std::string, FileRead> failures;
  if (m.contains("unreadable") && m["unreadable"].is_object())
    for (const auto& [path, why] : m["unreadable"].items()) {
      if (!why.is_object()) throw Error(kManifestPath, "unreadable." + path + ": expected {status, error}");
      std::string status = why.value("status", "failed");
      failures[path] = FileRead{status == "denied" ? ReadStatus::kDenied : ReadStatus::kFailed, "", why.value("error", "unreadable")};
    }
  if (m.contains("uncaptured") && m["uncaptured"].is_array())
    for (const auto& path : m["uncaptured"])
      if (path.is_string()) failures[path.get<std::string>()] = FileRead{ReadStatus::kFailed, "", kNotCaptured};
  return failures;
}

std::unique_ptr<Source> with_capture_manifest(std::unique_ptr<Source> source) {
  if (auto info = read_capture_info(*source)) source->set_recorded_failures(capture_failures(info->manifest));
  return source;
}

ordered_json capture_summary_json(const CaptureInfo& info) {
  const auto& m = info.manifest;
  ordered_json j;
  j["format"] = info.format;
  for (const char* key : {"tool_version", "captured_at", "source", "as_root", "redacted"})
    if (m.contains(key)) j[key] = m[key];
  j["notes"] = info.notes;
  return j;
}

}  // namespace p2pcheck
