// watch's decision model on synthetic counters: what each observation means against p2pcheck's
// prediction for the pair, which findings it makes, and the result.
#include "p2pcheck/watch/watch_report.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "test_expect.h"
#include "watch_fixture.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

TEST(WatchReport, SwitchPairByBusAddressAsPredictedIsP2pSeen) {
  WatchReport r = report_of(snapshot_of(
      {watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToDevice, 2048, 8 * kMiB),
       watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToStorage, 1024,
                 4 * kMiB)}));
  ASSERT_EQ(r.pairs.size(), 1u);
  const WatchPair& p = r.pairs[0];
  EXPECT_EQ(p.provider, kGpu);
  EXPECT_EQ(p.provider_role, "GPU");
  EXPECT_EQ(p.client, kSwitchNvme);
  EXPECT_EQ(p.controller, "nvme0");
  EXPECT_EQ(p.disks, std::vector<std::string>{"nvme0n1"});
  EXPECT_TRUE(p.in_machine);
  EXPECT_EQ(p.predicted, MapType::kBusAddr);
  EXPECT_EQ(p.verdict, Verdict::kSupported);
  EXPECT_EQ(p.agrees, Tri::kYes);
  EXPECT_EQ(p.to_device.requests, 2048u);
  EXPECT_EQ(p.to_device.bytes, 8 * kMiB);
  EXPECT_EQ(p.to_storage.bytes, 4 * kMiB);
  EXPECT_EQ(p.other.requests, 0u);
  ASSERT_EQ(p.processes.size(), 1u);
  EXPECT_EQ(p.processes[0].tgid, 4242u);
  EXPECT_EQ(p.processes[0].requests, 3072u);
  EXPECT_EQ(p.processes[0].bytes, 12 * kMiB);
  EXPECT_FALSE(p.refusal);
  EXPECT_TRUE(r.findings.empty()) << r.findings[0].id;
  EXPECT_EQ(r.p2p_bytes(), 12 * kMiB);
  EXPECT_EQ(r.result, WatchResult::kP2pSeen);
  EXPECT_STREQ(to_string(r.result), "P2P SEEN");
}

TEST(WatchReport, ThroughTheHostBridgeWherePredictedBusAddrIsAMismatch) {
  WatchReport r = report_of(snapshot_of({watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242,
                                                   WatchPath::kThruHostBridge, WatchDir::kToDevice, 16, 1 * kMiB)}));
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].predicted, MapType::kBusAddr);
  EXPECT_EQ(r.pairs[0].agrees, Tri::kNo);
  const Finding* f = find_finding(r, "watch.mismatch");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_EQ(f->subject, "0000:04:00.0 -> nvme0 (0000:06:00.0)");
  EXPECT_TRUE(contains(f->message, "the kernel mapped this pair THRU_HOST_BRIDGE (p2p via host bridge, 16 request(s))"))
      << f->message;
  EXPECT_TRUE(contains(f->message, "but p2pcheck predicted BUS_ADDR")) << f->message;
  EXPECT_TRUE(contains(f->message,
                       "the kernel's decision is what happened, so p2pcheck's model of this machine is "
                       "wrong for this pair"));
  EXPECT_TRUE(contains(f->fix, "p2pcheck capture")) << f->fix;
  EXPECT_EQ(f->devices, (std::vector<Bdf>{*Bdf::parse(kGpu), *Bdf::parse(kSwitchNvme)}));
  expect_evidence_on_non_pass({*f});
  EXPECT_EQ(r.result, WatchResult::kFail);
}

WatchRow refusal(std::uint32_t status, std::uint32_t tgid = 4242, const std::string& comm = "train") {
  return watch_row(kGpu, kRootPortNvme, "", comm, tgid, WatchPath::kRefused, WatchDir::kToDevice, 12, 0, 0, status);
}

