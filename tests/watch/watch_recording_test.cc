// watch's recordings (a JSON round trip that replays to the same report; the reader against
// hostile files) and its environment read step.
#include "p2pcheck/watch/watch_recording.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"
#include "p2pcheck/watch/watch_environment.h"
#include "p2pcheck/watch/watch_json.h"
#include "test_tree.h"
#include "watch_fixture.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;
using json = nlohmann::ordered_json;

WatchRecording sample_recording() {
  WatchRecording rec;
  rec.facts = watch_facts();
  rec.facts.hooks.not_supported = 1;
  rec.facts.hooks.bus_addr = 2;
  rec.facts.hooks.thru_host_bridge = 3;
  rec.facts.hooks.hooks[2].why = "another decision hook";
  rec.facts.lockdown.status = ReadStatus::kOk;
  rec.facts.lockdown.mode = "integrity";
  rec.facts.nvidia_fs.loaded = Tri::kYes;
  rec.facts.nvidia_fs.stats = "GDS Version: 1.9.0\nReads : n=0\n";
  WatchRow bus =
      watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToDevice, 10, 40 * kMiB);
  rec.snapshots.push_back(snapshot_of({bus}, 1));
  bus.requests = 30;
  bus.bytes = 120 * kMiB;
  bus.requeues = 2;
  WatchRow refused =
      watch_row(kGpu, kRootPortNvme, "", "eval", 7, WatchPath::kRefused, WatchDir::kToStorage, 2, 0, 0, 5);
  WatchSnapshot last = snapshot_of({bus, refused}, 2.5);
  last.unpaired = 1;
  rec.snapshots.push_back(last);
  return rec;
}

