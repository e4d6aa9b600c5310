#include "p2pcheck/verify/verify_report.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json directions_json(const std::vector<Direction>& dirs) {
  json out = json::array();
  for (Direction d : dirs) out.push_back(to_string(d));
  return out;
}

std::string colored(const TextStyle& style, const char* code, const std::string& text) {
  return style.color ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
}
const char* outcome_color(Outcome o) {
  switch (o) {
    case Outcome::kPassed: return "32";
    case Outcome::kNotRun: return "33";
    default: return "31";
  }
}
const char* level_color(Level l) { return l == Level::kPass ? "32" : l == Level::kFail ? "31" : "33"; }

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string pair_title(const PairPlan& pp) {
  const DevicePair& pair = pp.decision.walk.pair();
  return pp.provider_role + " " + pair.gpu.str() + " <-> " + (pp.nvme_name.empty() ? "NVMe" : pp.nvme_name) + " " +
         pair.nvme.str();
}

std::string device_word(const PairPlan& pp) {
  if (pp.provider_role == "GPU") return "GPU";
  if (pp.provider_driver == "nvme") return "CMB";
  return "p2pmem";
}

std::string target_text(const TargetPlan& t) {
  std::string on = t.block_device + (t.fstype.empty() ? "" : ", " + t.fstype + " at " + t.mountpoint);
  if (t.kind == TargetPlan::Kind::kRawDevice) return "raw " + t.path + " from byte " + std::to_string(t.raw_offset);
  return "scratch file in " + t.path + " (" + on + ")";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.3f s" : "%.1f s", s);
  return buf;
}

const char* p2p_kind(Direction d) { return d == Direction::kToDevice ? "write" : "read"; }

json mismatch_json(const DataMismatch& m, std::uint64_t start) {
  char e[8], f[8];
  std::snprintf(e, sizeof e, "0x%02x", m.expected);
  std::snprintf(f, sizeof f, "0x%02x", m.found);
  return {{"offset", m.offset},
          {"block", (m.offset - start) / kPatternBlock},
          {"expected", e},
          {"found", f},
          {"bad_bytes", m.count}};
}

json target_json(const PairPlan& pp, const PairResult& r) {
  if (!pp.target) return nullptr;
  const TargetPlan& t = *pp.target;
  const bool raw = t.kind == TargetPlan::Kind::kRawDevice;
  return {{"kind", raw ? "raw" : "file"},
          {"path", t.path},
          {"file", raw ? json(nullptr) : text_or_null(r.target_file)},
          {"block_device", t.block_device},
          {"fstype", text_or_null(t.fstype)},
          {"mountpoint", text_or_null(t.mountpoint)},
          {"stacked_layers", t.stacked_layers},
          {"offset", raw ? t.raw_offset : 0},
          {"removed", raw || r.target_file.empty() ? json(nullptr) : json(r.target_removed)},
          {"notes", t.notes}};
}

json direction_json(const PairPlan& pp, const DirectionResult& d) {
  json j = {
      {"direction", to_string(d.direction)},
      {"flow", direction_label(pp, d.direction)},
      {"p2p", p2p_kind(d.direction)},
      {"outcome", to_string(d.outcome)},
      {"refused_by", text_or_null(d.refused_by)},
      {"reason", d.reason},
      {"errno", d.error ? json(errno_name(d.error)) : json(nullptr)},
      {"errno_value", d.error ? json(-d.error) : json(nullptr)},
      {"error_text", text_or_null(d.error_text)},
      {"bytes", d.bytes},
      {"seconds", d.seconds},
      {"throughput_bytes_per_s", opt(d.throughput)},
      {"mismatch", d.mismatch ? mismatch_json(*d.mismatch, pp.target ? pp.target->raw_offset : 0) : json(nullptr)}};
  if (d.counters)
    j["counters"] = {
        {"file", d.counters->file},         {"before", opt(d.counters->before)},     {"after", opt(d.counters->after)},
        {"expected", d.counters->expected}, {"proof", to_string(d.counters->proof)}, {"note", d.counters->note}};
  else
    j["counters"] = nullptr;
  j["notes"] = d.notes;
  return j;
}

