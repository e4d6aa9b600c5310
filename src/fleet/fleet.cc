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
#include <variant>

#include "p2pcheck/fleet/printable_summary.h"
#include "p2pcheck/fleet/saved_result.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/json_read.h"

namespace p2pcheck {

namespace {

// Directories of directories of captures are common (rack/host/...); deeper is a mistake or a loop.
constexpr int kMaxInputDepth = 8;

bool is_dir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Sorted names in `dir` without . and ..; nullopt with errno when it cannot be listed.
std::optional<std::vector<std::string>> entries_of(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::vector<std::string> names;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// A directory that is one machine for --dump: a captured root or a sosreport (at the top or in its
// one folder), or an lspci bundle, whose cpuinfo or lspci -t file is never an input alone.
bool is_one_machine(const std::string& dir, const std::vector<std::string>& names) {
  for (const char* marker : {"sys", "sos_commands"})
    if (std::find(names.begin(), names.end(), marker) != names.end()) return true;
  if (names.size() == 1 && (is_dir(dir + "/" + names[0] + "/sys") || is_dir(dir + "/" + names[0] + "/sos_commands")))
    return true;
  bool bundle_part = false;
  for (const auto& name : names) {
    std::string path = dir + "/" + name;
    if (is_dir(path)) return false;
    TextFormat f = sniff_text(read_input_head(path, 16384));
    bundle_part = bundle_part || f == TextFormat::kCpuinfo || f == TextFormat::kLspciTree;
  }
  return bundle_part;
}

bool looks_like_json(const std::string& head);

// The directories a walk has entered, by device and inode: links may lead back up (ten links to
// "." made 10^8 inputs) or to a directory already read.
struct Walk {
  std::map<std::pair<dev_t, ino_t>, std::string> seen;  // -> the path it was first reached by
  std::set<std::pair<dev_t, ino_t>> open;               // the directories being walked now
  std::set<std::pair<dev_t, ino_t>> reported;           // loops already listed, each once
  std::vector<std::string>& out;
  std::vector<UnreadableInput>& bad;
  std::vector<std::string>& skipped;
};

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parent_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
}

// A --gpu/--nvme selection kept beside an input (selection_beside), never an input itself.
bool is_selection_file(const std::string& name) {
  return name == "args" || (name.size() > 5 && name.compare(name.size() - 5, 5, ".args") == 0);
}

void expand(const std::string& path, int depth, Walk& walk) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    walk.bad.push_back({path, std::string("cannot open: ") + std::strerror(errno)});
    return;
  }
  if (S_ISREG(st.st_mode)) {
    // A file named on the command line is an input whatever it holds (its error says what it is
    // not); one found in a directory is a machine only when its content is a dump or a report.
    if (depth > 0 && is_selection_file(base_name(path))) return;
    if (depth > 0) {
      std::string head = read_input_head(path, 16384);
      // JSON is a machine when it is one of ours (a check --json; another of our documents is then
      // said to be the wrong kind); any other JSON, like any other text, is no machine.
      bool ours = looks_like_json(head) && head.find("\"p2pcheck.") != std::string::npos;
      if (!ours && !looks_like_dump(head)) {
        walk.skipped.push_back(path);
        return;
      }
    }
    walk.out.push_back(path);
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    // A FIFO would block the read forever; devices and sockets are no input either.
    walk.bad.push_back({path, std::string(file_type_name(st.st_mode)) + ", not a regular file or directory"});
    return;
  }
  std::pair<dev_t, ino_t> key{st.st_dev, st.st_ino};
  if (auto [it, fresh] = walk.seen.emplace(key, path); !fresh) {
    // A loop is listed once; a second way into a directory outside the walk reads it once.
    if (walk.open.count(key) && walk.reported.insert(key).second)
      walk.bad.push_back({path, "a link back to " + it->second + ", which is being read: a loop, not followed"});
    return;
  }
  auto names = entries_of(path);
  if (!names) {
    walk.bad.push_back({path, std::string("cannot list the directory: ") + std::strerror(errno)});
    return;
  }
  if (is_one_machine(path, *names)) {
    walk.out.push_back(path);
    return;
  }
  if (depth >= kMaxInputDepth) {
    walk.bad.push_back({path, "directories nested deeper than " + std::to_string(kMaxInputDepth) + " levels"});
    return;
  }
  std::size_t before = walk.out.size() + walk.bad.size() + walk.skipped.size();
  std::string prefix = path.back() == '/' ? path : path + "/";
  walk.open.insert(key);
  for (const auto& name : *names)
    if (name[0] != '.') expand(prefix + name, depth + 1, walk);
  walk.open.erase(key);
  if (walk.out.size() + walk.bad.size() + walk.skipped.size() == before)
    walk.bad.push_back({path, "an empty directory: no capture, dump or check --json file in it"});
}