std::string error_of(const std::string& text) {
  try {
    read_watch_recording(text, "rec.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(WatchRecording, RoundTripReplaysToTheSameReport) {
  WatchRecording rec = sample_recording();
  json doc = watch_recording_json(rec);
  keep_watch_json(doc, "watch-recording.json");
  EXPECT_EQ(doc["schema"], "p2pcheck.watch_recording");
  EXPECT_EQ(doc["snapshots"].size(), 2u);
  EXPECT_EQ(doc["snapshots_dropped"], 0);
  WatchRecording back = read_watch_recording(json_text(doc, -1), "rec.json");
  EXPECT_EQ(back.facts.kernel_release, "6.8.0-142-generic");
  EXPECT_EQ(back.facts.hooks.decision, DecisionHook::kMapSegment);
  EXPECT_EQ(back.facts.hooks.provider, ProviderLayout::kPagemapProvider);
  EXPECT_EQ(back.facts.hooks.bus_addr, 2);
  EXPECT_STREQ(back.facts.hooks.refusal_errno, "EREMOTEIO");
  ASSERT_EQ(back.facts.hooks.hooks.size(), 9u);
  EXPECT_EQ(back.facts.hooks.hooks[1].attach, "fexit pci_p2pdma_map_segment");
  EXPECT_TRUE(back.facts.hooks.hooks[1].attached);
  EXPECT_EQ(back.facts.hooks.hooks[2].why, "another decision hook");
  EXPECT_EQ(back.facts.lockdown.mode, "integrity");
  EXPECT_EQ(back.facts.nvidia_fs.loaded, Tri::kYes);
  EXPECT_EQ(back.facts.nvidia_fs.stats, rec.facts.nvidia_fs.stats);
  ASSERT_EQ(back.snapshots.size(), 2u);
  EXPECT_DOUBLE_EQ(back.snapshots[1].seconds, 2.5);
  ASSERT_EQ(back.snapshots[1].rows.size(), 2u);
  const WatchRow& r = back.snapshots[1].rows[1];
  EXPECT_EQ(r.comm, "eval");
  EXPECT_EQ(r.path, WatchPath::kRefused);
  EXPECT_EQ(r.dir, WatchDir::kToStorage);
  EXPECT_EQ(r.last_status, 5u);
  EXPECT_EQ(back.snapshots[1].rows[0].bytes, 120 * kMiB);
  EXPECT_EQ(back.snapshots[1].rows[0].requeues, 2u);
  EXPECT_EQ(back.snapshots[1].unpaired, 1u);
  // The same answer, recorded or not.
  const WatchMachine& m = watch_machine();
  WatchReport direct = build_watch_report(rec.snapshots.back(), rec.facts, m.state, m.rules);
  WatchReport replayed = replay_watch_report(back, m.state, m.rules);
  EXPECT_EQ(json_text(watch_json(replayed)), json_text(watch_json(direct)));
  EXPECT_EQ(replayed.result, WatchResult::kFail);
  ASSERT_TRUE(replayed.pairs.at(0).refusal);  // nvme2 (0000:01:00.0) sorts first
  EXPECT_EQ(replayed.pairs[0].refusal->errno_name, "EREMOTEIO");
  EXPECT_TRUE(find_finding(replayed, "watch.nvidia_fs"));
}

TEST(WatchRecording, TheWriterThinsSnapshotsButKeepsTheLast) {
  WatchRecording rec;
  rec.facts = watch_facts();
  std::vector<WatchRow> rows;
  for (std::uint32_t i = 0; i < 1000; ++i)
    rows.push_back(watch_row("", "", "nvme0n1", "p", i, WatchPath::kHost, WatchDir::kToDevice, 1, 4096));
  for (int s = 0; s < 100; ++s) rec.snapshots.push_back(snapshot_of(rows, s));
  rec.snapshots.back().rows[0].requests = 99;
  json doc = watch_recording_json(rec);
  ASSERT_LT(doc["snapshots"].size(), 100u);
  EXPECT_EQ(doc["snapshots_dropped"], 100 - doc["snapshots"].size());
  WatchRecording back = read_watch_recording(json_text(doc, -1), "big.json");
  EXPECT_DOUBLE_EQ(back.snapshots.back().seconds, 99);
  EXPECT_EQ(back.snapshots.back().rows[0].requests, 99u);
}

TEST(WatchRecording, TheReaderRejectsWhatTheWriterDoesNotWrite) {
  json good = watch_recording_json(sample_recording());
  EXPECT_EQ(error_of("{"),
            "rec.json: not JSON; expected a p2pcheck watch recording (schema "
            "\"p2pcheck.watch_recording\", made by p2pcheck watch --record)");
  json other = good;
  other["schema"] = "p2pcheck.watch";
  EXPECT_EQ(error_of(json_text(other, -1)),
            "rec.json: schema: expected \"p2pcheck.watch_recording\" (a recording made by p2pcheck watch --record), "
            "found a string \"p2pcheck.watch\"");
  json version = good;
  version["schema_version"] = 1;  // the first watch's names, before any release
  EXPECT_EQ(error_of(json_text(version, -1)),
            "rec.json: schema_version: expected 2 (this p2pcheck reads version 2), found a number 1");
  json path = good;
  path["snapshots"][1]["rows"][0]["path"] = "teleport";
  EXPECT_EQ(error_of(json_text(path, -1)),
            "rec.json: snapshots[1].rows[0].path: expected one of \"host\", \"bus_addr\", \"thru_host_bridge\", "
            "\"refused\", \"stack_refused\", found a string \"teleport\"");
  json dir = good;
  dir["snapshots"][0]["rows"][0]["direction"] = 1;
  EXPECT_EQ(error_of(json_text(dir, -1)),
            "rec.json: snapshots[0].rows[0].direction: expected a string, found a number 1");
  dir["snapshots"][0]["rows"][0]["direction"] = "to-device";  // the text's word, not JSON's
  EXPECT_EQ(error_of(json_text(dir, -1)),
            "rec.json: snapshots[0].rows[0].direction: expected one of \"to_device\", \"to_storage\", \"other\", "
            "found a string \"to-device\"");
  json hook = good;
  hook["hooks"]["decision_hook"] = "nvme_map_data";
  EXPECT_TRUE(error_of(json_text(hook, -1))
                  .starts_with("rec.json: hooks.decision_hook: expected one of \"none\", "
                               "\"pci_p2pdma_map_segment\""));
  json comm = good;
  comm["snapshots"][1]["rows"][0]["comm"] = "sixteen-chars-xx";
  EXPECT_TRUE(error_of(json_text(comm, -1))
                  .starts_with("rec.json: snapshots[1].rows[0].comm: expected a string of at most 15 characters"));
  json negative = good;
  negative["snapshots"][1]["rows"][0]["bytes"] = -1;
  EXPECT_TRUE(
      error_of(json_text(negative, -1)).starts_with("rec.json: snapshots[1].rows[0].bytes: expected an integer"));
  json seconds = good;
  seconds["snapshots"][0]["seconds"] = "soon";
  EXPECT_EQ(error_of(json_text(seconds, -1)),
            "rec.json: snapshots[0].seconds: expected a number of seconds, found a string \"soon\"");
  json no_snapshots = good;
  no_snapshots.erase("snapshots");
  EXPECT_EQ(error_of(json_text(no_snapshots, -1)), "rec.json: snapshots: expected an array, found nothing");
}

TEST(WatchRecording, TooManyRowsIsAnErrorBeforeAnyIsRead) {
  std::string rows = "[";
  for (std::size_t i = 0; i <= kMaxRecordedRows; ++i) rows += i ? ",{}" : "{}";
  rows += "]";
  json good = watch_recording_json(sample_recording());
  good["snapshots"][0]["rows"] = "ROWS";
  std::string text = json_text(good, -1);
  text.replace(text.find("\"ROWS\""), 6, rows);
  EXPECT_EQ(error_of(text),
            "rec.json: snapshots[0].rows: expected an array of at most 100000 elements, found an "
            "array [{},{},{},{},{},{},{},{},{},{},{},{},...");
}

TEST(WatchEnvironment, ReadsReleaseLockdownNvidiaFsAndBtf) {
  FakeRoot root;
  root.write("proc/sys/kernel/osrelease", "6.12.118\n");
  root.write("sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
  root.mkdir("sys/module/nvidia_fs");
  root.write("proc/driver/nvidia-fs/stats", "GDS Version: 1.9.0\n");
  root.write("sys/kernel/btf/vmlinux", std::string("\x9f\xeb\x01\x00", 4));
  auto source = root.source();
  WatchEnvironment env = read_watch_environment(*source);
  EXPECT_EQ(env.kernel_release, "6.12.118");
  EXPECT_EQ(env.lockdown.status, ReadStatus::kOk);
  EXPECT_EQ(env.lockdown.mode, "integrity");
  EXPECT_EQ(env.lockdown.forbids_watch(), Tri::kNo);
  EXPECT_EQ(env.nvidia_fs.loaded, Tri::kYes);
  EXPECT_EQ(env.nvidia_fs.stats, "GDS Version: 1.9.0\n");
  EXPECT_TRUE(env.btf.ok());
  EXPECT_EQ(env.btf.bytes.size(), 4u);
  EXPECT_EQ(cannot_watch_reason(env, true), std::nullopt);
  EXPECT_EQ(cannot_watch_reason(env, false), "not root: loading the eBPF probe needs root (CAP_BPF and CAP_PERFMON)");
}

TEST(WatchEnvironment, ConfidentialityOrNoBtfCannotWatchAndADeniedReadIsUnknown) {
  FakeRoot root;
  root.write("sys/kernel/security/lockdown", "none integrity [confidentiality]\n");
  auto source = root.source();
  WatchEnvironment env = read_watch_environment(*source);
  EXPECT_EQ(env.kernel_release, "");
  EXPECT_EQ(env.release_unread, "not present");
  EXPECT_EQ(env.lockdown.forbids_watch(), Tri::kYes);
  EXPECT_EQ(env.nvidia_fs.loaded, Tri::kNo);
  EXPECT_FALSE(env.nvidia_fs.stats);
  EXPECT_EQ(env.btf.status, ReadStatus::kMissing);
  std::string why = cannot_watch_reason(env, true).value_or("");
  EXPECT_TRUE(why.starts_with("kernel lockdown is in confidentiality mode")) << why;
  EXPECT_TRUE(contains(why, "; no BTF: /sys/kernel/btf/vmlinux is missing")) << why;

  FakeRoot denied;
  denied.fail("sys/kernel/security/lockdown", ReadStatus::kDenied, "Permission denied");
  auto d = denied.source();
  WatchEnvironment unknown = read_watch_environment(*d);
  EXPECT_EQ(unknown.lockdown.status, ReadStatus::kDenied);
  EXPECT_EQ(unknown.lockdown.forbids_watch(), Tri::kUnknown);  // denied is unknown, not absent
  FakeRoot none;                                               // no lockdown LSM at all
  auto n = none.source();
  EXPECT_EQ(read_watch_environment(*n).lockdown.forbids_watch(), Tri::kNo);
  EXPECT_EQ(watch_start_failure("Operation not permitted", 1),
            "the kernel refused to load the eBPF probe (EPERM): Operation not permitted; BPF is not allowed here (root "
            "with CAP_BPF and CAP_PERFMON, kernel.unprivileged_bpf_disabled, a seccomp or LSM policy)");
}

}  // namespace
}  // namespace p2pcheck
