// `p2pcheck fleet`: inputs, the parallel read, and the groups (fleet.h).
#include "p2pcheck/fleet/fleet.h"

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <variant>

#include "p2pcheck/fleet/printable_summary.h"
#include "p2pcheck/fleet/saved_result.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/input/input.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/json_read.h"

namespace p2pcheck {

namespace {

// An exception's message without the input's own name in front (the report names the input).
std::string reason_of(const std::string& input, const std::string& what) {
  std::string prefix = input + ": ";
  return what.rfind(prefix, 0) == 0 && what.size() > prefix.size() ? what.substr(prefix.size()) : what;
}

// The fix of one group on one host: that finding's own (same id, level and cause), else the pair
// cause's: the host's one ACS parameter, or the fix words its row gives.
std::string fix_for(const HostSummary& host, const CauseGroup& group, bool is_finding) {
  if (is_finding) {
    for (const auto& f : host.findings)
      if (f.concerns && f.id == group.cause && f.level == group.level && f.cause == group.detail && !f.fix.empty())
        return f.fix;
    return "";
  }
  if (row(group.pair_cause).fix == FixKind::kDisableAcsRedir) {
    // The host's one parameter with every refused pair's ports (a pair's own names only its ports).
    if (host.fix && !host.fix->acs_ports.empty()) return "boot with " + acs_param(*host.fix);
    for (const auto& p : host.pairs)
      if (p.cause == group.pair_cause && !p.acs_ports.empty())
        return "boot with " + disable_acs_redir_param(p.acs_ports);
  }
  return pair_cause_fix(group.pair_cause);
}

// host2 before host10: runs of digits compare as numbers (by length without leading zeros, then
// digit by digit), everything else byte by byte; equal numbers with different zeros fall back to bytes.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      std::size_t si = i, sj = j;
      while (si + 1 < ei && a[si] == '0') ++si;
      while (sj + 1 < ej && b[sj] == '0') ++sj;
      if (ei - si != ej - sj) return ei - si < ej - sj;
      int c = a.compare(si, ei - si, b, sj, ej - sj);
      if (c != 0) return c < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if (i < a.size() || j < b.size()) return j < b.size();
  return a < b;
}

// What makes two hosts' whole fixes the same: every line of it.
std::string fix_key(const HostFix& fix) {
  std::string key = acs_param(fix);
  for (const auto& s : fix.steps) key += '\x1e' + s.kind + '\x1f' + s.subject + '\x1f' + s.text + '\x1f' + s.cost;
  return key;
}

}  // namespace

const char* to_string(FleetResult result) {
  switch (result) {
    case FleetResult::kPass: return "PASS";
    case FleetResult::kFail: return "FAIL";
    case FleetResult::kUnknown: return "UNKNOWN";
    case FleetResult::kNoPairs: return "NO PAIRS";
    case FleetResult::kUnreadable: return "UNREADABLE INPUT";
  }
  return "UNKNOWN";
}

std::string pair_cause_fix(Cause cause) {
  const CauseRow& c = row(cause);
  if (c.fix_words) return c.fix_words;
  const FixRow& fix = row(c.fix);
  return fix.words ? fix.words : "";  // none, or each host's own (the ACS list)
}

HostSummary read_host(const std::string& input, const FleetOptions& options) {
  // The input's head read once: it says a saved report, and otherwise opens the dump.
  const IdentifiedInput identified = identify_input(input);
  if (identified.kind == InputKind::kCheckJson) {
    if (options.check.what_if_kernel || !options.check.supplied.empty())
      throw Error(input,
                  "a saved check --json was judged when it was made; --what-if-kernel and supplied facts need the "
                  "capture");
    auto doc =
        parse_outside_json(read_input_file(input, kMaxFileBytes, "the file", "no check --json is that large"), input);
    if (!doc) throw Error(input, "not valid JSON; expected a saved `p2pcheck check --json`");
    HostSummary saved = summarize_check_json(*doc, input);
    recompute_saved_result(saved);  // judged again from its pairs and findings, not taken as written
    return saved;
  }
  // The manifest parsed once, as the dump is opened (a replay's banner reads it the same way).
  OpenedDump opened = open_input_path(input, identified, ImportOptions{});
  Source& source = *opened.source;
  const std::optional<CaptureInfo>& info = opened.info;
  CheckOptions check = options.check;
  // The pairs `capture --gpu/--nvme` recorded: fleet judges each machine as its own check would;
  // a selection file kept beside the input (the lab's args) names them for a dump that did not.
  if (info) check.selection = info->selection;
  if (info) check.not_carried = uncarried_areas(*info);  // a plan's drivers, IOMMU, storage
  if (auto beside = selection_beside(input)) check.selection = *beside;
  auto report = run_check(load_input_state(source, info ? &*info : nullptr, check.load), source, check);
  return summarize_report(*report, info ? &info->manifest : nullptr, input);
}