TEST(WatchReport, ARefusalWithStatus5FailedWithEremoteioAsObserved) {
  WatchReport r = report_of(snapshot_of({refusal(5)}));
  ASSERT_EQ(r.pairs.size(), 1u);
  const WatchPair& p = r.pairs[0];
  EXPECT_EQ(p.controller, "nvme2");
  EXPECT_EQ(p.predicted, MapType::kNotSupported);
  EXPECT_EQ(p.agrees, Tri::kYes);
  ASSERT_TRUE(p.refusal);
  EXPECT_TRUE(p.refusal->observed);
  EXPECT_EQ(p.refusal->status, 5u);
  EXPECT_EQ(p.refusal->errno_name, "EREMOTEIO");
  EXPECT_EQ(p.refusal->errno_value, 121);
  const Finding* f = find_finding(r, "watch.refused");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_EQ(f->subject, "0000:04:00.0 -> nvme2 (0000:01:00.0)");
  EXPECT_TRUE(contains(f->message,
                       "12 request(s) refused by the kernel (NOT_SUPPORTED; storage -> memory): the I/O "
                       "failed with EREMOTEIO (observed: blk_status 5); as p2pcheck predicted: "))
      << f->message;
  EXPECT_TRUE(contains(f->message, "by train (pid 4242)"));
  // The fix is the prediction's: an Intel root complex off the allowlist.
  EXPECT_TRUE(contains(f->fix, "put the GPU and the NVMe under one PCIe switch")) << f->fix;
  EXPECT_FALSE(find_finding(r, "watch.mismatch"));
  EXPECT_EQ(r.result, WatchResult::kFail);
}

TEST(WatchReport, ARefusalWithoutStatusGetsTheErrnoExpectedForThisKernel) {
  WatchReport r = report_of(snapshot_of({refusal(0)}));
  ASSERT_TRUE(r.pairs.at(0).refusal);
  EXPECT_FALSE(r.pairs[0].refusal->observed);
  EXPECT_EQ(r.pairs[0].refusal->errno_name, "EREMOTEIO");
  EXPECT_EQ(r.pairs[0].refusal->status, 0u);
  EXPECT_TRUE(contains(find_finding(r, "watch.refused")->message,
                       "failed with EREMOTEIO (expected for this kernel: the probe did not see the requests end)"));
  // 6.17+ (blk_rq_dma_map_iter_start) sets BLK_STS_INVAL: EINVAL, from the plan, not invented.
  WatchReport late = report_of(snapshot_of({refusal(0)}), watch_facts(DecisionHook::kIterStart, "6.18.4"));
  EXPECT_EQ(late.pairs.at(0).refusal->errno_name, "EINVAL");
  EXPECT_EQ(late.pairs[0].refusal->errno_value, 22);
  // A status this kernel's table does not name is shown as the status, with no errno.
  WatchReport odd = report_of(snapshot_of({refusal(42)}));
  EXPECT_TRUE(odd.pairs.at(0).refusal->observed);
  EXPECT_EQ(odd.pairs[0].refusal->errno_name, "");
  EXPECT_TRUE(contains(find_finding(odd, "watch.refused")->message, "failed with blk_status 42"));
}