const char* pair_status(const PairPlan& pp, const PairResult& r) {
  if (pp.skipped) return "skipped";
  if (!pp.refusal.empty()) return "refused";
  if (!r.problem.empty()) return "not_started";
  return "ran";
}

}  // namespace

std::string direction_label(const PairPlan& pp, Direction d) {
  return d == Direction::kToDevice ? "storage -> " + device_word(pp) : device_word(pp) + " -> storage";
}

std::string rate_text(double bps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, bps >= 1e9 ? "%.2f GB/s" : "%.1f MB/s", bps >= 1e9 ? bps / 1e9 : bps / 1e6);
  return buf;
}

std::string verify_plan_text(const VerifyPlan& plan, const TextStyle& style) {
  const VerifyOptions& o = plan.options;
  std::string out = "p2pcheck verify — " + plan.source + ", kernel " +
                    (plan.rules.release.empty() ? "unknown" : plan.rules.release) + "; engine " +
                    (o.engine ? to_string(*o.engine) : "auto") + ", timeout " +
                    std::to_string(static_cast<int>(o.timeout_s)) + " s per direction" +
                    (o.directions.size() == 1 ? std::string("; only ") + to_string(o.directions[0]) : "") + "\n";
  for (const auto& w : plan.warnings) out += colored(style, "33", "warning: ") + w + "\n";
  std::vector<std::string> skipped;
  for (const auto& pp : plan.pairs) {
    if (pp.skipped) {
      skipped.push_back(pp.nvme_name.empty() ? pp.decision.walk.pair().nvme.str() : pp.nvme_name);
      continue;
    }
    out += "  " + pair_title(pp) + ": ";
    if (!pp.refusal.empty()) {
      out += colored(style, level_color(pp.refusal_level), pp.refusal_level == Level::kFail ? "REFUSED" : "NOT RUN") +
             " — " + pp.refusal + "\n";
      continue;
    }
    out += std::string(to_string(*pp.engine)) + ", " + format_size(pp.size) + " each way via " +
           target_text(*pp.target) + "\n";
    for (const auto& n : pp.target->notes) out += "      note: " + n + "\n";
    for (const auto& n : pp.notes) out += "      note: " + n + "\n";
  }
  if (!skipped.empty()) {
    std::sort(skipped.begin(), skipped.end());
    skipped.erase(std::unique(skipped.begin(), skipped.end()), skipped.end());
    std::string names;
    for (const auto& s : skipped) names += (names.empty() ? "" : ", ") + s;
    out += "  not tested (no target on them): " + names + "\n";
  }
  return out;
}

