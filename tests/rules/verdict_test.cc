// One test per branch of the kernel's calc_map_type_and_dist() and host check (p2pdma.c), and of
// p2pcheck's rules on top (unknown facts, pre-Zen AMD, known-bad kernels, CONFIG_PCI_P2PDMA).
#include "p2pcheck/rules/verdict.h"

#include "verdict_machine.h"

namespace p2pcheck {
namespace {

using testing::bdfs;
using testing::ConfigSpace;
using testing::FakeRoot;
using testing::FakeSysfs;
using testing::kNoAcs;
using testing::Machine;

TEST_F(Machine, SameFunctionIsBusAddrAtDistanceZero) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:03:00.0", "0000:03:00.0");
  EXPECT_EQ(d.map_type, MapType::kBusAddr);
  EXPECT_EQ(d.distance, 0);
}

TEST_F(Machine, SameSwitchWithoutAcsStaysBelowIt) {
  switch_machine(0x001d, kNoAcs, kNoAcs, kNoAcs);  // ACS above the common bridge is not looked at
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(d.map_type, MapType::kBusAddr);
  EXPECT_EQ(d.distance, 4);
  EXPECT_EQ(d.verdict, Verdict::kSupported);
  EXPECT_FALSE(d.host_checked);
  EXPECT_EQ(d.to_gpu.verdict, Verdict::kSupported);
}

TEST_F(Machine, AcsOnTheProviderSendsItThroughTheHostBridge) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs, 0x0004);
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(d.map_type, MapType::kNotSupported);
  EXPECT_EQ(d.distance, -1);
  EXPECT_EQ(bdfs(d.walk.acs_redirect), "0000:03:00.0");
  EXPECT_EQ(d.decided_by, DecidedBy::kHostCheckFails);
}

TEST_F(Machine, AcsOnTheCommonBridgeCounts) {
  switch_machine(kNoAcs, 0x0008, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x19);
  PairDecision d = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(d.map_type, MapType::kThruHostBridge);  // Zen allows it
  EXPECT_EQ(d.distance, 4);
  EXPECT_EQ(bdfs(d.walk.acs_redirect), "0000:01:00.0");
  EXPECT_EQ(d.decided_by, DecidedBy::kCpuAllows);
}

TEST_F(Machine, AcsOnTheClientSideCountsInTheKernelsOrder) {
  switch_machine(kNoAcs, kNoAcs, 0x001d, 0x0020);  // EC alone also counts
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(d.map_type, MapType::kNotSupported);
  EXPECT_EQ(bdfs(d.walk.acs_redirect), "0000:02:01.0 0000:02:02.0");
}

TEST_F(Machine, AcsBitsOtherThanRedirectDoNotCount) {
  switch_machine(kNoAcs, 0x0011, 0x0013, 0x0001);  // SV, TB, UF only
  cpu("GenuineIntel", 6);
  EXPECT_EQ(decide("0000:03:00.0", "0000:04:00.0").map_type, MapType::kBusAddr);
}

TEST_F(Machine, DifferentRootPortsGoThroughTheHostBridge) {
  std::string hb = host_bridge("0000:00");
  endpoint(port(hb, "0000:00:01.0", 4, 0x001d), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4, 0x001d), "0000:02:00.0", 0x010802);
  cpu("AuthenticAMD", 0x17);
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(d.map_type, MapType::kThruHostBridge);
  EXPECT_EQ(d.distance, 4);
  EXPECT_TRUE(d.walk.acs_checked.empty());  // ACS is not consulted without a common bridge
  EXPECT_EQ(d.host.cpu_supports, Tri::kYes);
  EXPECT_EQ(d.decided_by, DecidedBy::kCpuAllows);
}

TEST_F(Machine, IntelUnlistedHostBridgeIsRefused) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x6f00);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(d.map_type, MapType::kNotSupported);
  EXPECT_EQ(d.distance, -1);
  EXPECT_EQ(d.host.allowlisted, Tri::kNo);
  EXPECT_EQ(d.host.bridges[0].result, BridgeResult::kNotOnAllowlist);
  ASSERT_TRUE(d.host.table_version);
  EXPECT_EQ(d.host.table_version->str(), "6.8");
  EXPECT_FALSE(d.later);
}

TEST_F(Machine, IntelListedHostBridgeIsAllowed) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x2020);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(d.map_type, MapType::kThruHostBridge);
  EXPECT_EQ(d.host.allowlisted, Tri::kYes);
  EXPECT_EQ(d.decided_by, DecidedBy::kAllowlistAllows);
  EXPECT_EQ(d.distance, 4);
}