FleetReport run_fleet(const std::vector<std::string>& inputs, std::vector<UnreadableInput> unreadable,
                      const FleetOptions& options) {
  if (inputs.empty() && unreadable.empty()) throw UsageError("fleet: no input given");
  using Outcome = std::variant<std::monostate, HostSummary, UnreadableInput>;
  std::vector<Outcome> outcomes(inputs.size());
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex progress_lock;
  auto worker = [&] {
    for (std::size_t i = next++; i < inputs.size(); i = next++) {
      const std::string& input = inputs[i];
      try {
        outcomes[i] = read_host(input, options);
      } catch (const Error& e) {
        outcomes[i] = UnreadableInput{input, reason_of(input, e.what())};
      } catch (const UsageError& e) {
        outcomes[i] = UnreadableInput{input, reason_of(input, e.what())};
      } catch (const std::exception& e) {
        // A last resort, as in main: one bad input must not take the other 999 down with it.
        outcomes[i] = UnreadableInput{input, std::string("unexpected error: ") + e.what()};
      }
      std::lock_guard<std::mutex> hold(progress_lock);
      ++done;
      if (options.progress) options.progress(done, inputs.size());
    }
  };
  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(std::max<std::size_t>(1, inputs.size())));
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();

  std::vector<HostSummary> hosts;
  for (auto& o : outcomes) {
    if (auto* h = std::get_if<HostSummary>(&o)) hosts.push_back(std::move(*h));
    if (auto* u = std::get_if<UnreadableInput>(&o)) unreadable.push_back(std::move(*u));
  }
  // Names from input escaped once here, for every output (printable_summary.h).
  for (auto& h : hosts) make_printable(h);
  for (auto& u : unreadable) make_printable(u);
  return build_fleet_report(std::move(hosts), std::move(unreadable), inputs.size());
}

namespace {

// The fleet's cause groups as hosts join them: (level, cause, detail) -> its group; a host joins a
// group once however many findings or pairs it has.
class CauseGrouping {
 public:
  explicit CauseGrouping(const std::vector<HostSummary>& hosts) : hosts_(hosts) {}

  // Host `h`'s failing and unknown findings and pair causes.
  void add_host(std::size_t h) {
    const HostSummary& host = hosts_[h];
    // A host without a pair has nothing for a cause to block: it is counted apart (no_pairs), in
    // no group but that of fleet's own note that its saved report was not what it said.
    const bool has_pairs = host.result != Result::kNoPairs;
    for (const auto& f : host.findings)
      if (f.concerns && (f.level == Level::kFail || f.level == Level::kUnknown) &&
          (has_pairs || f.id == kSavedResultFinding))
        join(h, f.level, f.id, f.cause, Cause::kNone, f.message, 0);
    if (!has_pairs) return;
    // A fabric has hundreds of thousands of pairs and a few causes: each (level, cause) joins once.
    std::map<std::pair<Level, Cause>, std::size_t> pairs_by_cause;
    for (const auto& p : host.pairs)
      if (p.cause != Cause::kNone)
        ++pairs_by_cause[{p.verdict == Verdict::kUnknown ? Level::kUnknown : Level::kFail, p.cause}];
    // A kernel cause (kernel.config_p2pdma) joins its finding's group.
    for (const auto& [at, count] : pairs_by_cause)
      join(h, at.first, token(at.second), "", at.second, row(at.second).title, count);
  }

  // The groups, failures and unknowns apart, the most hosts first.
  void take(std::vector<CauseGroup>& failures, std::vector<CauseGroup>& unknowns) {
    for (auto& [key, g] : groups_) (g.level == Level::kFail ? failures : unknowns).push_back(std::move(g));
    auto causes_by_size = [](const CauseGroup& a, const CauseGroup& b) {
      if (a.hosts.size() != b.hosts.size()) return a.hosts.size() > b.hosts.size();
      return a.cause != b.cause ? a.cause < b.cause : a.detail < b.detail;
    };
    std::sort(failures.begin(), failures.end(), causes_by_size);
    std::sort(unknowns.begin(), unknowns.end(), causes_by_size);
  }