namespace {

// One direction's outcome, and for a transfer that moved data its size, time and rate.
std::string direction_text(const PairPlan& pp, const DirectionResult& d, const TextStyle& style) {
  std::string line = "  " + pad(direction_label(pp, d.direction), 16) + " " +
                     colored(style, outcome_color(d.outcome), pad(upper(to_string(d.outcome)), 9)) + " ";
  if (d.outcome == Outcome::kRefused) line += "by the " + d.refused_by + ": ";
  line += d.reason;
  if (d.bytes) {
    line += "\n" + std::string(28, ' ') + format_size(d.bytes) + " in " + seconds_text(d.seconds);
    if (d.throughput) line += ", " + rate_text(*d.throughput);
    if (pp.ceiling) line += " (path ceiling " + rate_text(*pp.ceiling) + ")";
  }
  std::string out = line + "\n";
  for (const auto& n : d.notes) out += std::string(28, ' ') + n + "\n";
  return out;
}

// The AER counters on the path: which moved, or why none could be seen to.
std::string aer_text(const PairResult& r, const TextStyle& style) {
  std::string out;
  const size_t reporting = r.aer_devices.size() - r.aer_not_reported.size();
  if (reporting == 0) {
    out += "  AER       none of the " + std::to_string(r.aer_devices.size()) +
           " device(s) on the path reports AER counters (no AER capability, or a kernel without PCIe AER): link "
           "errors would go unseen\n";
  } else if (r.aer_changes.empty()) {
    out +=
        "  AER       no counter moved on the " + std::to_string(reporting) + " device(s) on the path that report AER" +
        (r.aer_not_reported.empty() ? "" : " (" + std::to_string(r.aer_not_reported.size()) + " report none)") + "\n";
  } else {
    for (const auto& c : r.aer_changes)
      out += "  " + colored(style, "33", "AER") + "       " + c.bdf.str() + " " + c.counter + ": " +
             std::to_string(c.before) + " -> " + std::to_string(c.after) + "\n";
  }
  for (const auto& u : r.aer_unreadable) out += "  AER       unreadable: " + u + "\n";
  return out;
}

// One pair that was not skipped: its verdict, then why it did not run, or each direction, the AER
// counters and the kernel's messages.
std::string pair_result_text(const PairPlan& pp, const PairResult& r, const TextStyle& style) {
  const PairDecision& dec = pp.decision;
  std::string out = "\n" + pair_title(pp) + "\n";
  out += "  verdict   " + std::string(to_string(dec.verdict)) + " (" + to_string(dec.map_type) + "): " + pp.rule + "\n";
  if (!pp.refusal.empty())
    return out + "  " +
           colored(style, level_color(pp.refusal_level), pp.refusal_level == Level::kFail ? "REFUSED" : "NOT RUN") +
           "   " + pp.refusal + "\n";
  out += "  engine    " + std::string(to_string(*pp.engine));
  for (const auto& f : r.engine_facts) out += "; " + f;
  out += "\n";
  if (!r.problem.empty()) return out + "  " + colored(style, "33", "NOT RUN") + "   " + r.problem + "\n";
  out += "  target    " + (r.target_file.empty() ? pp.target->path : r.target_file) + ", " + format_size(pp.size) +
         (pp.target->kind == TargetPlan::Kind::kScratchFile ? (r.target_removed ? ", removed" : ", NOT removed") : "") +
         "\n";
  for (const auto& d : r.directions) out += direction_text(pp, d, style);
  out += aer_text(r, style);
  if (!r.kernel_log_problem.empty()) {
    out += "  kernel    log not read: " + r.kernel_log_problem + "\n";
  } else if (!r.kernel_log.empty()) {
    out += "  kernel    " + std::to_string(r.kernel_log.size()) + " message(s) while it ran:\n";
    for (const auto& l : r.kernel_log) out += "              " + l + "\n";
  }
  for (const auto& n : r.notes) out += "  note      " + n + "\n";
  return out;
}

}  // namespace

std::string verify_text(const VerifyReport& report, const TextStyle& style) {
  const VerifyPlan& plan = *report.plan;
  std::string out;
  for (size_t i = 0; i < plan.pairs.size(); ++i)
    if (!plan.pairs[i].skipped) out += pair_result_text(plan.pairs[i], report.results[i], style);
  out += "\nRESULT: " + colored(style, level_color(report.result), to_string(report.result)) + " — " + report.summary;
  if (report.abandoned) out += "; a transfer did not complete, so nothing after it was started";
  return out + "\n";
}