TEST_F(Machine, RootPortFirstOnTheBusIsTheHostBridgeDevice) {
  std::string hb = host_bridge("0000:17", 0);  // Skylake-SP stacks: no 00.0 device, a root port first
  endpoint(port(hb, "0000:17:02.0", 4, kNoAcs, 0x8086, 0x2032), "0000:18:00.0", 0x030000);
  endpoint(port(hb, "0000:17:03.0", 4, kNoAcs, 0x8086, 0x2033), "0000:19:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:18:00.0", "0000:19:00.0");
  ASSERT_EQ(d.host.bridges.size(), 1u);
  EXPECT_EQ(d.host.bridges[0].device, Bdf::parse("0000:17:02.0"));
  EXPECT_EQ(d.verdict, Verdict::kSupported);
}

TEST_F(Machine, NoDeviceAtZeroAndNoRootPortFirstMeansNoHostBridgeDevice) {
  std::string hb = host_bridge("0000:80", 0);
  sys_.add(hb, "0000:80:04.0", 0x8086, 0x2021, 0x088000, ConfigSpace(0x8086, 0x2021, 0x088000, false).pcie(9).bytes());
  endpoint(port(hb, "0000:80:05.0", 4, kNoAcs, 0x8086, 0x2030), "0000:81:00.0", 0x030000);
  endpoint(port(hb, "0000:80:06.0", 4, kNoAcs, 0x8086, 0x2030), "0000:82:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:81:00.0", "0000:82:00.0");
  EXPECT_FALSE(d.host.bridges[0].device);
  EXPECT_EQ(d.host.bridges[0].result, BridgeResult::kNoHostBridgeDevice);
  EXPECT_EQ(d.verdict, Verdict::kNotSupported);
}

TEST_F(Machine, RootBusDevicesHaveNoUpstreamBridge) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x6f00);
  endpoint(hb, "0000:00:03.0", 0x030000, 9);
  endpoint(hb, "0000:00:04.0", 0x010802, 9);
  cpu("AuthenticAMD", 0x19);
  PairDecision d = decide("0000:00:03.0", "0000:00:04.0");
  EXPECT_EQ(d.map_type, MapType::kThruHostBridge);
  EXPECT_EQ(d.distance, 2);
}

TEST_F(Machine, VirtualFunctionCountsFromItsPhysicalFunction) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  std::string vf = endpoint("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0", "0000:03:00.4", 0x120000);
  root_.link(vf + "/physfn", "../0000:03:00.0");
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:03:00.4", "0000:04:00.0");
  EXPECT_EQ(d.map_type, MapType::kBusAddr);
  EXPECT_EQ(d.distance, 4);
}

TEST_F(Machine, DifferentHostBridgesBothAllowlistedWithoutReqSame) {
  endpoint(port(host_bridge("0000:17", 0), "0000:17:00.0", 4, kNoAcs, 0x8086, 0x2030), "0000:18:00.0", 0x030000);
  endpoint(port(host_bridge("0000:ae", 0), "0000:ae:00.0", 4, kNoAcs, 0x8086, 0x2030), "0000:af:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:18:00.0", "0000:af:00.0");
  EXPECT_FALSE(d.host.same_host_bridge);
  EXPECT_EQ(d.host.bridges.size(), 2u);
  EXPECT_EQ(d.verdict, Verdict::kSupported);
  EXPECT_EQ(d.distance, 4);
}