// A saved report is text starting with '{'. JSON cannot hold raw control bytes, so a binary file
// whose first byte happens to be '{' is judged as a dump, not reported as broken JSON.
bool looks_like_json(const std::string& head) {
  auto first =
      std::find_if(head.begin(), head.end(), [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
  if (first == head.end() || *first != '{') return false;
  return std::none_of(head.begin(), head.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r';
  });
}

// An exception's message without the input's own name in front (the report names the input).
std::string reason_of(const std::string& input, const std::string& what) {
  std::string prefix = input + ": ";
  return what.rfind(prefix, 0) == 0 && what.size() > prefix.size() ? what.substr(prefix.size()) : what;
}

std::string fix_for(const HostSummary& host, const std::string& cause, bool is_finding) {
  if (is_finding) {
    for (const auto& f : host.findings)
      if (f.id == cause && !f.fix.empty()) return f.fix;
    return pair_cause_fix(cause);
  }
  if (cause == "pair.acs_redirect") {
    // The host's one parameter with every refused pair's ports (a pair's own names only its ports).
    if (host.fix)
      for (const auto& param : host.fix->cmdline_params)
        if (param.rfind("pci=disable_acs_redir=", 0) == 0) return "boot with " + param;
    for (const auto& p : host.pairs)
      if (p.cause == cause && !p.acs_fix.empty()) return "boot with " + p.acs_fix;
  }
  return pair_cause_fix(cause);
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
  std::string key = fix.kernel_cmdline + '\x1f' + fix.cmdline_cost;
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

std::string pair_cause_title(const std::string& cause) {
  if (cause == "pair.acs_redirect")
    return "GPU–NVMe pairs refused: ACS redirect on the switch ports sends their traffic up to the root complex, "
           "which the kernel does not allow here";
  if (cause == "pair.host_bridge")
    return "GPU–NVMe pairs refused through the root complex: the CPU is not one the kernel trusts for P2P and the "
           "host bridge is not on its allowlist";
  if (cause == "pair.not_supported") return "GPU–NVMe pairs refused by the kernel's P2PDMA rules";
  if (cause == "pair.acs_unknown")
    return "GPU–NVMe pairs undecided: the ACS control of a bridge on their path could not be read (needs root)";
  if (cause == "pair.path_unknown") return "GPU–NVMe pairs undecided: a fact the kernel's rule needs could not be read";
  if (cause == "kernel.config_p2pdma") return "GPU–NVMe pairs blocked by the kernel's CONFIG_PCI_P2PDMA";
  if (cause == "kernel.known_bad") return "GPU–NVMe pairs blocked: a kernel known to corrupt memory with P2PDMA";
  return "";
}

std::string pair_cause_fix(const std::string& cause) {
  if (cause == "pair.host_bridge")
    return "put the GPU and the NVMe under one PCIe switch (P2P then stays below it on any CPU), or use a platform "
           "whose CPU or host bridge the kernel allows";
  if (cause == "pair.acs_unknown" || cause == "pair.path_unknown")
    return "capture as root (sudo p2pcheck capture): ACS and port types are in config space beyond 64 bytes";
  return "";
}

std::vector<std::string> expand_inputs(const std::vector<std::string>& args, std::vector<UnreadableInput>& unreadable,
                                       std::vector<std::string>& skipped) {
  std::vector<std::string> out;
  Walk walk{{}, {}, {}, out, unreadable, skipped};
  for (const auto& arg : args) {
    if (arg.empty()) {
      unreadable.push_back({arg, "an empty name"});
      continue;
    }
    expand(arg, 0, walk);
  }
  return out;
}

std::optional<PairSelection> selection_beside(const std::string& input) {
  const std::string dir = parent_of(input), stem = file_stem(input);
  std::string file = dir + "/" + stem + ".args";
  struct stat st;
  if (stat(file.c_str(), &st) != 0) {
    file = dir + "/args";
    if (base_name(dir) != stem || stat(file.c_str(), &st) != 0) return std::nullopt;
  }
  const std::string text = read_input_file(file, 4096, "the selection file", "a --gpu/--nvme selection is shorter");
  auto bad = [&] { return Error(file, "expected --gpu LIST and --nvme LIST (the pairs to judge for " + input + ")"); };
  PairSelection selection;
  std::vector<std::string>* side = nullptr;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find_first_of(" \t\r\n", at);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (!side) {
      if (word != "--gpu" && word != "--nvme") throw bad();
      side = word == "--gpu" ? &selection.gpu : &selection.nvme;
      continue;
    }
    for (std::size_t from = 0, comma; from <= word.size(); from = comma + 1) {
      comma = std::min(word.find(',', from), word.size());
      if (comma == from) throw bad();
      if (side->size() == kMaxSelectors) throw Error(file, "more than " + std::to_string(kMaxSelectors) + " devices");
      side->push_back(word.substr(from, comma - from));
    }
    side = nullptr;
  }
  if (side || (selection.gpu.empty() && selection.nvme.empty())) throw bad();
  return selection;
}

HostSummary read_host(const std::string& input, const FleetOptions& options) {
  if (!is_dir(input) && looks_like_json(read_input_head(input, 4096))) {
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
  OpenedDump opened = open_dump(input, ImportOptions{});
  Source& source = *opened.source;
  const std::optional<CaptureInfo>& info = opened.info;
  CheckOptions check = options.check;
  // The pairs `capture --gpu/--nvme` recorded: fleet judges each machine as its own check would;
  // a selection file kept beside the input (the lab's args) names them for a dump that did not.
  if (info) check.selection = info->selection;
  if (auto beside = selection_beside(input)) check.selection = *beside;
  auto report = run_check(source, check);
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

  // (level, cause) -> its group; a host joins a group once however many findings or pairs it has.
  std::map<std::pair<int, std::string>, CauseGroup> groups;
  std::map<std::pair<int, std::string>, std::pair<bool, std::size_t>> title_source;  // from a finding? of which host
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
    auto join = [&](Level level, const std::string& cause, bool is_finding, const std::string& title,
                    std::size_t pairs) {
      CauseGroup& g = groups[{severity(level), cause}];
      if (g.hosts.empty() || g.hosts.back() != h) {
        std::string fix = fix_for(host, cause, is_finding);
        if (g.hosts.empty()) {
          g.cause = cause;
          g.level = level;
          g.fix = fix;
        } else if (fix != g.fix && g.fix_host.empty()) {
          g.fix_host = r.hosts[g.hosts.front()].host;
        }
        g.hosts.push_back(h);
      }
      // A finding's message names the cause best; fleet's words for a pair cause only stand in
      // where no finding has it. "as on HOST" when another host words the same finding otherwise.
      auto& [from_finding, from_host] = title_source[{severity(level), cause}];
      if (is_finding && !from_finding) {
        g.title = title;
        from_finding = true;
        from_host = h;
      } else if (is_finding && title != g.title && h != from_host && g.title_host.empty()) {
        g.title_host = r.hosts[from_host].host;
      } else if (g.title.empty()) {
        g.title = title;
      }
      g.pairs += pairs;
    };
    for (const auto& f : host.findings)
      if (f.concerns && (f.level == Level::kFail || f.level == Level::kUnknown))
        join(f.level, f.id, true, f.message, 0);
    for (const auto& p : host.pairs)
      if (!p.cause.empty())
        join(p.verdict == Verdict::kUnknown ? Level::kUnknown : Level::kFail, p.cause, false, pair_cause_title(p.cause),
             1);
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
  for (auto& [key, g] : groups) (g.level == Level::kFail ? r.failures : r.unknowns).push_back(std::move(g));
  auto by_size = [](const auto& a, const auto& b) {
    return a.hosts.size() != b.hosts.size() ? a.hosts.size() > b.hosts.size() : a.hosts.front() < b.hosts.front();
  };
  auto causes_by_size = [&](const CauseGroup& a, const CauseGroup& b) {
    return a.hosts.size() != b.hosts.size() ? a.hosts.size() > b.hosts.size() : a.cause < b.cause;
  };
  std::sort(r.failures.begin(), r.failures.end(), causes_by_size);
  std::sort(r.unknowns.begin(), r.unknowns.end(), causes_by_size);
  for (auto& [fp, t] : topologies) r.topologies.push_back(std::move(t));
  std::sort(r.topologies.begin(), r.topologies.end(), by_size);
  for (auto& [key, f] : fixes) r.fixes.push_back(std::move(f));
  std::sort(r.fixes.begin(), r.fixes.end(), by_size);

  if (r.failing)
    r.result = FleetResult::kFail;
  else if (!r.unreadable.empty() || r.hosts.empty())
    r.result = FleetResult::kUnreadable;
  else if (r.unknown)
    r.result = FleetResult::kUnknown;
  else if (r.no_pairs)
    r.result = FleetResult::kNoPairs;
  else
    r.result = FleetResult::kPass;
  return r;
}

}  // namespace p2pcheck