namespace {

json aer_json(const PairResult& r) {
  json aer_dev = json::array(), changes = json::array(), not_rep = json::array();
  for (const auto& b : r.aer_devices) aer_dev.push_back(b.str());
  for (const auto& c : r.aer_changes)
    changes.push_back({{"bdf", c.bdf.str()}, {"counter", c.counter}, {"before", c.before}, {"after", c.after}});
  for (const auto& b : r.aer_not_reported) not_rep.push_back(b.str());
  return {{"devices", aer_dev}, {"changes", changes}, {"not_reported", not_rep}, {"unreadable", r.aer_unreadable}};
}

// One pair: what was planned for it, and what happened.
json pair_json(const PairPlan& pp, const PairResult& r) {
  const PairDecision& d = pp.decision;
  json p;
  p["gpu"] = d.walk.pair().gpu.str();
  p["provider_role"] = pp.provider_role;
  p["provider_driver"] = text_or_null(pp.provider_driver);
  p["nvme"] = d.walk.pair().nvme.str();
  p["nvme_name"] = text_or_null(pp.nvme_name);
  p["verdict"] = to_string(d.verdict);
  p["map_type"] = to_string(d.map_type);
  p["distance"] = opt(d.distance);
  p["rule"] = pp.rule;
  p["status"] = pair_status(pp, r);
  p["refusal"] = text_or_null(pp.refusal);
  p["problem"] = text_or_null(r.problem);
  p["engine"] = pp.engine ? json(to_string(*pp.engine)) : json(nullptr);
  p["engine_facts"] = r.engine_facts;
  p["target"] = target_json(pp, r);
  p["size_bytes"] = pp.size;
  p["chunk_bytes"] = pp.chunk;
  p["seed"] = r.seed;
  p["bandwidth_ceiling_bytes_per_s"] = opt(pp.ceiling);
  json dirs = json::array();
  for (const auto& dr : r.directions) dirs.push_back(direction_json(pp, dr));
  p["directions"] = dirs;
  p["aer"] = aer_json(r);
  p["kernel_log"] = {{"lines", r.kernel_log}, {"problem", text_or_null(r.kernel_log_problem)}};
  json notes = pp.notes;
  for (const auto& n : r.notes) notes.push_back(n);
  p["notes"] = notes;
  return p;
}

}  // namespace

json verify_json(const VerifyReport& report) {
  const VerifyPlan& plan = *report.plan;
  const VerifyOptions& o = plan.options;
  json j;
  j["schema"] = "p2pcheck.verify";
  j["schema_version"] = kJsonSchemaVersion;
  j["tool_version"] = kToolVersion;
  j["source"] = plan.source;
  j["result"] = to_string(report.result);
  j["summary"] = report.summary;
  j["abandoned"] = report.abandoned;
  j["finished_at"] = text_or_null(report.finished_at);
  j["kernel"] = {{"release", text_or_null(plan.rules.release)},
                 {"p2pdma_config", tri_json(plan.rules.p2pdma_enabled)},
                 {"known_bad", plan.rules.known_bad ? json(plan.rules.known_bad->name) : json(nullptr)},
                 {"nvme_io_timeout_s", opt(plan.io_timeout_s)}};
  j["options"] = {{"engine", o.engine ? to_string(*o.engine) : "auto"},
                  {"size_bytes", opt(o.size)},
                  {"timeout_s", o.timeout_s},
                  {"directions", directions_json(o.directions)},
                  {"force", o.force},
                  {"try_anyway", o.try_anyway},
                  {"raw", !o.raw_devices.empty()},
                  {"offset", opt(o.offset)}};
  j["warnings"] = plan.warnings;
  json pairs = json::array();
  for (size_t i = 0; i < plan.pairs.size(); ++i) pairs.push_back(pair_json(plan.pairs[i], report.results[i]));
  j["pairs"] = pairs;
  return j;
}

void save_verify_results(const nlohmann::ordered_json& doc, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string(), "cannot create the directory: " + ec.message());
  // Written as root into a shared place: never through a symbolic link someone planted, neither the
  // directory, the file, nor a temporary file of a name anyone could predict.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(dir.string(), "is not a directory (a symbolic link?); refusing to write the results there");
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error(path, "exists and is not a regular file (a symbolic link?); refusing to replace it");
  std::string tmp = (dir / (p.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());  // O_CREAT|O_EXCL, mode 0600, a random name
  if (fd < 0) throw Error(dir.string(), std::string("cannot create a temporary file: ") + std::strerror(errno));
  const std::string text = json_text(doc) + "\n";
  std::size_t done = 0;
  int err = 0;
  while (done < text.size() && !err) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n > 0)
      done += static_cast<std::size_t>(n);
    else if (n == 0 || errno != EINTR)
      err = n == 0 ? EIO : errno;  // a write that moves nothing would loop forever
  }
  if (!err && (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0)) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    throw Error(path, std::string("cannot write the results: ") + std::strerror(err));
  }
}

}  // namespace p2pcheck