TEST_F(Machine, ReqSameHostBridgeRefusesAcrossHostBridges) {
  endpoint(port(host_bridge("0000:00", 0x8086, 0x2f00), "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(host_bridge("0000:80", 0x8086, 0x2f00), "0000:80:01.0", 4), "0000:81:00.0", 0x010802);
  endpoint(port("sys/devices/pci0000:00", "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairDecision across = decide("0000:01:00.0", "0000:81:00.0");
  EXPECT_EQ(across.verdict, Verdict::kNotSupported);
  EXPECT_EQ(across.host.bridges[0].result, BridgeResult::kOnlyWithinOneHostBridge);
  EXPECT_EQ(across.host.bridges[1].result, BridgeResult::kOnlyWithinOneHostBridge);
  EXPECT_EQ(decide("0000:01:00.0", "0000:02:00.0").verdict, Verdict::kSupported);
}

TEST_F(Machine, PreZenAmdIsRefusedButWritesWouldPass) {
  std::string hb = host_bridge("0000:00", 0x1002, 0x5a10);
  endpoint(port(hb, "0000:00:02.0", 4, kNoAcs, 0x1002, 0x5a16), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:0d.0", 4, kNoAcs, 0x1002, 0x5a1e), "0000:02:00.0", 0x010802);
  cpu("AuthenticAMD", 0x15);
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(d.verdict, Verdict::kNotSupported);
  EXPECT_EQ(d.to_gpu.hardware, Hardware::kPasses);
  EXPECT_EQ(d.to_gpu.reason, FlowReason::kPreZenWritePasses);
  EXPECT_EQ(d.from_gpu.hardware, Hardware::kDropped);
  EXPECT_EQ(d.from_gpu.reason, FlowReason::kPreZenReadDropped);
  EXPECT_EQ(d.host.cpu_supports, Tri::kNo);
}

TEST_F(Machine, PreZenBehindASwitchWorksBothWays) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x10);
  PairDecision d = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(d.to_gpu.verdict, Verdict::kSupported);
  EXPECT_EQ(d.from_gpu.verdict, Verdict::kSupported);
  EXPECT_EQ(d.to_gpu.hardware, Hardware::kAsTheKernelSays);
  EXPECT_EQ(d.to_gpu.reason, FlowReason::kAllowed);
}

TEST_F(Machine, HygonIsNotAmdToTheKernel) {
  std::string hb = host_bridge("0000:00", 0x1d94, 0x1450);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("HygonGenuine", 0x18);
  EXPECT_EQ(decide("0000:01:00.0", "0000:02:00.0").verdict, Verdict::kNotSupported);
}

TEST_F(Machine, UnreadableAcsIsUnknownUnlessEitherWayIsAllowed) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x6f00);
  std::string rp = port(hb, "0000:00:01.0", 4);
  std::string up = port(rp, "0000:01:00.0", 5, kNoAcs, 0x10b5, 0x8747);
  endpoint(port(up, "0000:02:01.0", 6, 0x001d, 0x10b5, 0x8747), "0000:03:00.0", 0x120000);
  // The NVMe's port was read without root: 64 bytes, ACS unknown.
  sys_.add(up, "0000:02:02.0", 0x10b5, 0x8747, 0x060400, ConfigSpace(0x10b5, 0x8747, 0x060400, true).pcie(6).bytes(64));
  endpoint("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0", "0000:04:00.0", 0x010802);
  endpoint("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0", "0000:04:00.1", 0x010802);
  cpu("GenuineIntel", 6);
  // A known redirect decides regardless of the unknown one.
  EXPECT_EQ(decide("0000:03:00.0", "0000:04:00.0").verdict, Verdict::kNotSupported);
  // Two functions below the unreadable port: it is their common bridge, and the kernel checks it.
  PairDecision d = decide("0000:04:00.0", "0000:04:00.1");
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  ASSERT_EQ(d.unknowns.size(), 1u);
  EXPECT_EQ(d.unknowns[0].fact, UnknownFact::kAcsControl);
  EXPECT_EQ(d.unknowns[0].function->bdf.str(), "0000:02:02.0");
  EXPECT_EQ(d.decided_by, DecidedBy::kCannotDecide);
  ASSERT_TRUE(d.undecided_by);
  EXPECT_EQ(d.undecided_by->function, d.unknowns[0].function);
}

TEST_F(Machine, UnknownAcsWithZenIsStillSupported) {
  std::string hb = host_bridge("0000:00", 0x1022, 0x14a4);
  std::string rp = port(hb, "0000:00:01.1", 4);
  std::string up = port(rp, "0000:01:00.0", 5, kNoAcs, 0x10b5, 0x8747);
  sys_.add(up, "0000:02:01.0", 0x10b5, 0x8747, 0x060400, ConfigSpace(0x10b5, 0x8747, 0x060400, true).pcie(6).bytes(64));
  endpoint("sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:01.0", "0000:03:00.0", 0x120000);
  endpoint(port(up, "0000:02:02.0", 6, kNoAcs, 0x10b5, 0x8747), "0000:04:00.0", 0x010802);
  cpu("AuthenticAMD", 0x19);
  PairDecision zen = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(zen.map_type, MapType::kUnknown);
  EXPECT_EQ(zen.verdict, Verdict::kSupported);
  EXPECT_EQ(zen.distance, 4);
  EXPECT_EQ(zen.decided_by, DecidedBy::kEitherWay);
  cpu("GenuineIntel", 6);
  PairDecision intel = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(intel.verdict, Verdict::kUnknown);
  EXPECT_FALSE(intel.distance);
  EXPECT_FALSE(intel.unknowns.empty());
}

TEST_F(Machine, KernelWithoutP2pdmaRefusesEverything) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x19);
  p2pdma_ = "n";
  PairDecision d = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(d.verdict, Verdict::kNotSupported);
  EXPECT_EQ(d.distance, -1);
  EXPECT_EQ(d.map_type, MapType::kNotSupported);
  EXPECT_EQ(d.decided_by, DecidedBy::kNoP2pdmaConfig);
  ASSERT_TRUE(d.no_p2pdma);
  EXPECT_EQ(d.no_p2pdma->config_file, "/boot/config");
  EXPECT_EQ(d.to_gpu.verdict, Verdict::kNotSupported);
  // The first level still says what the path alone would do under this kernel's rules.
  EXPECT_EQ(d.path_map_type, MapType::kBusAddr);
  EXPECT_EQ(d.path_verdict, Verdict::kSupported);
}

