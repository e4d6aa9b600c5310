// watch's process scope (`watch -- COMMAND` counts the command's process tree, --all the machine,
// --pid/--comm some processes), its selection (each --gpu/--nvme names a function of the machine),
// and its words (directions from the data's point of view, columns that name what is there).
#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/watch/watch_json.h"
#include "p2pcheck/watch/watch_recording.h"
#include "p2pcheck/watch/watch_text.h"
#include "test_expect.h"
#include "watch_fixture.h"

namespace p2pcheck::testing {
namespace {

WatchFacts command_facts(std::uint32_t pid = 4242, const std::string& name = "train") {
  WatchFacts f = watch_facts();
  f.command = WatchCommand{pid, name};
  return f;
}

WatchRow in_tree(WatchRow r) {
  r.in_tree = true;
  return r;
}

// The command (train 4242, its child dd 4250) reads by bus address and through host memory; another
// job (cc1plus 900) reads nvme2n1 through host memory and is refused P2P on nvme2 at the same time.
WatchSnapshot busy_machine() {
  return snapshot_of({
      in_tree(watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToDevice, 4,
                        4 * kMiB)),
      in_tree(watch_row("", "", "nvme0n1", "dd", 4250, WatchPath::kHost, WatchDir::kToDevice, 2, 2 * kMiB)),
      watch_row("", "", "nvme2n1", "cc1plus", 900, WatchPath::kHost, WatchDir::kToDevice, 8, 3 * kMiB),
      watch_row(kGpu, kRootPortNvme, "", "other", 901, WatchPath::kRefused, WatchDir::kToDevice, 5, 0),
  });
}

TEST(WatchScope, ACommandsTreeIsCountedAndTheRestIsSaidNotCounted) {
  WatchReport r = report_of(busy_machine(), command_facts());
  EXPECT_EQ(r.scope, WatchScope::kTree);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].path, WatchPath::kBusAddr);
  ASSERT_EQ(r.host.size(), 1u);
  EXPECT_EQ(r.host[0].disk, "nvme0n1");
  EXPECT_EQ(r.host[0].processes.at(0).comm, "dd");
  // Another job's refusal is not the command's: the command's own P2P went as predicted.
  EXPECT_EQ(r.result, WatchResult::kP2pSeen);
  EXPECT_EQ(r.outside.requests, 13u);
  EXPECT_EQ(r.outside.bytes, 3 * kMiB);
  EXPECT_EQ(r.outside.processes.size(), 2u);
  EXPECT_FALSE(find_finding(r, "watch.worker_not_counted"));
  const std::string text = watch_text(r, TextStyle{});
  EXPECT_TRUE(contains(text,
                       "\ncounted: the process tree of train (pid 4242); not counted: 13 request(s), 3.0 MiB "
                       "by 2 other process(es) (--all counts them)\n"))
      << text;
  EXPECT_FALSE(contains(text, "cc1plus")) << text;
  nlohmann::ordered_json j = watch_json(r);
  EXPECT_EQ(j["scope"]["processes"], "command_tree");
  EXPECT_EQ(j["scope"]["command"]["pid"], 4242);
  EXPECT_EQ(j["scope"]["not_counted"]["requests"], 13);
  keep_watch_json(j, "watch-scope-tree.json");
}

TEST(WatchScope, AllCountsEveryProcessAndThenTheOtherJobsRefusalFails) {
  WatchFilter all;
  all.all = true;
  WatchReport r = report_of(busy_machine(), command_facts(), all);
  EXPECT_EQ(r.scope, WatchScope::kMachine);
  EXPECT_EQ(r.pairs.size(), 2u);
  EXPECT_EQ(r.host.size(), 2u);
  EXPECT_EQ(r.outside.requests, 0u);
  EXPECT_EQ(r.result, WatchResult::kFail);
  EXPECT_TRUE(contains(watch_text(r, TextStyle{}),
                       "\ncounted: every process on the machine (--all; the command was train (pid 4242))\n"));
  // Without a command there is no tree: the machine, as before.
  WatchReport machine = report_of(busy_machine());
  EXPECT_EQ(machine.scope, WatchScope::kMachine);
  EXPECT_EQ(machine.result, WatchResult::kFail);
  EXPECT_TRUE(contains(watch_text(machine, TextStyle{}), "\ncounted: every process on the machine\n"));
}