TEST(WatchReport, ARefusalThenHostIoBySameProcessOnThatNvmeIsAFallback) {
  WatchReport r = report_of(snapshot_of({
      refusal(5),
      watch_row("", "", "nvme2n1", "train", 4242, WatchPath::kHost, WatchDir::kToDevice, 4812, 2406 * kMiB),
      watch_row("", "", "nvme2n1", "other", 99, WatchPath::kHost, WatchDir::kToDevice, 2, 8192),
      watch_row("", "", "nvme0n1", "train", 4242, WatchPath::kHost, WatchDir::kToDevice, 1, 4096),
  }));
  ASSERT_EQ(r.host.size(), 2u);
  EXPECT_EQ(r.host[1].disk, "nvme2n1");
  EXPECT_EQ(r.host[1].controller, "nvme2");
  EXPECT_EQ(r.host[1].client, kRootPortNvme);
  EXPECT_EQ(r.host[1].counts.bytes, 2406 * kMiB + 8192);
  ASSERT_EQ(r.host[1].processes.size(), 2u);
  EXPECT_EQ(r.host[1].processes[0].comm, "train");  // most bytes first
  int fallbacks = 0;
  for (const Finding& f : r.findings) fallbacks += f.id == "watch.fallback";
  EXPECT_EQ(fallbacks, 1);  // not the other process, not the other NVMe
  const Finding* f = find_finding(r, "watch.fallback");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_EQ(f->subject, "train (pid 4242)");
  EXPECT_EQ(f->message,
            "12 request(s) refused on 0000:04:00.0 -> nvme2 (0000:01:00.0), and 2406.0 MiB moved storage -> memory "
            "through host memory on nvme2n1 by the same process: a fallback (hipFile or GDS compatibility mode); the "
            "data moved, "
            "but not peer-to-peer");
  EXPECT_EQ(r.result, WatchResult::kFail);
}

TEST(WatchReport, StorageStackRefusalNamesTheDisk) {
  WatchReport r = report_of(
      snapshot_of({watch_row("", "", "loop0", "dd", 77, WatchPath::kStackRefused, WatchDir::kToStorage, 3, 0)}));
  EXPECT_TRUE(r.pairs.empty());
  ASSERT_EQ(r.stack_refused.size(), 1u);
  EXPECT_EQ(r.stack_refused[0].disk, "loop0");
  EXPECT_EQ(r.stack_refused[0].controller, "");
  EXPECT_EQ(r.stack_refused[0].counts.requests, 3u);
  const Finding* f = find_finding(r, "watch.stack_refused");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_EQ(f->subject, "loop0");
  EXPECT_EQ(f->message,
            "3 request(s) with P2P memory refused by the storage stack on loop0 (EREMOTEIO: md, dm and loop do not "
            "take P2P pages); by dd (pid 77)");
  EXPECT_EQ(r.result, WatchResult::kFail);
}

TEST(WatchReport, UnattributedCountsWarnButDoNotFail) {
  WatchSnapshot s = snapshot_of(
      {watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToDevice, 1, 4096)});
  s.unpaired = 3;
  s.inflight_full = 2;
  WatchReport r = report_of(s);
  EXPECT_EQ(r.unpaired, 3u);
  EXPECT_EQ(r.inflight_full, 2u);
  const Finding* f = find_finding(r, "watch.unpaired");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_EQ(f->message, "3 P2P mapping(s) were claimed by no request issue: counted, but in no pair's row");
  ASSERT_TRUE(find_finding(r, "watch.inflight_full"));
  EXPECT_FALSE(find_finding(r, "watch.dropped_rows"));
  EXPECT_EQ(r.result, WatchResult::kP2pSeen);
}

TEST(WatchReport, KernelWorkersAreNamedAndNeverMakeAFallback) {
  WatchReport r = report_of(snapshot_of({
      watch_row(kGpu, kSwitchNvme, "nvme0n1", "kworker/u8:2", 311, WatchPath::kBusAddr, WatchDir::kToDevice, 4, 16384),
      refusal(5, 311, "kworker/u8:2"),
      watch_row("", "", "nvme2n1", "kworker/u8:2", 311, WatchPath::kHost, WatchDir::kToDevice, 8, 32768),
  }));
  const Finding* f = find_finding(r, "watch.kworker");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kInfo);
  EXPECT_EQ(f->subject, "kworker/u8:2");
  EXPECT_EQ(r.pairs.at(0).processes.at(0).comm, "kworker/u8:2");
  EXPECT_FALSE(find_finding(r, "watch.fallback"));  // a kworker's tgid names no application
  EXPECT_TRUE(is_kernel_worker("kworker/0:1H"));
  EXPECT_FALSE(is_kernel_worker("kworkers"));
}