TEST_F(Machine, KnownBadKernelIsNeverUsed) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x19);
  PairDecision d = decide("0000:03:00.0", "0000:04:00.0", "5.14.0-687.49.1.el9_8.x86_64");
  EXPECT_EQ(d.map_type, MapType::kBusAddr);      // what the kernel would do...
  EXPECT_EQ(d.verdict, Verdict::kNotSupported);  // ...but it corrupts memory
  EXPECT_EQ(d.path_verdict, Verdict::kSupported);
  EXPECT_EQ(d.to_gpu.reason, FlowReason::kKnownBadKernel);
  ASSERT_TRUE(d.known_bad);
  EXPECT_STREQ(d.known_bad->name, "RHEL 9.8");
  EXPECT_EQ(d.distance, 4);  // the path rules stand
}

TEST_F(Machine, UnknownReleaseUsesTheOldestVerifiedTable) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x09a2);  // in the table since 5.18: in 6.1's
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0", "");
  KernelRules rules = kernel_rules_for(machine_, std::nullopt);
  EXPECT_FALSE(rules.version);
  EXPECT_EQ(rules.table_basis, TableBasis::kReleaseUnknown);
  EXPECT_FALSE(d.host.table_version);
  EXPECT_EQ(d.verdict, Verdict::kSupported);
  // A 7.1 row is not in the oldest verified table.
  auto dsa = std::find_if(host_bridge_allowlist().begin(), host_bridge_allowlist().end(),
                          [](const AllowlistEntry& row) { return row.vendor == 0x8086 && row.device == 0x0b25; });
  ASSERT_NE(dsa, host_bridge_allowlist().end());
  const AllowlistEntry& row71 = *dsa;
  EXPECT_EQ(row71.since.str(), "7.1");
  EXPECT_FALSE(allowlist_row_in_kernel(row71, std::nullopt));
  EXPECT_TRUE(allowlist_row_in_kernel(row71, KernelVersion{7, 1, 0}));
}

TEST_F(Machine, HostBridgeMissingFromTheTopologyFails) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  decide("0000:03:00.0", "0000:04:00.0");
  BridgeCheck missing = single_host_bridge_whitelist(topo_, "0000:99", true, KernelVersion{6, 8, 0});
  EXPECT_EQ(missing.result, BridgeResult::kNotInTopology);
  EXPECT_EQ(missing.passes, Tri::kNo);
  EXPECT_FALSE(missing.device);
  EXPECT_FALSE(missing.device_unknown);
  EXPECT_FALSE(pci_host_bridge_dev(topo_, "0000:99").in_topology);
  EXPECT_TRUE(pci_host_bridge_dev(topo_, "0000:00").in_topology);
}

TEST_F(Machine, NoKernelConfigMakesAnAllowedPairUnknown) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x19);
  p2pdma_ = "";
  // A release that names no distribution kernel: nothing says whether it has P2PDMA.
  PairDecision d = decide("0000:03:00.0", "0000:04:00.0", "6.8.12-custom");
  EXPECT_EQ(d.map_type, MapType::kBusAddr);
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_EQ(d.to_gpu.verdict, Verdict::kUnknown);
  EXPECT_EQ(d.to_gpu.reason, FlowReason::kAllowed);  // the path is fine; the kernel build is not known
  EXPECT_EQ(d.path_verdict, Verdict::kSupported);    // "path ok, kernel unknown", not "path unknown"
  EXPECT_EQ(d.path_map_type, MapType::kBusAddr);
  ASSERT_EQ(d.unknowns.size(), 1u);
  EXPECT_EQ(d.unknowns[0].fact, UnknownFact::kP2pdmaConfig);
  // --what-if-kernel: this machine's config says nothing about that kernel, so it is not asked.
  assume_ = "6.12";
  PairDecision assumed = decide("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(assumed.verdict, Verdict::kSupported);
  EXPECT_TRUE(assumed.unknowns.empty());
}

