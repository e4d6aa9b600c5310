// watch's text and JSON views of one report: the table, the RESULT line, the interval lines, the
// JSON document, and a hostile name that must not add a line.
#include "p2pcheck/watch/watch_text.h"

#include <gtest/gtest.h>

#include "p2pcheck/watch/watch_json.h"
#include "watch_fixture.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

WatchRow bus_read(std::uint64_t bytes = 8 * kMiB) {
  return watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToDevice, 2048, bytes);
}

int lines_starting(const std::string& text, const std::string& prefix) {
  int n = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    if (text.compare(at, prefix.size(), prefix) == 0) ++n;
    std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return n;
}

TEST(WatchText, SummaryHasHeaderTableAndResult) {
  WatchReport r = report_of(snapshot_of({bus_read()}, 12));
  std::string text = watch_text(r, TextStyle{});
  EXPECT_EQ(watch_header(r),
            "p2pcheck watch — kernel 6.8.0-142-generic; hooks: fentry dma_map_sgtable, fexit pci_p2pdma_map_segment, "
            "fexit bio_iov_iter_get_pages, tp_btf block_rq_issue, tp_btf block_rq_requeue, tp_btf block_rq_complete, "
            "tp_btf sched_process_fork\n");
  EXPECT_EQ(text.rfind(watch_header(r), 0), 0u) << text;
  EXPECT_TRUE(contains(text, "watched 12.0 s\n"));
  EXPECT_TRUE(contains(text, "watched 12.0 s\ncounted: every process on the machine\n")) << text;
  EXPECT_TRUE(contains(text,
                       "\n  memory            block device            path             direction          reqs  MiB  "
                       "errors  predicted    processes\n"
                       "  0000:04:00.0 GPU  nvme0n1 (0000:06:00.0)  p2p bus address  storage -> memory  2048  8.0  "
                       "     0  BUS_ADDR ok  train 4242\n"))
      << text;
  EXPECT_EQ(watch_result_line(r, TextStyle{}),
            "RESULT: P2P SEEN — 0000:04:00.0 -> nvme0 (0000:06:00.0): 8.0 MiB by bus address, as predicted\n");
  EXPECT_TRUE(text.ends_with("\n" + watch_result_line(r, TextStyle{}))) << text;
}

TEST(WatchText, PathsAndPredictionsInTheirWords) {
  WatchReport r = report_of(snapshot_of({
      watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kThruHostBridge, WatchDir::kToStorage, 4,
                16384),
      watch_row(kGpu, kRootPortNvme, "", "train", 4242, WatchPath::kRefused, WatchDir::kToDevice, 12, 0, 0, 5),
      watch_row("", "", "loop0", "dd", 77, WatchPath::kStackRefused, WatchDir::kToStorage, 3, 0),
      watch_row("", "", "nvme2n1", "train", 4242, WatchPath::kHost, WatchDir::kToDevice, 2, 8192),
  }));
  std::string text = watch_text(r, TextStyle{});
  EXPECT_TRUE(contains(text, "p2p via host bridge")) << text;
  EXPECT_TRUE(contains(text, "BUS_ADDR MISMATCH")) << text;
  EXPECT_TRUE(contains(text, "refused (EREMOTEIO)")) << text;
  EXPECT_TRUE(contains(text, "NOT_SUPPORTED ok")) << text;
  EXPECT_TRUE(contains(text, "refused by storage stack (loop0)")) << text;
  EXPECT_TRUE(contains(text, "host memory")) << text;
  EXPECT_TRUE(contains(text, "nvme2n1 (0000:01:00.0)")) << text;
  EXPECT_TRUE(contains(text, "\n  P2P memory        loop0  ")) << text;
  EXPECT_TRUE(contains(text,
                       "\nFindings\n  FAIL    0000:04:00.0 -> nvme2 (0000:01:00.0): 12 request(s) refused by the "
                       "kernel (NOT_SUPPORTED; storage -> memory)"))
      << text;
  EXPECT_EQ(watch_result_line(r, TextStyle{}),
            "RESULT: FAIL — failing: watch.refused (0000:04:00.0 -> nvme2 (0000:01:00.0)), watch.mismatch "
            "(0000:04:00.0 -> nvme0 (0000:06:00.0)), watch.fallback (train (pid 4242)), watch.stack_refused (loop0); "
            "0000:04:00.0 -> nvme0 (0000:06:00.0): 16384 bytes through the host bridge, predicted BUS_ADDR\n");
}

