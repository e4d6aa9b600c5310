// Loads the watch probe (src/live/bpf/watch.bpf.c, embedded by bpftool's skeleton) with only the
// programs the hook plan enables, attaches each one on its own so one refusal is reported per
// hook, and reads the counters back. libbpf relocates the object against the running kernel's
// BTF (CO-RE) itself.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "p2pcheck/live/watch_probe.h"
#include "watch.skel.h"
#include "watch_shared.h"

namespace p2pcheck {

namespace {

// libbpf's messages of the current load, kept for the error a user sees. The verifier's log comes
// as one message of many lines, and its last lines say why: the tail is kept, not the head.
std::string g_libbpf_log;
int collect_log(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, again);
  va_end(again);
  if (n <= 0) return n;
  std::string message(static_cast<std::size_t>(n) + 1, '\0');
  std::vsnprintf(message.data(), message.size(), format, args);
  message.pop_back();
  g_libbpf_log += message;
  constexpr std::size_t kKeep = 16384;
  if (g_libbpf_log.size() > kKeep) g_libbpf_log.erase(0, g_libbpf_log.size() - kKeep);
  return n;
}

std::string last_lines(const std::string& log, std::size_t keep) {
  std::size_t pos = log.size(), lines = 0;
  while (pos > 0 && lines <= keep) {
    pos = log.rfind('\n', pos - 1);
    if (pos == std::string::npos) return log;
    ++lines;
  }
  return log.substr(pos + 1);
}

std::string fixed(const char* field, std::size_t size) { return std::string(field, strnlen(field, size)); }

WatchRow to_row(const watch_key& key, const watch_value& value) {
  WatchRow row;
  row.provider = fixed(key.provider, sizeof key.provider);
  row.client = fixed(key.client, sizeof key.client);
  row.disk = fixed(key.disk, sizeof key.disk);
  row.comm = fixed(key.comm, sizeof key.comm);
  row.tgid = key.tgid;
  row.path = key.path <= WATCH_PATH_STACK_REFUSED ? static_cast<WatchPath>(key.path) : WatchPath::kHost;
  row.dir = key.dir <= WATCH_DIR_OTHER ? static_cast<WatchDir>(key.dir) : WatchDir::kOther;
  row.requests = value.requests;
  row.bytes = value.bytes;
  row.segments = value.segments;
  row.errors = value.errors;
  row.error_bytes = value.error_bytes;
  row.last_status = value.last_status;
  row.requeues = value.requeues;
  row.in_tree = key.tree != 0;
  return row;
}

class BpfWatchProbe : public WatchProbe {
 public:
  BpfWatchProbe(watch_bpf* skel, WatchHookPlan plan, std::vector<bpf_link*> links)
      : skel_(skel), plan_(std::move(plan)), links_(std::move(links)), start_(std::chrono::steady_clock::now()) {}
  ~BpfWatchProbe() override {
    for (bpf_link* link : links_) bpf_link__destroy(link);
    watch_bpf__destroy(skel_);
  }
  const WatchHookPlan& hooks() const override { return plan_; }

  WatchSnapshot poll() override {
    WatchSnapshot snap;
    snap.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const int fd = bpf_map__fd(skel_->maps.rows);
    watch_key key{}, next{};
    watch_value value{};
    const void* prev = nullptr;
    // Rows are never deleted, so the walk cannot lose its place; the map's size bounds it.
    for (int n = 0; n < WATCH_MAX_ROWS && bpf_map_get_next_key(fd, prev, &next) == 0; ++n) {
      if (bpf_map_lookup_elem(fd, &next, &value) == 0) snap.rows.push_back(to_row(next, value));
      key = next;
      prev = &key;
    }
    watch_totals totals{};
    const std::uint32_t zero = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.totals), &zero, &totals) == 0) {
      snap.unpaired = totals.unpaired;
      snap.dropped_rows = totals.dropped_rows;
      snap.inflight_full = totals.inflight_full;
      snap.tree_full = totals.tree_full;
    }
    return snap;
  }

  std::string follow(std::uint32_t pid) override {
    const std::uint8_t one = 1;
    if (bpf_map_update_elem(bpf_map__fd(skel_->maps.tree), &pid, &one, BPF_ANY) != 0)
      return std::string("cannot follow pid ") + std::to_string(pid) + ": " + std::strerror(errno);
    return "";
  }

 private:
  watch_bpf* skel_;
  WatchHookPlan plan_;
  std::vector<bpf_link*> links_;
  std::chrono::steady_clock::time_point start_;
};

WatchStart failed(WatchStart start, const std::string& what, int err) {
  start.error_number = err;
  start.error = what + ": " + std::strerror(err);
  const std::string log = last_lines(g_libbpf_log, 12);
  if (!log.empty()) start.error += "\nlibbpf: " + log;
  return start;
}

}  // namespace

bool watch_probe_built() { return true; }

WatchStart start_watch_probe(const WatchHookPlan& plan) {
  WatchStart start;
  start.hooks = plan;
  g_libbpf_log.clear();
  libbpf_set_print(collect_log);
  watch_bpf* skel = watch_bpf__open();
  if (!skel) return failed(std::move(start), "opening the watch probe", errno ? errno : EINVAL);
  for (const WatchHook& hook : plan.hooks)
    if (bpf_program* prog = bpf_object__find_program_by_name(skel->obj, hook.program.c_str()))
      bpf_program__set_autoload(prog, hook.enabled);
  if (int err = watch_bpf__load(skel)) {
    watch_bpf__destroy(skel);
    return failed(std::move(start), "loading the watch probe into the kernel", err < 0 ? -err : err);
  }
  std::vector<bpf_link*> links;
  for (WatchHook& hook : start.hooks.hooks) {
    if (!hook.enabled) continue;
    bpf_program* prog = bpf_object__find_program_by_name(skel->obj, hook.program.c_str());
    bpf_link* link = prog ? bpf_program__attach(prog) : nullptr;
    if (!link) {
      hook.error = std::strerror(errno ? errno : ENOENT);
      continue;
    }
    hook.attached = true;
    links.push_back(link);
  }
  start.probe = std::make_unique<BpfWatchProbe>(skel, start.hooks, std::move(links));
  return start;
}

}  // namespace p2pcheck