TEST(WatchReport, HostOnlyIoIsNoP2p) {
  WatchReport r = report_of(
      snapshot_of({watch_row("", "", "nvme0n1", "dd", 77, WatchPath::kHost, WatchDir::kToDevice, 1024, 4 * kMiB)}));
  EXPECT_TRUE(r.pairs.empty());
  ASSERT_EQ(r.host.size(), 1u);
  EXPECT_EQ(r.host[0].counts.bytes, 4 * kMiB);
  EXPECT_EQ(r.host[0].dir, WatchDir::kToDevice);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.result, WatchResult::kNoP2p);
}

TEST(WatchReport, NoDecisionHookMeansNothingCanGoPeerToPeer) {
  WatchReport r = report_of(
      snapshot_of({watch_row("", "", "nvme0n1", "dd", 77, WatchPath::kHost, WatchDir::kToDevice, 2048, 8 * kMiB)}),
      watch_facts(DecisionHook::kNone, "6.1.0-57-amd64"));
  EXPECT_FALSE(r.cannot_watch);
  ASSERT_EQ(r.host.size(), 1u);  // host rows are still shown
  const Finding* f = find_finding(r, "watch.no_p2pdma");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kInfo);
  EXPECT_TRUE(contains(f->message, "nothing on this kernel can go peer-to-peer")) << f->message;
  EXPECT_EQ(r.result, WatchResult::kNoP2p);
  // A kernel with P2PDMA whose decision function watch does not know cannot be watched instead.
  WatchFacts unknown = watch_facts(DecisionHook::kNone);
  unknown.hooks.problems = {"P2PDMA is built in, but none of the decision functions watch knows is in the BTF"};
  WatchReport u = report_of(snapshot_of({}), unknown);
  EXPECT_EQ(u.result, WatchResult::kUnknown);
  EXPECT_FALSE(find_finding(u, "watch.no_p2pdma"));
}

TEST(WatchReport, CannotWatchIsUnknownWithNoRowsAtAll) {
  WatchSnapshot s = snapshot_of(
      {watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToDevice, 1, 4096),
       watch_row("", "", "nvme0n1", "dd", 77, WatchPath::kHost, WatchDir::kToDevice, 1, 4096),
       watch_row("", "", "loop0", "dd", 77, WatchPath::kStackRefused, WatchDir::kToStorage, 1, 0)});
  s.unpaired = 4;
  WatchFacts f = watch_facts();
  f.cannot_watch = "not root: loading the eBPF probe needs root (CAP_BPF and CAP_PERFMON)";
  WatchReport r = report_of(s, f);
  EXPECT_EQ(r.cannot_watch, f.cannot_watch);
  EXPECT_TRUE(r.pairs.empty());
  EXPECT_TRUE(r.host.empty());
  EXPECT_TRUE(r.stack_refused.empty());
  EXPECT_EQ(r.unpaired, 0u);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "watch.cannot_watch");
  EXPECT_EQ(r.findings[0].level, Level::kUnknown);
  EXPECT_EQ(r.result, WatchResult::kUnknown);
}

TEST(WatchReport, AHookCountingNeedsThatDidNotAttachMeansCannotWatch) {
  WatchFacts f = watch_facts();
  for (WatchHook& h : f.hooks.hooks)
    if (h.program == "watch_rq_complete") {
      h.attached = false;
      h.error = "Invalid argument";
    }
  WatchReport r = report_of(
      snapshot_of({watch_row("", "", "nvme0n1", "dd", 77, WatchPath::kHost, WatchDir::kToDevice, 1, 4096)}), f);
  EXPECT_EQ(r.cannot_watch,
            "the hook tp_btf block_rq_complete did not attach (Invalid argument): requests cannot be counted without "
            "it");
  EXPECT_TRUE(r.host.empty());  // never "host" for I/O the probe could not see
  EXPECT_EQ(r.result, WatchResult::kUnknown);
  // The storage-stack hook alone missing is a warning: everything else is counted.
  WatchFacts pin = watch_facts();
  for (WatchHook& h : pin.hooks.hooks)
    if (h.program == "watch_bio_pin") h.attached = false;
  WatchReport p = report_of(snapshot_of({}), pin);
  EXPECT_FALSE(p.cannot_watch);
  ASSERT_TRUE(find_finding(p, "watch.hooks"));
  EXPECT_EQ(find_finding(p, "watch.hooks")->level, Level::kWarn);
}