TEST_F(Machine, NoKernelConfigLeavesARefusalRefused) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x6f00);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  p2pdma_ = "";
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0", "6.8.12-custom");
  EXPECT_EQ(d.verdict, Verdict::kNotSupported);
  EXPECT_EQ(d.decided_by, DecidedBy::kHostCheckFails);
  ASSERT_EQ(d.unknowns.size(), 1u);
  EXPECT_EQ(d.unknowns[0].fact, UnknownFact::kP2pdmaConfig);
}

TEST_F(Machine, UnknownCpuWithAnAllowlistedBridgeIsStillAllowed) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x2020);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("", -1);  // no /proc/cpuinfo
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(d.host.cpu_supports, Tri::kUnknown);
  EXPECT_EQ(d.host.allowed, Tri::kYes);
  EXPECT_EQ(d.map_type, MapType::kThruHostBridge);
  EXPECT_EQ(d.verdict, Verdict::kSupported);
  EXPECT_EQ(d.decided_by, DecidedBy::kAllowlistAllows);
  ASSERT_EQ(d.unknowns.size(), 1u);
  EXPECT_EQ(d.unknowns[0].fact, UnknownFact::kCpu);
}

TEST_F(Machine, UnknownCpuWithAnUnlistedBridgeIsUnknown) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x6f00);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("", -1);
  PairDecision d = decide("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(d.host.cpu_supports, Tri::kUnknown);
  EXPECT_EQ(d.host.allowlisted, Tri::kNo);
  EXPECT_EQ(d.host.allowed, Tri::kUnknown);
  EXPECT_EQ(d.map_type, MapType::kUnknown);
  EXPECT_EQ(d.verdict, Verdict::kUnknown);
  EXPECT_FALSE(d.distance);
  EXPECT_EQ(d.decided_by, DecidedBy::kCannotDecide);
  ASSERT_TRUE(d.undecided_by);
  EXPECT_EQ(d.undecided_by->fact, UnknownFact::kCpu);
}

TEST(KernelRules, CpuSupportsP2pdmaIsZenOrNewerAmdOnly) {
  auto cpu = [](const std::string& vendor, int family) {
    CpuInfo c;
    c.vendor_id = vendor;
    c.family = family;
    return c;
  };
  EXPECT_EQ(cpu_supports_p2pdma(cpu("AuthenticAMD", 0x17)), Tri::kYes);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("AuthenticAMD", 0x1a)), Tri::kYes);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("AuthenticAMD", 0x16)), Tri::kNo);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("HygonGenuine", 0x18)), Tri::kNo);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("GenuineIntel", 6)), Tri::kNo);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("", -1)), Tri::kUnknown);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("AuthenticAMD", -1)), Tri::kUnknown);
  EXPECT_TRUE(cpu_is_pre_zen_amd(cpu("AuthenticAMD", 0x15)));
  EXPECT_FALSE(cpu_is_pre_zen_amd(cpu("AuthenticAMD", 0x17)));
  EXPECT_FALSE(cpu_is_pre_zen_amd(cpu("AuthenticAMD", -1)));
}

TEST(KernelRules, MapThroughHostBridge) {
  PairWalk walk;
  HostCheck host;
  walk.map_type = MapType::kBusAddr;
  EXPECT_EQ(map_through_host_bridge(walk, host), MapType::kBusAddr);  // no host check at all
  walk.map_type = MapType::kThruHostBridge;
  host.allowed = Tri::kYes;
  EXPECT_EQ(map_through_host_bridge(walk, host), MapType::kThruHostBridge);
  host.allowed = Tri::kNo;
  EXPECT_EQ(map_through_host_bridge(walk, host), MapType::kNotSupported);
  host.allowed = Tri::kUnknown;
  EXPECT_EQ(map_through_host_bridge(walk, host), MapType::kUnknown);
  walk.map_type = MapType::kUnknown;  // ACS unreadable
  host.allowed = Tri::kYes;
  EXPECT_EQ(map_through_host_bridge(walk, host), MapType::kUnknown);
  host.allowed = Tri::kNo;
  EXPECT_EQ(map_through_host_bridge(walk, host), MapType::kUnknown);
}