TEST(WatchScope, PidOrCommChoosesTheProcessesInsteadOfTheTree) {
  WatchFilter pid;
  pid.pid = 900;
  WatchReport r = report_of(busy_machine(), command_facts(), pid);
  EXPECT_EQ(r.scope, WatchScope::kSelected);
  ASSERT_EQ(r.host.size(), 1u);
  EXPECT_EQ(r.host[0].disk, "nvme2n1");
  EXPECT_TRUE(r.pairs.empty());
  EXPECT_TRUE(contains(watch_text(r, TextStyle{}), "\ncounted: process 900 (--pid); not counted:"))
      << watch_text(r, {});
  EXPECT_EQ(r.result, WatchResult::kNoP2p);
}

TEST(WatchScope, KernelWorkersP2pOutsideTheTreeWarnsThatItMayBeTheCommands) {
  WatchSnapshot s = busy_machine();
  s.rows.push_back(
      watch_row(kGpu, kSwitchNvme, "nvme0n1", "kworker/u8:2", 77, WatchPath::kBusAddr, WatchDir::kToDevice, 3, kMiB));
  WatchReport r = report_of(s, command_facts());
  const Finding* f = find_finding(r, "watch.worker_not_counted");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_TRUE(contains(f->message, "3 P2P, refused or failed request(s) were issued by kernel workers")) << f->message;
  EXPECT_TRUE(contains(watch_result_line(r, TextStyle{}), "warnings: watch.worker_not_counted"));
}

TEST(WatchScope, ATreeThatCannotBeFollowedIsUnknownAndATreeTooLargeWarns) {
  WatchFacts f = command_facts();
  f.hooks.hooks.back().attached = false;  // watch_fork
  f.hooks.hooks.back().error = "Operation not permitted";
  WatchReport r = report_of(busy_machine(), f);
  EXPECT_EQ(r.result, WatchResult::kUnknown);
  EXPECT_EQ(r.cannot_watch.value_or(""),
            "the hook tp_btf sched_process_fork did not attach (Operation not permitted): the command's process tree "
            "cannot be followed (--all counts every process on the machine)");
  WatchFilter all;
  all.all = true;
  EXPECT_EQ(report_of(busy_machine(), f, all).result, WatchResult::kFail);  // --all needs no tree
  WatchSnapshot s = busy_machine();
  s.tree_full = 3;
  WatchReport full = report_of(s, command_facts());
  ASSERT_TRUE(find_finding(full, "watch.tree_full"));
  EXPECT_EQ(find_finding(full, "watch.tree_full")->level, Level::kWarn);
}

TEST(WatchScope, ASelectionThatNamesNoFunctionIsAUsageError) {
  const WatchSnapshot s = busy_machine();
  WatchFilter gpu;
  gpu.gpu = {"0000:99:00.0"};
  EXPECT_EQ(usage_error([&] { report_of(s, watch_facts(), gpu); }),
            "--gpu 0000:99:00.0: no PCI function at that address in " + watch_machine().state.topo.source_description);
  WatchFilter nvme;
  nvme.nvme = {"nvme9n1"};
  EXPECT_EQ(usage_error([&] { report_of(s, watch_facts(), nvme); }),
            "--nvme nvme9n1: no NVMe controller or namespace of that name in " +
                watch_machine().state.topo.source_description);
  nvme.nvme = {"0000:99:00.0"};
  EXPECT_TRUE(contains(usage_error([&] { report_of(s, watch_facts(), nvme); }),
                       "--nvme 0000:99:00.0: no PCI function at that address in "));
  // Even when nothing could be watched: the selection is checked first.
  WatchFacts cannot = watch_facts();
  cannot.cannot_watch = "not root";
  EXPECT_TRUE(contains(usage_error([&] { report_of(s, cannot, gpu); }), "--gpu 0000:99:00.0: no PCI function"));
  WatchFilter known;
  known.gpu = {kGpu};
  known.nvme = {"nvme0"};
  EXPECT_EQ(report_of(s, watch_facts(), known).pairs.size(), 1u);
}