TEST(WatchText, NoP2pAndUnknownResultLines) {
  WatchReport host = report_of(
      snapshot_of({watch_row("", "", "nvme0n1", "dd", 77, WatchPath::kHost, WatchDir::kToDevice, 1024, 4 * kMiB)}));
  EXPECT_EQ(watch_result_line(host, TextStyle{}),
            "RESULT: NO P2P — no peer-to-peer I/O in 5.0 s; host memory: 4.0 MiB on nvme0n1\n");
  WatchReport none = report_of(
      snapshot_of({watch_row("", "", "vda", "dd", 77, WatchPath::kHost, WatchDir::kToDevice, 2048, 8 * kMiB)}),
      watch_facts(DecisionHook::kNone, "6.18.4"));
  EXPECT_EQ(watch_result_line(none, TextStyle{}),
            "RESULT: NO P2P — this kernel has no P2PDMA: nothing on this kernel can go peer-to-peer; host memory: "
            "8.0 MiB on vda\n");
  WatchFacts f = watch_facts();
  f.cannot_watch = "not root: loading the eBPF probe needs root (CAP_BPF and CAP_PERFMON)";
  WatchReport unknown = report_of(snapshot_of({bus_read()}), f);
  EXPECT_EQ(watch_result_line(unknown, TextStyle{}),
            "RESULT: UNKNOWN — cannot watch: not root: loading the eBPF probe needs root (CAP_BPF and CAP_PERFMON)\n");
  std::string text = watch_text(unknown, TextStyle{});
  EXPECT_FALSE(contains(text, "GPU (provider)")) << text;
  EXPECT_FALSE(contains(text, "host")) << text;
  // Colour only when asked.
  TextStyle color;
  color.color = true;
  EXPECT_EQ(watch_result_line(unknown, color).rfind("\x1b[35mRESULT: UNKNOWN\x1b[0m — ", 0), 0u);
}

// An admin or passthrough command's queue has no disk: named so, not left blank.
TEST(WatchText, ARequestWithoutADiskSaysSo) {
  WatchReport r = report_of(
      snapshot_of({watch_row("", "", "", "nvme", 9, WatchPath::kHost, WatchDir::kToDevice, 2, 8192),
                   watch_row("", "", "nvme0n1", "dd", 77, WatchPath::kHost, WatchDir::kToDevice, 1024, 4 * kMiB)},
                  2.5));
  const std::string text = watch_text(r, TextStyle{});
  EXPECT_TRUE(contains(text, "  host memory  (no disk)               host  storage -> memory  ")) << text;
  EXPECT_EQ(watch_result_line(r, TextStyle{}),
            "RESULT: NO P2P — no peer-to-peer I/O in 2.5 s; host memory: 4.0 MiB on (no disk), nvme0n1\n");
}

TEST(WatchText, AHostileCommCannotAddALine) {
  WatchReport r = report_of(snapshot_of(
      {watch_row("", "", "nvme2n1", "x\nRESULT: PASS", 66, WatchPath::kHost, WatchDir::kToDevice, 1, 4096),
       watch_row(kGpu, kRootPortNvme, "", "x\nRESULT: PASS", 66, WatchPath::kRefused, WatchDir::kToDevice, 1, 0, 0, 5),
       watch_row("", "", "dm-\x1b[2J", "dd", 7, WatchPath::kStackRefused, WatchDir::kToStorage, 1, 0)}));
  std::string text = watch_text(r, TextStyle{});
  EXPECT_EQ(lines_starting(text, "RESULT:"), 1) << text;
  EXPECT_TRUE(contains(text, "x\\nRESULT: PASS 66")) << text;
  EXPECT_TRUE(contains(text, "dm-\\x1b[2J")) << text;
  EXPECT_FALSE(contains(text, "\x1b")) << text;
  EXPECT_TRUE(contains(watch_result_line(r, TextStyle{}), "watch.fallback (x\\nRESULT: PASS (pid 66))"));
  std::string lines = watch_interval_text(r, "14:02:11");
  EXPECT_EQ(lines_starting(lines, "RESULT"), 0) << lines;
  EXPECT_TRUE(contains(lines, "host (x\\nRESULT: PASS 66)")) << lines;
}

TEST(WatchText, IntervalLinesGiveRatesPerSecond) {
  WatchSnapshot before = snapshot_of({bus_read(8 * kMiB)}, 10);
  WatchRow more = bus_read(8 * kMiB + 6496 * kMiB / 2);
  more.requests += 6496;
  WatchSnapshot after = snapshot_of({more}, 12);
  WatchReport interval = report_of(watch_delta(before, after));
  EXPECT_DOUBLE_EQ(interval.seconds, 2);
  EXPECT_EQ(watch_interval_header(),
            "time      memory                  block device                path                  direction          "
            "   reqs     MiB/s  errors predicted\n");
  EXPECT_EQ(watch_interval_text(interval, "14:02:11"),
            "14:02:11  0000:04:00.0 GPU        nvme0n1 (0000:06:00.0)      p2p bus address       storage -> memory  "
            "   6496    1624.0       0 BUS_ADDR ok\n");
  EXPECT_EQ(watch_interval_text(report_of(watch_delta(after, after)), "14:02:13"), "");
}