TEST(WatchReport, ErrorsOnCompletedP2pRequestsFail) {
  WatchReport r = report_of(snapshot_of({watch_row(kGpu, kSwitchNvme, "nvme0n1", "p2pcheck", 500, WatchPath::kBusAddr,
                                                   WatchDir::kToDevice, 3, 0, 3, 10)}));
  const Finding* f = find_finding(r, "watch.errors");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_EQ(f->message,
            "3 P2P request(s) by bus address (storage -> memory) completed with an error (0.0 MiB), last blk_status "
            "10 (EIO): the kernel took the P2P path and the transfer failed");
  EXPECT_EQ(r.result, WatchResult::kFail);
}

// The lab's dropped request: nvme aborted it after io_timeout, kblockd issued it again, it completed.
TEST(WatchReport, RequeuedP2pRequestsWarnButTheirBytesCount) {
  WatchRow row =
      watch_row(kGpu, kSwitchNvme, "nvme0n1", "p2pcheck", 500, WatchPath::kBusAddr, WatchDir::kToStorage, 1, kMiB);
  row.requeues = 1;
  WatchReport r = report_of(snapshot_of({row}));
  EXPECT_TRUE(r.requeues_counted);
  EXPECT_EQ(r.pairs.at(0).to_storage.requeues, 1u);
  const Finding* f = find_finding(r, "watch.requeued");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_EQ(f->message,
            "1 requeue(s) of P2P requests by bus address before they completed (memory -> storage): the kernel issued "
            "them again after a timeout's abort or a busy device; all completed in the end");
  EXPECT_EQ(r.result, WatchResult::kP2pSeen);
  EXPECT_EQ(r.p2p_bytes(), kMiB);
}

// A recording made before watch counted requeues: not counted, which is not "none".
TEST(WatchReport, WithoutTheRequeueHookRequeuesAreNotCounted) {
  WatchFacts facts = watch_facts();
  std::erase_if(facts.hooks.hooks, [](const WatchHook& h) { return h.program == "watch_rq_requeue"; });
  WatchReport r = report_of(snapshot_of({watch_row(kGpu, kSwitchNvme, "nvme0n1", "p2pcheck", 500, WatchPath::kBusAddr,
                                                   WatchDir::kToStorage, 1, kMiB)}),
                            facts);
  EXPECT_FALSE(r.requeues_counted);
  EXPECT_EQ(r.result, WatchResult::kP2pSeen);
}