 private:
  // Level, the cause's token (a finding id, or the pair cause's row: one token per Cause), detail;
  // the token orders the groups as every view lists them.
  using GroupKey = std::tuple<int, std::string, std::string>;

  // `pair`: the pair cause joining, kNone for a finding.
  void join(std::size_t h, Level level, const std::string& cause, const std::string& detail, Cause pair,
            const std::string& title, std::size_t pairs) {
    const HostSummary& host = hosts_[h];
    const bool is_finding = pair == Cause::kNone;
    const GroupKey key{severity(level), cause, detail};
    CauseGroup& g = groups_[key];
    if (!is_finding) g.pair_cause = pair;
    if (g.hosts.empty() || g.hosts.back() != h) {
      if (g.hosts.empty()) {
        g.cause = cause;
        g.detail = detail;
        g.level = level;
        g.fix = fix_for(host, g, is_finding);
      } else if (fix_for(host, g, is_finding) != g.fix && g.fix_host.empty()) {
        g.fix_host = hosts_[g.hosts.front()].host;
      }
      g.hosts.push_back(h);
    }
    // A finding's message names the cause best; fleet's words for a pair cause only stand in
    // where no finding has it. "as on HOST" when another host words the same finding otherwise.
    auto& [from_finding, from_host] = title_source_[key];
    if (is_finding && !from_finding) {
      g.title = title;
      from_finding = true;
      from_host = h;
    } else if (is_finding && title != g.title && h != from_host && g.title_host.empty()) {
      g.title_host = hosts_[from_host].host;
    } else if (g.title.empty()) {
      g.title = title;
    }
    g.pairs += pairs;
  }

  const std::vector<HostSummary>& hosts_;
  std::map<GroupKey, CauseGroup> groups_;
  std::map<GroupKey, std::pair<bool, std::size_t>> title_source_;  // from a finding? of which host
};

FleetResult fleet_result(const FleetReport& r) {
  if (r.failing) return FleetResult::kFail;
  if (!r.unreadable.empty() || r.hosts.empty()) return FleetResult::kUnreadable;
  if (r.unknown) return FleetResult::kUnknown;
  if (r.no_pairs) return FleetResult::kNoPairs;
  return FleetResult::kPass;
}

// Groups (topologies, fixes) from a map, the most hosts first.
template <typename Group>
std::vector<Group> by_size(std::map<std::string, Group>& groups) {
  std::vector<Group> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::sort(out.begin(), out.end(), [](const Group& a, const Group& b) {
    return a.hosts.size() != b.hosts.size() ? a.hosts.size() > b.hosts.size() : a.hosts.front() < b.hosts.front();
  });
  return out;
}

}  // namespace

FleetReport build_fleet_report(std::vector<HostSummary> hosts, std::vector<UnreadableInput> unreadable,
                               std::size_t inputs) {
  FleetReport r;
  r.inputs = inputs;
  std::sort(hosts.begin(), hosts.end(), [](const HostSummary& a, const HostSummary& b) {
    return a.host != b.host ? natural_less(a.host, b.host) : natural_less(a.input, b.input);
  });
  std::sort(unreadable.begin(), unreadable.end(),
            [](const UnreadableInput& a, const UnreadableInput& b) { return a.input < b.input; });
  r.hosts = std::move(hosts);
  r.unreadable = std::move(unreadable);

  CauseGrouping causes(r.hosts);
  std::map<std::string, TopologyGroup> topologies;
  std::map<std::string, FixGroup> fixes;
  for (std::size_t h = 0; h < r.hosts.size(); ++h) {
    const HostSummary& host = r.hosts[h];
    switch (host.result) {
      case Result::kPass: ++r.passing; break;
      case Result::kFail: ++r.failing; break;
      case Result::kUnknown: ++r.unknown; break;
      case Result::kNoPairs: ++r.no_pairs; break;
    }
    causes.add_host(h);
    if (!host.fix) {
      r.without_fix.push_back(h);
    } else if (!host.fix->empty()) {
      FixGroup& f = fixes[fix_key(*host.fix)];
      if (f.hosts.empty()) f.fix = *host.fix;
      f.hosts.push_back(h);
    }
    if (!host.topology.empty()) {
      TopologyGroup& t = topologies[host.topology];
      t.fingerprint = host.topology;
      t.hosts.push_back(h);
    }
  }
  causes.take(r.failures, r.unknowns);
  r.topologies = by_size(topologies);
  r.fixes = by_size(fixes);
  r.result = fleet_result(r);
  return r;
}

}  // namespace p2pcheck