TEST(WatchJson, DocumentHoldsEveryRowAndTheResult) {
  WatchSnapshot s = snapshot_of(
      {bus_read(),
       watch_row(kGpu, kRootPortNvme, "", "train", 4242, WatchPath::kRefused, WatchDir::kToDevice, 12, 0, 0, 0),
       watch_row("", "", "nvme2n1", "train", 4242, WatchPath::kHost, WatchDir::kToDevice, 3, 12288)});
  s.dropped_rows = 1;
  WatchReport r = report_of(s);
  nlohmann::ordered_json j = watch_json(r);
  keep_watch_json(j, "watch-fail.json");
  EXPECT_EQ(j["schema"], "p2pcheck.watch");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["result"], "FAIL");
  EXPECT_EQ(j["kernel"]["release"], "6.8.0-142-generic");
  EXPECT_EQ(j["decision_hook"], "pci_p2pdma_map_segment");
  EXPECT_EQ(j["hooks"].size(), 9u);
  EXPECT_EQ(j["hooks"][1]["attach"], "fexit pci_p2pdma_map_segment");
  EXPECT_EQ(j["hooks"][1]["attached"], true);
  ASSERT_EQ(j["pairs"].size(), 2u);
  const auto& bus = j["pairs"][1];  // pairs sort by provider, client: nvme2 (0000:01:00.0) first
  EXPECT_EQ(bus["provider"]["bdf"], kGpu);
  EXPECT_EQ(bus["provider"]["role"], "GPU");
  EXPECT_EQ(bus["client"]["controller"], "nvme0");
  EXPECT_EQ(bus["client"]["disks"], nlohmann::ordered_json::array({"nvme0n1"}));
  EXPECT_EQ(bus["path"], "bus_addr");
  EXPECT_EQ(bus["predicted"]["map_type"], "BUS_ADDR");
  EXPECT_EQ(bus["predicted"]["verdict"], "supported");
  EXPECT_EQ(bus["agrees"], true);
  EXPECT_EQ(bus["to_device"]["bytes"], 8 * kMiB);
  EXPECT_EQ(bus["to_device"]["requests"], 2048);
  EXPECT_EQ(bus["to_storage"]["requests"], 0);
  EXPECT_EQ(bus["to_device"]["requeues"], 0);  // counted: the requeue hook attached
  EXPECT_EQ(bus["processes"][0]["pid"], 4242);
  EXPECT_EQ(bus["processes"][0]["comm"], "train");
  EXPECT_TRUE(bus["refusal"].is_null());
  const auto& refused = j["pairs"][0];
  EXPECT_EQ(refused["path"], "refused");
  EXPECT_EQ(refused["refusal"]["errno"], "EREMOTEIO");
  EXPECT_EQ(refused["refusal"]["errno_value"], 121);
  EXPECT_EQ(refused["refusal"]["source"], "expected for this kernel");
  EXPECT_EQ(j["host"][0]["disk"], "nvme2n1");
  EXPECT_EQ(j["host"][0]["direction"], "to_device");
  EXPECT_EQ(j["host"][0]["bytes"], 12288);
  EXPECT_EQ(j["dropped_rows"], 1);
  EXPECT_EQ(j["p2p_bytes"], 8 * kMiB);
  std::vector<std::string> ids;
  for (const auto& f : j["findings"]) ids.push_back(f["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"watch.refused", "watch.fallback", "watch.dropped_rows"}));
  keep_watch_json(watch_json(report_of(snapshot_of({bus_read()}))), "watch-p2p-seen.json");
  WatchFacts f = watch_facts();
  f.cannot_watch = "not root";
  keep_watch_json(watch_json(report_of(snapshot_of({}), f)), "watch-unknown.json");
}

TEST(WatchJson, IntervalRecordIsTheDeltaWithItsTimes) {
  WatchSnapshot before = snapshot_of({bus_read(8 * kMiB)}, 10);
  WatchRow more = bus_read(16 * kMiB);
  more.requests = 4096;
  WatchSnapshot after = snapshot_of({more}, 12);
  nlohmann::ordered_json j = watch_interval_json(report_of(watch_delta(before, after)), after.seconds);
  keep_watch_json(j, "watch-interval.json");
  EXPECT_EQ(j["schema"], "p2pcheck.watch_interval");
  EXPECT_EQ(j["seconds"], 12.0);
  EXPECT_EQ(j["interval_seconds"], 2.0);
  EXPECT_EQ(j["pairs"][0]["to_device"]["bytes"], 8 * kMiB);
  EXPECT_EQ(j["pairs"][0]["to_device"]["requests"], 2048);
}

}  // namespace
}  // namespace p2pcheck
