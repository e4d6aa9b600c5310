// What the watch tests share: the machine the predictions are made on, a hook plan as the loader
// leaves it, and counter rows as the probe reads them.
//
// xeon-broadwell-switch-acs (kernel 6.8, Intel): GPU 0000:04:00.0 and nvme0 0000:06:00.0 (nvme0n1)
// under one switch without ACS redirect (BUS_ADDR); nvme2 0000:01:00.0 (nvme2n1) on its own root
// port (NOT_SUPPORTED: an Intel root complex not on the allowlist).
#pragma once

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <string>

#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/rules/kernel_rules.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/watch/watch_report.h"
#include "test_paths.h"

namespace p2pcheck::testing {

inline constexpr const char* kGpu = "0000:04:00.0";
inline constexpr const char* kSwitchNvme = "0000:06:00.0";    // nvme0, below the GPU's switch
inline constexpr const char* kRootPortNvme = "0000:01:00.0";  // nvme2, across the root complex
inline constexpr std::uint64_t kMiB = 1024 * 1024;

struct WatchMachine {
  MachineState state;
  KernelRules rules;
};

// Loaded once for every test: the tree does not change.
inline const WatchMachine& watch_machine() {
  static const WatchMachine machine = [] {
    auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/xeon-broadwell-switch-acs/root");
    WatchMachine m;
    m.state = load_machine_state(*source, Load::kForCheck);
    m.rules = kernel_rules_for(m.state.machine, std::nullopt);
    return m;
  }();
  return machine;
}

// The plan select_watch_hooks() gives on `decision`, with every enabled program attached.
inline WatchFacts watch_facts(DecisionHook decision = DecisionHook::kMapSegment,
                              const std::string& release = "6.8.0-142-generic") {
  WatchFacts f;
  f.kernel_release = release;
  WatchHookPlan& plan = f.hooks;
  plan.decision = decision;
  plan.provider = decision == DecisionHook::kNone ? ProviderLayout::kUnknown : ProviderLayout::kPagemapProvider;
  plan.block_hooks = true;
  if (decision == DecisionHook::kIterStart) plan.refusal_errno = "EINVAL";
  const bool pairing = decision == DecisionHook::kMapSegment || decision == DecisionHook::kUpdateState;
  struct Program {
    const char* program;
    const char* attach;
    bool on;
  };
  for (const Program& p :
       {Program{"watch_map_sgtable", "fentry dma_map_sgtable", pairing},
        Program{"watch_map_segment", "fexit pci_p2pdma_map_segment", decision == DecisionHook::kMapSegment},
        Program{"watch_update_state", "fexit __pci_p2pdma_update_state", decision == DecisionHook::kUpdateState},
        Program{"watch_iter_start", "fexit blk_rq_dma_map_iter_start", decision == DecisionHook::kIterStart},
        Program{"watch_bio_pin", "fexit bio_iov_iter_get_pages", decision != DecisionHook::kNone},
        Program{"watch_rq_issue", "tp_btf block_rq_issue", true},
        Program{"watch_rq_requeue", "tp_btf block_rq_requeue", true},
        Program{"watch_rq_complete", "tp_btf block_rq_complete", true},
        Program{"watch_fork", "tp_btf sched_process_fork", true}}) {
    WatchHook h{p.program, p.attach};
    h.enabled = h.attached = p.on;
    if (!p.on) h.why = "another decision hook";
    plan.hooks.push_back(h);
  }
  return f;
}

inline WatchRow watch_row(const std::string& provider, const std::string& client, const std::string& disk,
                          const std::string& comm, std::uint32_t tgid, WatchPath path, WatchDir dir,
                          std::uint64_t requests, std::uint64_t bytes, std::uint64_t errors = 0,
                          std::uint32_t last_status = 0) {
  WatchRow r;
  r.provider = provider;
  r.client = client;
  r.disk = disk;
  r.comm = comm;
  r.tgid = tgid;
  r.path = path;
  r.dir = dir;
  r.requests = requests;
  r.bytes = bytes;
  r.segments = path == WatchPath::kBusAddr || path == WatchPath::kThruHostBridge ? requests : 0;
  r.errors = errors;
  r.last_status = last_status;
  return r;
}

inline WatchSnapshot snapshot_of(std::vector<WatchRow> rows, double seconds = 5) {
  WatchSnapshot s;
  s.seconds = seconds;
  s.rows = std::move(rows);
  return s;
}

inline WatchReport report_of(const WatchSnapshot& s, const WatchFacts& f = watch_facts(),
                             const WatchFilter& filter = {}) {
  const WatchMachine& m = watch_machine();
  return build_watch_report(s, f, m.state, m.rules, filter);
}

inline const Finding* find_finding(const WatchReport& r, const std::string& id) {
  for (const Finding& f : r.findings)
    if (f.id == id) return &f;
  return nullptr;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// tests/e2e/json_schema_test.py runs the Watch* tests with P2PCHECK_WATCH_JSON_DIR set and validates
// what they leave there against docs/schema/p2pcheck.schema.json.
inline void keep_watch_json(const nlohmann::ordered_json& doc, const std::string& name) {
  if (const char* dir = std::getenv("P2PCHECK_WATCH_JSON_DIR"))
    std::ofstream(std::string(dir) + "/" + name) << json_text(doc, 2);
}

}  // namespace p2pcheck::testing
