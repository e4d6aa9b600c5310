// `p2pcheck watch`: which block I/O really went peer-to-peer, per GPU-NVMe pair, while the user's
// own job runs (an eBPF probe, live/watch_loader.cc), or replayed from a recording. The decision
// model is watch/; this file picks the source, runs the probe or the command, and prints.
#include "watch_command.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "output_file.h"
#include "p2pcheck/live/device_actions.h"
#include "p2pcheck/live/watch_probe.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/input_file.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/source.h"
#include "p2pcheck/watch/watch_json.h"
#include "watch_run.h"

namespace p2pcheck::cli {
namespace {

constexpr const char* kKernelBtf = "/sys/kernel/btf/vmlinux";

// The kernel's BTF: --btf FILE, else the source's /sys/kernel/btf/vmlinux. nullopt with `why`
// when there is none to read (a kernel without CONFIG_DEBUG_INFO_BTF, a dump that has none).
std::optional<std::string> read_kernel_btf(Source& source, const WatchOptions& w, std::string& why) {
  if (!w.btf.empty()) return read_input_file(w.btf, kMaxFileBytes, "BTF", "no kernel's BTF is that large");
  FileRead r = source.read(kKernelBtf);
  if (r.ok()) return r.bytes;
  switch (r.status) {
    case ReadStatus::kMissing:
      why = std::string("no ") + kKernelBtf + " in " + source.describe() +
            " (a kernel built without CONFIG_DEBUG_INFO_BTF, or a capture that did not keep it)";
      break;
    case ReadStatus::kNotCarried: why = std::string(kKernelBtf) + ": " + r.error; break;
    default: why = std::string("cannot read ") + kKernelBtf + ": " + r.error; break;
  }
  return std::nullopt;
}

std::string hooks_text(const WatchHookPlan& plan, const std::string& from) {
  std::string out = "watch hooks for " + printable(from) + "\n";
  out += "  P2P decision: " + std::string(to_string(plan.decision));
  if (plan.decision == DecisionHook::kNone) out += " (no P2PDMA in this kernel: nothing here can go peer-to-peer)";
  out += "\n  provider: " + std::string(to_string(plan.provider)) + "\n";
  if (plan.bus_addr)
    out += "  map types: NOT_SUPPORTED=" + std::to_string(plan.not_supported.value_or(-1)) +
           " BUS_ADDR=" + std::to_string(*plan.bus_addr) +
           " THRU_HOST_BRIDGE=" + std::to_string(plan.thru_host_bridge.value_or(-1)) + "\n";
  out += "  a refused P2P request fails with " + std::string(plan.refusal_errno) + "\n";
  for (const WatchHook& h : plan.hooks)
    out += std::string("  ") + (h.enabled ? "load " : "skip ") + h.attach + (h.why.empty() ? "" : ": " + h.why) + "\n";
  for (const std::string& p : plan.problems) out += "  problem: " + p + "\n";
  return out;
}

// --hooks and --save-btf: what the kernel's BTF says, without loading anything.
int run_btf_only(const GlobalOptions& o, const WatchOptions& w) {
  std::unique_ptr<Source> source = open_source(o);
  std::string why;
  std::optional<std::string> btf = read_kernel_btf(*source, w, why);
  if (!btf) throw Error(w.btf.empty() ? source->describe() : w.btf, why);
  const std::string from = w.btf.empty() ? std::string(kKernelBtf) + " of " + source->describe() : w.btf;
  if (!w.save_btf.empty()) {
    write_whole_file(w.save_btf, watch_btf_subset(*btf, from), "BTF subset");
    if (!w.hooks) return kExitOk;
  }
  WatchHookPlan plan = select_watch_hooks(*parse_btf(*btf, from));
  if (o.json) {
    nlohmann::ordered_json j = json_envelope("p2pcheck.watch_hooks", from);
    j.update(watch_hooks_json(plan));
    std::cout << json_output(o, j) << "\n";
  } else {
    std::cout << hooks_text(plan, from);
  }
  return plan.problems.empty() ? kExitOk : kExitUnknown;
}

}  // namespace

Command add_watch_command(CLI::App& app, const GlobalOptions& o) {
  auto* sub =
      app.add_subcommand("watch", "which I/O really went peer-to-peer, per pair, while a job runs (eBPF, root)");
  sub->fallthrough();  // --json, --root, --gpu ... after `watch` too, as every command takes them
  static WatchOptions w;
  sub->add_option("--interval", w.interval_s, "seconds between progress lines (default 1)")->option_text("S");
  sub->add_option("--duration", w.duration_s, "stop after S seconds (default: when COMMAND ends, or Ctrl-C)")
      ->option_text("S");
  sub->add_option("--pid", w.pid, "only I/O submitted by this process (tgid)")->option_text("PID");
  sub->add_option("--comm", w.comm, "only I/O submitted by processes of this name")->option_text("NAME");
  sub->add_flag("--all", w.all, "with -- COMMAND: count every process's I/O, not only the command's process tree");
  sub->add_flag("--json-lines", w.json_lines, "one JSON object per interval, then the summary");
  sub->add_option("--record", w.record, "keep the counters in FILE for --replay")->option_text("FILE");
  sub->add_option("--replay", w.replay, "judge a recording against this machine (or --root/--dump)")
      ->option_text("FILE");
  sub->add_flag("--hooks", w.hooks, "show which hooks this kernel offers, load nothing");
  sub->add_option("--btf", w.btf, "with --hooks or --save-btf: read this BTF file, not the kernel's")
      ->option_text("FILE");
  sub->add_option("--save-btf", w.save_btf, "write the part of the kernel's BTF watch reads (a few hundred bytes)")
      ->option_text("FILE");
  sub->add_option("command", w.command, "run COMMAND, watch until it exits (after --)")->option_text("-- COMMAND ...");
  return {sub, [&o]() -> int {
            if (w.interval_s <= 0) throw UsageError("--interval must be more than 0 seconds");
            if (w.duration_s && *w.duration_s <= 0) throw UsageError("--duration must be more than 0 seconds");
            if (w.all && (w.pid || !w.comm.empty()))
              throw UsageError(std::string("--all counts every process; ") + (w.pid ? "--pid" : "--comm") +
                               " counts only some: give one of them");
            if (!w.btf.empty() && !w.hooks && w.save_btf.empty())
              throw UsageError("--btf is for --hooks or --save-btf: watching reads the running kernel's own");
            if ((w.hooks || !w.save_btf.empty()) && !w.command.empty())
              throw UsageError(std::string(w.hooks ? "--hooks" : "--save-btf") +
                               " loads nothing and runs nothing: drop it, or drop `-- " + printable(w.command[0]) +
                               " ...`");
            if (w.hooks || !w.save_btf.empty()) return run_btf_only(o, w);
            return run_watch(o, w);
          }};
}

}  // namespace p2pcheck::cli
