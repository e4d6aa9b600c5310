// verify when the hardware misbehaves: a transfer that never completes, a slow I/O error near
// nvme's io_timeout, an NVMe removed during or after its transfer.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/verify/verify.h"
#include "p2pcheck/verify/verify_hipfile.h"
#include "p2pcheck/verify/verify_kmod.h"
#include "p2pcheck/verify/verify_p2pmem.h"
#include "p2pcheck/verify/verify_report.h"
#include "test_expect.h"
#include "test_paths.h"
#include "verify_fakes.h"
#include "verify_run.h"

namespace p2pcheck {
namespace {

using namespace p2pcheck::testing;

TEST(Verify, ATransferThatNeverCompletesIsCalledDroppedAndNothingElseStarts) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1", "nvme2"}};
  r.options.engine = EngineKind::kKmod;
  r.options.timeout_s = 0.3;
  r.target_on(r.nvme1_dir, 259, 1);
  TempDir nvme2_dir;
  r.target_on(nvme2_dir, 259, 2);
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  auto engine = r.engines.add(EngineKind::kKmod, [released](const TransferRequest& req) {
    released.wait();  // a DMA the root complex dropped: nothing comes back
    TransferResult t;
    t.error = -EIO;
    t.bytes = req.target.size;
    return t;
  });
  VerifyReport report = r.run();
  release->set_value();
  ASSERT_EQ(report.results.size(), 2u);
  const PairResult& first = report.results[0];
  ASSERT_EQ(first.directions.size(), 2u);
  EXPECT_EQ(first.directions[0].outcome, Outcome::kTimedOut);
  EXPECT_NE(first.directions[0].reason.find(
                "no completion within 0.3 s: the transfer was probably dropped by the root complex"),
            std::string::npos)
      << first.directions[0].reason;
  EXPECT_NE(first.directions[0].reason.find("io_timeout (30 s)"), std::string::npos);
  EXPECT_EQ(first.directions[1].outcome, Outcome::kNotRun);
  EXPECT_TRUE(first.target_removed);  // unlinked even though the abandoned worker still holds it open
  EXPECT_NE(report.results[1].problem.find("not run: nvme1 to_device did not complete"), std::string::npos)
      << report.results[1].problem;
  EXPECT_TRUE(report.abandoned);
  EXPECT_EQ(report.result, Level::kFail);
  EXPECT_EQ(engine->requests.size(), 1u);
  EXPECT_NE(verify_text(report, TextStyle{false, false}).find("TIMEOUT"), std::string::npos);
}

TEST(Verify, SlowIoErrorNearIoTimeoutPointsAtADroppedTransfer) {
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.options.engine = EngineKind::kKmod;
  r.target_on(r.nvme1_dir, 259, 1);
  r.engines.add(EngineKind::kKmod, failing_with(-EIO));
  VerifyReport report = r.run();
  const DirectionResult& d = ran(report)->directions[0];
  EXPECT_EQ(d.outcome, Outcome::kFailed);
  EXPECT_NE(d.reason.find("EIO: I/O error"), std::string::npos) << d.reason;
  // Fast failure: no io_timeout note (that needs the wall time of a real timeout).
  for (const auto& n : d.notes) EXPECT_EQ(n.find("io_timeout"), std::string::npos);
}

// Issue 15: an NVMe removed during the transfer leaves a 0-byte block device behind, whose ENOSPC
// and short reads read like a full file system. Verify names the vanished device instead, and does
// not start the other direction.
// A writable copy of the 8-GPU machine whose NVMe 0000:06:00.0 (nvme1) can go away, and a verify run
// on it: the GPU 0000:05:00.0 to nvme1 by the kmod engine, on a directory of nvme1.
struct RemovableNvme {
  TempDir copy;
  VerifyRun r;
  RemovableNvme() {
    std::filesystem::copy(fixture_root("epyc-mi300x-8gpu"), copy.path(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
    r.source = open_tree_source(copy.path());
    r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
    r.options.engine = EngineKind::kKmod;
    r.target_on(r.nvme1_dir, 259, 1);
  }
  // Hot-unplugged: the device's directory and its link go.
  void unplug() {
    const std::string link = copy.path() + "/sys/bus/pci/devices/0000:06:00.0";
    if (std::filesystem::exists(link)) std::filesystem::remove_all(std::filesystem::canonical(link));
    std::filesystem::remove(link);
  }
};

TEST(Verify, ANvmeRemovedDuringTheTransferIsNamedAndNothingMoreRuns) {
  RemovableNvme m;
  VerifyRun& r = m.r;
  int calls = 0;
  r.engines.add(EngineKind::kKmod, [&](const TransferRequest&) {
    ++calls;
    m.unplug();
    TransferResult t;
    t.error = -ENOSPC;
    return t;
  });
  VerifyReport report = r.run();
  const PairResult* pr = ran(report);
  ASSERT_TRUE(pr);
  ASSERT_EQ(pr->directions.size(), 2u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(pr->directions[0].outcome, Outcome::kFailed);
  EXPECT_EQ(pr->directions[0].reason.rfind("the NVMe 0000:06:00.0 (nvme1) is gone from /sys/bus/pci/devices: "
                                           "removed during the transfer",
                                           0),
            0u)
      << pr->directions[0].reason;
  EXPECT_NE(pr->directions[0].reason.find("ENOSPC"), std::string::npos) << pr->directions[0].reason;
  EXPECT_EQ(pr->directions[1].outcome, Outcome::kNotRun);
  EXPECT_NE(pr->directions[1].reason.find("not run: the NVMe 0000:06:00.0 (nvme1) is gone"), std::string::npos)
      << pr->directions[1].reason;
  EXPECT_EQ(report.result, Level::kFail);
  EXPECT_TRUE(pr->target_removed);  // the scratch file still goes
}

// The removal is still on its way when the 0-byte device answers: the function leaves sysfs only
// after a while. Verify looks again while it may (kRemovalGrace) and names the vanished device; an
// ENOSPC with the device staying is given as it is, after the grace; other errors wait for nothing.
TEST(Verify, ANvmeLeavingSysfsAfterItsErrorIsStillNamedAsRemoved) {
  for (int leaves_after : {1, 5, -1}) {  // pauses before the function leaves; -1: it never does
    SCOPED_TRACE(leaves_after);
    RemovableNvme m;
    VerifyRun& r = m.r;
    std::chrono::milliseconds paused{0};
    int pauses = 0;
    r.pause = [&](std::chrono::milliseconds wait) {
      paused += wait;
      if (++pauses == leaves_after) m.unplug();
    };
    r.engines.add(EngineKind::kKmod, failing_with(-ENOSPC));
    VerifyReport report = r.run();
    const PairResult* pr = ran(report);
    ASSERT_TRUE(pr);
    const std::string& reason = pr->directions[0].reason;
    if (leaves_after > 0) {
      EXPECT_EQ(reason.rfind("the NVMe 0000:06:00.0 (nvme1) is gone from /sys/bus/pci/devices", 0), 0u) << reason;
      EXPECT_EQ(pauses, leaves_after);
      EXPECT_EQ(pr->directions[1].outcome, Outcome::kNotRun);
    } else {
      EXPECT_EQ(reason.find("gone"), std::string::npos) << reason;
      EXPECT_NE(reason.find("ENOSPC"), std::string::npos) << reason;
      EXPECT_GE(paused, kRemovalGrace);  // each direction waited out the grace, and no longer
      EXPECT_LE(paused, 2 * kRemovalGrace);
    }
  }
  // An I/O error is no removal's answer: nothing waits.
  VerifyRun r;
  r.options.selection = {{"0000:05:00.0"}, {"nvme1"}};
  r.options.engine = EngineKind::kKmod;
  r.target_on(r.nvme1_dir, 259, 1);
  int pauses = 0;
  r.pause = [&](std::chrono::milliseconds) { ++pauses; };
  r.engines.add(EngineKind::kKmod, failing_with(-EIO));
  VerifyReport report = r.run();
  ASSERT_TRUE(ran(report));
  EXPECT_EQ(pauses, 0);
}

}  // namespace
}  // namespace p2pcheck
