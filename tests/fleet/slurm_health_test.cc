#include "p2pcheck/fleet/slurm_health.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

DriftReport drift(Result before, Result after) {
  HostSummary a, b;
  a.result = before;
  b.result = after;
  HostPair p;
  p.gpu = "0000:04:00.0";
  p.nvme = "0000:06:00.0";
  p.nvme_name = "nvme0";
  p.verdict = Verdict::kSupported;
  a.pairs.push_back(p);
  if (after != Result::kPass) {
    p.verdict = Verdict::kNotSupported;
    p.cause = Cause::kAcsRedirect;
    HostFix fix;
    fix.acs_ports.push_back(*Bdf::parse("0000:03:09.0"));
    b.fix = fix;
  }
  b.pairs.push_back(p);
  return compare_hosts(a, b);
}

TEST(SlurmHealth, DrainsWhenWorseWithAReadableReason) {
  DriftReport d = drift(Result::kPass, Result::kFail);
  HealthDecision h = health_decision({&d, "", false, true});
  EXPECT_EQ(h.action, HealthAction::kDrain);
  EXPECT_EQ(h.reason,
            "p2pcheck: ACS redirect on 0000:03:09.0 refuses pairs (not at the baseline); 0000:04:00.0 <-> nvme0 now "
            "refused (pair.acs_redirect); result PASS -> FAIL");
  auto argv = scontrol_drain("scontrol", "node-1", h.reason);
  EXPECT_EQ(argv[2], "nodename=node-1");
  EXPECT_EQ(argv[3], "state=drain");
  EXPECT_EQ(argv[4], "reason=" + h.reason);
}

TEST(SlurmHealth, ResumesOnlyItsOwnDrain) {
  DriftReport same = drift(Result::kPass, Result::kPass);
  EXPECT_EQ(health_decision({&same, "", false, true}).action, HealthAction::kNothing);
  EXPECT_EQ(health_decision({&same, "", true, true}).action, HealthAction::kResume);
  EXPECT_TRUE(
      drained_by_p2pcheck("NodeName=n1 Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=1 Reason=p2pcheck: "
                          "ACS redirect [root@2026-12-07T10:00:00]"));
  EXPECT_FALSE(drained_by_p2pcheck("NodeName=n1 State=IDLE+DRAIN Reason=disk failing [root@2026-12-07T10:00:00]"));
  EXPECT_FALSE(drained_by_p2pcheck("NodeName=n1 State=IDLE Reason=p2pcheck: stale"));
  EXPECT_EQ(scontrol_resume("/usr/bin/scontrol", "n1"),
            (std::vector<std::string>{"/usr/bin/scontrol", "update", "nodename=n1", "state=resume"}));
}

TEST(SlurmHealth, UnreadableInputIsNeverSilent) {
  HealthDecision h = health_decision({nullptr, "baseline /etc/p2pcheck/baseline.json: not valid JSON", false, true});
  EXPECT_TRUE(h.unreadable);
  EXPECT_EQ(h.action, HealthAction::kDrain);
  EXPECT_EQ(h.reason, "p2pcheck: cannot judge the node: baseline /etc/p2pcheck/baseline.json: not valid JSON");
  HealthDecision keep = health_decision({nullptr, "current: no such file", true, false});
  EXPECT_EQ(keep.action, HealthAction::kNothing);  // and never a resume on what it could not read
  EXPECT_NE(keep.message.find("UNREADABLE — cannot judge the node: current: no such file"), std::string::npos);
}

TEST(SlurmHealth, ReasonIsOnePrintableBoundedLine) {
  HealthDecision h = health_decision({nullptr, std::string(400, 'x') + "\n" + "RESULT: PASS", false, true});
  EXPECT_LE(h.reason.size(), kDrainReasonLimit);
  EXPECT_EQ(h.reason.find('\n'), std::string::npos);
  auto argv = scontrol_drain("scontrol", "n1", "p2pcheck: a\nb");
  EXPECT_EQ(argv[4], "reason=p2pcheck: a\\nb");
}

}  // namespace
}  // namespace p2pcheck
