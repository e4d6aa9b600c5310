// The verify tests' run: a fixture machine, fake I/O, engines and kernel log, and the options, as
// `p2pcheck verify` would put them together; and small helpers over its report.
#pragma once

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "p2pcheck/verify/verify.h"
#include "p2pcheck/verify/verify_report.h"
#include "test_paths.h"
#include "verify_fakes.h"

namespace p2pcheck::testing {

// tests/e2e/json_schema_test.py runs these tests with P2PCHECK_VERIFY_JSON_DIR set and validates the
// verify documents they leave there against docs/schema/p2pcheck.schema.json.
inline void keep_for_schema_test(const nlohmann::ordered_json& doc, const std::string& name) {
  if (const char* dir = std::getenv("P2PCHECK_VERIFY_JSON_DIR"))
    save_verify_results(doc, std::string(dir) + "/" + name);
}

// epyc-mi300x-8gpu: GPU 0000:03:00.0, nvme0 0000:05:00.0 (nvme0n1 259:0, has a 64 MiB CMB as
// published p2pmem) and nvme1 0000:06:00.0 (nvme1n1 259:1) under one switch; md0 (9:0) over
// nvme6n1 and nvme7n1 at /scratch.
struct VerifyRun {
  std::unique_ptr<Source> source;
  std::shared_ptr<FakeIo> io = std::make_shared<FakeIo>();
  FakeEngines engines;
  FakeKernelLog kmsg;
  VerifyOptions options;
  TempDir nvme0_dir, nvme1_dir;

  explicit VerifyRun(const std::string& fixture = "epyc-mi300x-8gpu")
      : source(open_tree_source(fixture_root(fixture))) {
    options.size = 1 << 20;
    options.timeout_s = 20;
  }
  // A real directory that "is" on the fixture's block device major:minor.
  std::string target_on(TempDir& dir, unsigned major, unsigned minor) {
    io->dir_on(dir.path(), major, minor);
    options.targets.push_back(dir.path());
    return dir.path();
  }
  std::unique_ptr<VerifyPlan> plan() { return plan_verify(*source, *io, options); }
  // Called for each pause verify makes (none by default: its waits are the tests' to play out).
  std::function<void(std::chrono::milliseconds)> pause;
  VerifyReport run() {
    VerifyEnvironment env{*source, io, engines, &kmsg, nullptr, nullptr, pause};
    return run_verify(plan(), env);
  }
};

inline const PairResult* ran(const VerifyReport& r) {
  for (size_t i = 0; i < r.results.size(); ++i)
    if (!r.plan->pairs[i].skipped && r.plan->pairs[i].refusal.empty()) return &r.results[i];
  return nullptr;
}

// An engine whose every transfer fails with `error` (a negative errno).
inline std::function<TransferResult(const TransferRequest&)> failing_with(int error) {
  return [error](const TransferRequest&) {
    TransferResult t;
    t.error = error;
    return t;
  };
}

}  // namespace p2pcheck::testing