TEST(WatchScope, DirectionsAreTheDatasWayAndColumnsNameWhatIsThere) {
  // A loop device read into host memory: storage -> memory, under "block device", never "to-device".
  WatchSnapshot s = snapshot_of({
      watch_row("", "", "loop0", "cat", 10, WatchPath::kHost, WatchDir::kToDevice, 3, kMiB),
      watch_row("", "", "loop0", "cp", 11, WatchPath::kHost, WatchDir::kToStorage, 2, kMiB),
      watch_row("", "", "loop0", "cp", 11, WatchPath::kStackRefused, WatchDir::kToStorage, 1, 0),
  });
  const std::string text = watch_text(report_of(s), TextStyle{});
  EXPECT_FALSE(contains(text, "to-device")) << text;
  EXPECT_FALSE(contains(text, "NVMe (client)")) << text;
  EXPECT_TRUE(contains(text, "\n  memory       block device  path")) << text;
  EXPECT_TRUE(contains(text, "\n  host memory  loop0         host                              storage -> memory  "))
      << text;
  EXPECT_TRUE(contains(text, "\n  host memory  loop0         host                              memory -> storage  "))
      << text;
  EXPECT_TRUE(contains(text, "\n  P2P memory   loop0         refused by storage stack (loop0)  memory -> storage  "))
      << text;
  // The JSON keys stay the DMA API's.
  nlohmann::ordered_json j = watch_json(report_of(s));
  EXPECT_EQ(j["host"][0]["direction"], "to_device");
}

TEST(WatchScope, RecordingsKeepTheCommandAndTreeAndOldOnesReplayTheMachine) {
  WatchRecording rec{command_facts(), {busy_machine()}};
  rec.facts.hooks = watch_facts().hooks;
  const nlohmann::ordered_json doc = watch_recording_json(rec);
  EXPECT_EQ(doc["command"]["pid"], 4242);
  EXPECT_EQ(doc["snapshots"][0]["rows"][0]["in_tree"], true);
  EXPECT_EQ(doc["snapshots"][0]["rows"][2]["in_tree"], false);
  WatchRecording back = read_watch_recording(json_text(doc, 1), "rec.json");
  ASSERT_TRUE(back.facts.command);
  EXPECT_EQ(back.facts.command->name, "train");
  const WatchMachine& m = watch_machine();
  WatchReport replay = replay_watch_report(back, m.state, m.rules);
  EXPECT_EQ(replay.scope, WatchScope::kTree);
  EXPECT_EQ(replay.result, WatchResult::kP2pSeen);
  EXPECT_EQ(replay.outside.requests, 13u);
  // A recording from before watch followed commands: no command, no in_tree; every process counted.
  nlohmann::ordered_json old = doc;
  old.erase("command");
  for (auto& row : old["snapshots"][0]["rows"]) row.erase("in_tree");
  WatchReport old_replay = replay_watch_report(read_watch_recording(json_text(old, 1), "old.json"), m.state, m.rules);
  EXPECT_EQ(old_replay.scope, WatchScope::kMachine);
  EXPECT_EQ(old_replay.result, WatchResult::kFail);
  nlohmann::ordered_json bad = doc;
  bad["command"]["pid"] = 0;
  try {
    read_watch_recording(json_text(bad, 1), "rec.json");
    ADD_FAILURE() << "a command without a pid was read";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "rec.json: command.pid")) << e.what();
  }
}

TEST(WatchScope, ARecordingWithoutASnapshotCountedNothingAndIsNeverNoP2p) {
  WatchRecording rec{watch_facts(), {}};
  const WatchMachine& m = watch_machine();
  WatchReport r =
      replay_watch_report(read_watch_recording(json_text(watch_recording_json(rec), 1), "rec.json"), m.state, m.rules);
  EXPECT_EQ(r.result, WatchResult::kUnknown);
  EXPECT_EQ(r.cannot_watch.value_or(""),
            "the recording holds no snapshot of the probe's counters: nothing was counted");
}

}  // namespace
}  // namespace p2pcheck::testing