TEST(WatchReport, FiltersByNvmeNameGpuPidAndComm) {
  WatchSnapshot s = snapshot_of({
      watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToDevice, 1, 4096),
      refusal(5, 4243, "eval"),
      watch_row("", "", "nvme2n1", "eval", 4243, WatchPath::kHost, WatchDir::kToDevice, 1, 4096),
  });
  WatchFilter by_name;
  by_name.nvme = {"nvme2"};
  WatchReport r = report_of(s, watch_facts(), by_name);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].client, kRootPortNvme);
  ASSERT_EQ(r.host.size(), 1u);
  WatchFilter by_namespace;
  by_namespace.nvme = {"/dev/nvme0n1p1"};
  EXPECT_EQ(report_of(s, watch_facts(), by_namespace).pairs.at(0).client, kSwitchNvme);
  WatchFilter by_pid;
  by_pid.pid = 4242;
  WatchReport p = report_of(s, watch_facts(), by_pid);
  EXPECT_EQ(p.pairs.size(), 1u);
  EXPECT_TRUE(p.host.empty());
  WatchFilter by_comm;
  by_comm.comm = "eval";
  EXPECT_EQ(report_of(s, watch_facts(), by_comm).pairs.at(0).path, WatchPath::kRefused);
  WatchFilter other_gpu;
  other_gpu.gpu = {"05:00.0"};
  WatchReport g = report_of(s, watch_facts(), other_gpu);
  EXPECT_TRUE(g.pairs.empty());
  EXPECT_EQ(g.host.size(), 1u);  // host memory has no provider to select by
  WatchFilter bad;
  bad.gpu = {"gpu0"};
  EXPECT_EQ(usage_error([&] { report_of(s, watch_facts(), bad); }),
            "--gpu gpu0: not a PCI address (watch names P2P memory by its provider's, such as 0000:03:00.0)");
  bad = {};
  bad.nvme = {"sda"};
  EXPECT_EQ(usage_error([&] { report_of(s, watch_facts(), bad); }),
            "--nvme sda: not a PCI address or an NVMe name (nvme1, nvme1n1)");
}

TEST(WatchReport, ADeviceOutsideThisMachineHasNoPrediction) {
  WatchReport r = report_of(snapshot_of({watch_row("0000:c1:00.0", "0000:c2:00.0", "nvme9n1", "train", 1,
                                                   WatchPath::kBusAddr, WatchDir::kToDevice, 1, 4096)}));
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_FALSE(r.pairs[0].in_machine);
  EXPECT_EQ(r.pairs[0].agrees, Tri::kUnknown);
  EXPECT_EQ(r.pairs[0].provider_role, "");
  ASSERT_TRUE(find_finding(r, "watch.not_in_machine"));
  EXPECT_EQ(r.result, WatchResult::kP2pSeen);
}

TEST(WatchReport, DeltaIsEachRowsCountersSinceTheLastSnapshot) {
  WatchRow a =
      watch_row(kGpu, kSwitchNvme, "nvme0n1", "train", 4242, WatchPath::kBusAddr, WatchDir::kToDevice, 10, 40 * kMiB);
  WatchRow b = watch_row("", "", "nvme0n1", "dd", 77, WatchPath::kHost, WatchDir::kToDevice, 5, 20 * kMiB);
  WatchSnapshot before = snapshot_of({a, b}, 2);
  before.unpaired = 1;
  a.requests = a.segments = 25;
  a.bytes = 100 * kMiB;
  WatchRow c = watch_row("", "", "nvme2n1", "dd", 77, WatchPath::kHost, WatchDir::kToStorage, 1, 4096);
  WatchSnapshot after = snapshot_of({a, b, c}, 3);
  after.unpaired = 3;
  WatchSnapshot d = watch_delta(before, after);
  EXPECT_DOUBLE_EQ(d.seconds, 1);
  ASSERT_EQ(d.rows.size(), 2u);  // b did not move
  EXPECT_EQ(d.rows[0].requests, 15u);
  EXPECT_EQ(d.rows[0].bytes, 60 * kMiB);
  EXPECT_EQ(d.rows[0].segments, 15u);
  EXPECT_EQ(d.rows[1].disk, "nvme2n1");
  EXPECT_EQ(d.rows[1].bytes, 4096u);
  EXPECT_EQ(d.unpaired, 2u);
  // A probe started again counts from zero: its rows are new.
  WatchRow again = a;
  again.requests = 3;
  again.bytes = kMiB;
  WatchSnapshot restarted = watch_delta(after, snapshot_of({again}, 1));
  ASSERT_EQ(restarted.rows.size(), 1u);
  EXPECT_EQ(restarted.rows[0].requests, 3u);
  EXPECT_EQ(restarted.rows[0].bytes, kMiB);
  EXPECT_DOUBLE_EQ(restarted.seconds, 1);
}

}  // namespace
}  // namespace p2pcheck
