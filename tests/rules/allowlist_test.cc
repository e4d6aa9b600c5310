// The host-bridge allowlist's rows by release (rules/policy.cc): each row allows from the release
// that carries it, pending rows never allow, and a refusal names the release that would allow.
#include "verdict_machine.h"

namespace p2pcheck {
namespace {

using testing::Machine;

TEST_F(Machine, RowsOfLaterKernelsSayWhenTheyArrive) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x0b25);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairDecision on68 = decide("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(on68.verdict, Verdict::kNotSupported);
  ASSERT_TRUE(on68.later);
  EXPECT_EQ(on68.later->since.str(), "7.1");
  assume_ = "7.1";
  EXPECT_EQ(decide("0000:01:00.0", "0000:02:00.0").verdict, Verdict::kSupported);
}

TEST_F(Machine, PendingRowsNeverAllow) {
  std::string hb = host_bridge("0000:00", 0x1d17, 0x1008);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  assume_ = "9.9";
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(d.verdict, Verdict::kNotSupported);
  ASSERT_TRUE(d.later);
  EXPECT_EQ(d.later->status, RowStatus::kPending);
}

// Read in Debian's 7.3.4 source (drivers/pci/p2pdma.c :568-571); earlier 7.3.y are not read.
TEST_F(Machine, NvidiaRowsAreIn7_3_4) {
  std::string hb = host_bridge("0000:00", 0x10de, 0x2f95);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("ARM", 0);
  EXPECT_EQ(decide("0000:01:00.0", "0000:02:00.0", "7.3.4+bpo-arm64").verdict, Verdict::kSupported);
  PairDecision before = decide("0000:01:00.0", "0000:02:00.0", "7.3.3-arm64");
  EXPECT_EQ(before.verdict, Verdict::kNotSupported);
  ASSERT_TRUE(before.later);
  EXPECT_EQ(before.later->since.str(), "7.3.4");
}

TEST_F(Machine, The0x09a2RowArrivedIn5_18) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x09a2);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  EXPECT_EQ(decide("0000:01:00.0", "0000:02:00.0").verdict, Verdict::kSupported);
  PairDecision old = decide("0000:01:00.0", "0000:02:00.0", "5.15.0-91-generic");
  EXPECT_EQ(old.verdict, Verdict::kNotSupported);
  ASSERT_TRUE(old.later);
  EXPECT_EQ(old.later->since.str(), "5.18");
}

}  // namespace
}  // namespace p2pcheck