TEST(KernelRules, TriLogic) {
  EXPECT_EQ(Tri{}, Tri::kUnknown);
  EXPECT_EQ(tri_and(Tri::kNo, Tri::kUnknown), Tri::kNo);
  EXPECT_EQ(tri_and(Tri::kYes, Tri::kUnknown), Tri::kUnknown);
  EXPECT_EQ(tri_and(Tri::kYes, Tri::kYes), Tri::kYes);
  EXPECT_EQ(tri_or(Tri::kYes, Tri::kUnknown), Tri::kYes);
  EXPECT_EQ(tri_or(Tri::kNo, Tri::kUnknown), Tri::kUnknown);
  EXPECT_EQ(tri_or(Tri::kNo, Tri::kNo), Tri::kNo);
}

TEST(Policy, KnownBadKernelsMatchReleasesNotBuilds) {
  EXPECT_TRUE(find_known_bad_kernel("5.14.0-687.49.1.el9_8.x86_64"));
  EXPECT_TRUE(find_known_bad_kernel("6.12.0-211.58.1.el10_2.x86_64"));
  EXPECT_TRUE(find_known_bad_kernel("5.14.0-690.1.1.el9_8"));
  EXPECT_FALSE(find_known_bad_kernel("5.14.0-570.58.1.el9_6.x86_64"));
  EXPECT_FALSE(find_known_bad_kernel("6.12.0-55.41.1.el10_0.x86_64"));
  EXPECT_FALSE(find_known_bad_kernel("6.12.0-1.el10_20.x86_64"));
}

// What identifies the build, not a name suffix: RHEL's numbering at or after the base's build is the
// same kernel base whatever follows it; other distributions' numbering is not.
TEST(Policy, KnownBadBasesWhateverTheSuffix) {
  auto match = [](const char* release) { return identify_known_bad_kernel(release).match; };
  EXPECT_EQ(match("5.14.0-687.49.1.el9_8.x86_64+debug"), KnownBadMatch::kRelease);
  for (const char* rebuild : {"5.14.0-687.49.1.1toss.t5.x86_64", "5.14.0-687.el9.x86_64", "5.14.0-687",
                              "5.14.0-700.1.1.el9_10.x86_64", "6.12.0-211.el10.x86_64", "6.12.0-230.el10_3+rt"}) {
    KnownBadIdentity id = identify_known_bad_kernel(rebuild);
    EXPECT_EQ(id.match, KnownBadMatch::kSameBase) << rebuild;
    ASSERT_TRUE(id.row) << rebuild;
  }
  EXPECT_EQ(identify_known_bad_kernel("5.14.0-687.49.1.1toss.t5.x86_64").base, "5.14.0-687");
  EXPECT_STREQ(identify_known_bad_kernel("6.12.0-211.el10.x86_64").row->name, "RHEL 10.2");
  for (const char* other : {"5.14.0-570.58.1.el9_6.x86_64", "5.14.0-686.el9", "6.12.0-160000.37-default",
                            "6.12.0-1.23.3.2.el9uek.x86_64", "6.12.0-300.el10uek.x86_64", "6.12.0-211-generic",
                            "6.12.0", "6.12.0-rc3", "5.14.21-150500.55.83-default", "6.12.0-2110000000.el10"})
    EXPECT_EQ(match(other), KnownBadMatch::kNone) << other;
}

TEST(Policy, DistributionTableFindsTheSeedRows) {
  OsRelease ubuntu{"ubuntu", "debian", "24.04", "Ubuntu 24.04.4 LTS", "/etc/os-release"};
  ASSERT_TRUE(find_distro_kernel(ubuntu));
  EXPECT_TRUE(find_distro_kernel(ubuntu)->p2pdma);
  OsRelease debian{"debian", "", "12", "Debian GNU/Linux 12 (bookworm)", "/etc/os-release"};
  ASSERT_TRUE(find_distro_kernel(debian));
  EXPECT_FALSE(find_distro_kernel(debian)->p2pdma);
  OsRelease rocky{"rocky", "rhel", "9.8", "Rocky Linux 9.8", "/etc/os-release"};
  EXPECT_STREQ(find_distro_kernel(rocky)->target, "rhel-9.8");
}

}  // namespace
}  // namespace p2pcheck
