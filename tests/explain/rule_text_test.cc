// The sentences for each structured reason, word for word as `check`, `explain` and the JSON print them.
#include "p2pcheck/explain/rule_text.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

Function function(const char* bdf, const std::string& config_note = "") {
  Function fn;
  fn.bdf = *Bdf::parse(bdf);
  fn.config_note = config_note;
  return fn;
}

const AllowlistEntry& row(std::uint16_t vendor, std::uint16_t device) {
  for (const AllowlistEntry& r : host_bridge_allowlist())
    if (r.vendor == vendor && r.device == device) return r;
  throw std::runtime_error("no such allowlist row");
}

BridgeCheck bridge(const char* id, std::optional<const char*> device, BridgeResult result) {
  BridgeCheck b;
  b.host_bridge = id;
  if (device) b.device = Bdf::parse(*device);
  b.vendor = 0x8086;
  b.device_id = 0x6f00;
  b.result = result;
  b.passes = tri(result == BridgeResult::kAllowlisted);
  return b;
}

class RuleText : public ::testing::Test {
 protected:
  Function gpu_ = function("0000:03:00.0");
  Function port_ = function("0000:02:01.0");
  Function switch_ = function("0000:01:00.0");
  PairDecision d_;
};

TEST_F(RuleText, CommonBridge) {
  d_.decided_by = DecidedBy::kCommonBridge;
  d_.map_type = MapType::kBusAddr;
  d_.walk.common = &switch_;
  EXPECT_EQ(rule_text(d_),
            "common upstream bridge 0000:01:00.0 and no ACS redirect on the path: traffic stays below it");
  d_.to_gpu = {Verdict::kSupported, FlowReason::kAllowed, Hardware::kAsTheKernelSays};
  EXPECT_EQ(flow_reason_text(d_, d_.to_gpu), "allowed inside the switch");
}

TEST_F(RuleText, AllowedThroughTheRootComplex) {
  d_.map_type = MapType::kThruHostBridge;
  d_.decided_by = DecidedBy::kCpuAllows;
  EXPECT_EQ(rule_text(d_),
            "through the root complex; allowed because the CPU is AMD Zen or newer (cpu_supports_p2pdma)");
  d_.decided_by = DecidedBy::kAllowlistAllows;
  EXPECT_EQ(rule_text(d_), "through the root complex; allowed because the host bridge is on the allowlist");
  Flow allowed{Verdict::kSupported, FlowReason::kAllowed, Hardware::kAsTheKernelSays};
  EXPECT_EQ(flow_reason_text(d_, allowed), "allowed through the root complex");
}

TEST_F(RuleText, AcsRedirectComesFirst) {
  d_.map_type = MapType::kThruHostBridge;
  d_.decided_by = DecidedBy::kCpuAllows;
  d_.walk.common = &switch_;
  d_.walk.acs_redirect = {&port_, &switch_};
  EXPECT_EQ(rule_text(d_),
            "ACS redirect on 0000:02:01.0, 0000:01:00.0 sends the traffic up through the root complex; "
            "through the root complex; allowed because the CPU is AMD Zen or newer (cpu_supports_p2pdma)");
  // check --json's shared rows speak of the pair's listed ports; the flows' reasons that repeat the
  // rule likewise.
  EXPECT_EQ(rule_text(d_, PortNames::kListed),
            "ACS redirect on the pair's listed ports sends the traffic up through the root complex; "
            "through the root complex; allowed because the CPU is AMD Zen or newer (cpu_supports_p2pdma)");
  Flow same{Verdict::kSupported, FlowReason::kSameAsRule};
  EXPECT_EQ(flow_reason_text(d_, same, PortNames::kListed), rule_text(d_, PortNames::kListed));
  EXPECT_EQ(flow_reason_text(d_, same), rule_text(d_));
}

TEST_F(RuleText, HostCheckRefusal) {
  d_.map_type = MapType::kNotSupported;
  d_.decided_by = DecidedBy::kHostCheckFails;
  d_.host.cpu_vendor = "GenuineIntel";
  d_.host.cpu_family = 6;
  d_.host.table_version = KernelVersion{6, 8, 0};
  d_.host.bridges = {bridge("0000:00", "0000:00:00.0", BridgeResult::kNotOnAllowlist)};
  EXPECT_EQ(rule_text(d_),
            "through the root complex, and GenuineIntel family 0x6 is not an AMD Zen or newer CPU; host bridge 0000:00 "
            "(8086:6f00 at 0000:00:00.0) is not on 6.8's P2PDMA allowlist");
  d_.host.table_version.reset();
  EXPECT_EQ(bridge_refusal_text(d_.host, d_.host.bridges[0]),
            "host bridge 0000:00 (8086:6f00 at 0000:00:00.0) is not on the P2PDMA allowlist");
  EXPECT_FALSE(refused_across_host_bridges(d_));
}

TEST_F(RuleText, RefusalAcrossHostBridgesNamesBoth) {
  d_.map_type = MapType::kNotSupported;
  d_.decided_by = DecidedBy::kHostCheckFails;
  d_.host.cpu_vendor = "GenuineIntel";
  d_.host.cpu_family = 6;
  d_.host.same_host_bridge = false;
  d_.host.bridges = {bridge("0000:00", "0000:00:00.0", BridgeResult::kOnlyWithinOneHostBridge),
                     bridge("0000:80", std::nullopt, BridgeResult::kNoHostBridgeDevice)};
  EXPECT_EQ(
      rule_text(d_),
      "through the root complex, and GenuineIntel family 0x6 is not an AMD Zen or newer CPU; host bridge 0000:00 "
      "(8086:6f00 at 0000:00:00.0) is allowlisted only for traffic within one host bridge (REQ_SAME_HOST_BRIDGE); "
      "host bridge 0000:80 (no 00.0 device or root port first on its bus)");
  EXPECT_TRUE(refused_across_host_bridges(d_));
}

TEST_F(RuleText, BridgeTexts) {
  EXPECT_EQ(bridge_text(bridge("0000:00", "0000:00:00.0", BridgeResult::kNotOnAllowlist)),
            "host bridge 0000:00 (8086:6f00 at 0000:00:00.0)");
  EXPECT_EQ(bridge_text(bridge("0000:99", std::nullopt, BridgeResult::kNotInTopology)),
            "host bridge 0000:99 (no 00.0 device or root port first on its bus)");
  BridgeCheck unknown = bridge("0000:40", std::nullopt, BridgeResult::kDeviceUnknown);
  unknown.device_unknown = true;
  EXPECT_EQ(bridge_text(unknown), "host bridge 0000:40 (device unknown: needs root)");
  HostCheck host;
  EXPECT_EQ(bridge_refusal_text(host, unknown), "host bridge 0000:40 (device unknown: needs root)");
}

TEST_F(RuleText, CannotDecideNamesTheFirstUnknownOrMissingFacts) {
  d_.decided_by = DecidedBy::kCannotDecide;
  d_.undecided_by = Unknown{UnknownFact::kCpu, nullptr, ""};
  EXPECT_EQ(rule_text(d_), "cannot decide: CPU vendor and family (no /proc/cpuinfo)");
  // A fact the input's format cannot carry says so, instead of "no /proc/cpuinfo".
  d_.undecided_by = Unknown{UnknownFact::kCpu, nullptr, "", "not in this lspci output"};
  EXPECT_EQ(rule_text(d_), "cannot decide: CPU vendor and family (not in this lspci output)");
  EXPECT_EQ(unknown_text(Unknown{UnknownFact::kP2pdmaConfig, nullptr, "", "not in this udev database"}),
            "CONFIG_PCI_P2PDMA (not in this udev database)");
  EXPECT_EQ(unknown_text(Unknown{UnknownFact::kP2pdmaConfig, nullptr, ""}),
            "CONFIG_PCI_P2PDMA (no kernel config found)");
  d_.undecided_by.reset();
  EXPECT_EQ(rule_text(d_), "cannot decide: missing facts");
  Flow unknown{Verdict::kUnknown, FlowReason::kSameAsRule, Hardware::kAsTheKernelSays};
  EXPECT_EQ(flow_reason_text(d_, unknown), "cannot decide: missing facts");
}

TEST_F(RuleText, EitherWay) {
  d_.decided_by = DecidedBy::kEitherWay;
  EXPECT_EQ(rule_text(d_),
            "allowed either way: BUS_ADDR if no ACS redirect, else through a host bridge that passes the host check");
}

TEST_F(RuleText, NoP2pdmaConfigHasNoAcsPrefix) {
  d_.decided_by = DecidedBy::kNoP2pdmaConfig;
  d_.map_type = MapType::kNotSupported;
  d_.no_p2pdma = NoP2pdma{P2pdmaBasis::kConfig, "/boot/config-6.1.0-53-amd64", "6.1.0-53-amd64", nullptr};
  d_.walk.common = &switch_;
  d_.walk.acs_redirect = {&port_};
  EXPECT_EQ(rule_text(d_),
            "kernel built without CONFIG_PCI_P2PDMA (/boot/config-6.1.0-53-amd64): every P2PDMA call is a stub");
}

TEST_F(RuleText, NoP2pdmaSaysWhetherTheReleaseOrTheTableDecided) {
  d_.decided_by = DecidedBy::kNoP2pdmaConfig;
  d_.no_p2pdma = NoP2pdma{P2pdmaBasis::kBeforeP2pdma, "", "3.10.0-1160.el7.x86_64", nullptr};
  EXPECT_EQ(
      rule_text(d_),
      "kernel 3.10.0-1160.el7.x86_64 is older than 4.20, the first kernel with P2PDMA: there is no P2P DMA at all");
  d_.no_p2pdma = NoP2pdma{P2pdmaBasis::kDistroTable, "", "4.18.0-553.el8_10.x86_64",
                          find_distro_kernel_by_release("4.18.0-553.el8_10.x86_64")};
  EXPECT_EQ(rule_text(d_),
            "kernel 4.18.0-553.el8_10.x86_64 is Rocky Linux 8.10's (rhel-8.10), whose default kernel hipFile's "
            "distribution table shows built without CONFIG_PCI_P2PDMA: every P2PDMA call is a stub");
}

TEST_F(RuleText, UnknownFacts) {
  Function unreadable = function("0000:02:02.0", "only 64 bytes of config space: needs root");
  EXPECT_EQ(unknown_text({UnknownFact::kAcsControl, &unreadable, ""}),
            "ACS control of 0000:02:02.0 (only 64 bytes of config space: needs root)");
  EXPECT_EQ(unknown_text({UnknownFact::kAcsControl, &port_, ""}), "ACS control of 0000:02:01.0 (not readable)");
  EXPECT_EQ(unknown_text({UnknownFact::kCpu, nullptr, ""}), "CPU vendor and family (no /proc/cpuinfo)");
  EXPECT_EQ(unknown_text({UnknownFact::kHostBridgeDevice, nullptr, "0000:40"}),
            "host bridge device of 0000:40 (first device's port type needs root)");
  EXPECT_EQ(unknown_text({UnknownFact::kP2pdmaConfig, nullptr, ""}), "CONFIG_PCI_P2PDMA (no kernel config found)");
  d_.unknowns = {{UnknownFact::kCpu, nullptr, ""}, {UnknownFact::kP2pdmaConfig, nullptr, ""}};
  EXPECT_EQ(unknown_texts(d_), (std::vector<std::string>{"CPU vendor and family (no /proc/cpuinfo)",
                                                         "CONFIG_PCI_P2PDMA (no kernel config found)"}));
}

TEST_F(RuleText, PerDirectionReasons) {
  Flow write{Verdict::kNotSupported, FlowReason::kPreZenWritePasses, Hardware::kPasses};
  Flow read{Verdict::kNotSupported, FlowReason::kPreZenReadDropped, Hardware::kDropped};
  EXPECT_EQ(
      flow_reason_text(d_, write),
      "the kernel refuses it; the pre-Zen AMD root complex would pass this P2P write (NVMe writing into the GPU BAR)");
  EXPECT_EQ(flow_reason_text(d_, read),
            "the kernel refuses it, and pre-Zen AMD root complexes drop P2P reads (NVMe reading the GPU BAR) anyway");
  EXPECT_STREQ(hardware_token(Hardware::kPasses), "passes");
  EXPECT_STREQ(hardware_token(Hardware::kDropped), "dropped");
  EXPECT_EQ(hardware_token(Hardware::kAsTheKernelSays), nullptr);
  d_.known_bad = find_known_bad_kernel("5.14.0-687.49.1.el9_8.x86_64");
  Flow bad{Verdict::kNotSupported, FlowReason::kKnownBadKernel, Hardware::kAsTheKernelSays};
  EXPECT_EQ(flow_reason_text(d_, bad), "RHEL 9.8 kernels can corrupt memory with P2PDMA: never use the fastpath here");
}

TEST_F(RuleText, LaterKernels) {
  EXPECT_EQ(later_text(d_), "");
  d_.later = &row(0x8086, 0x0b25);
  EXPECT_EQ(later_text(d_),
            "allowed from kernel 7.1 on (Intel DSA; stable-review mails for 7.1; also in 7.3.4's source)");
  d_.later = &row(0x10de, 0x2f95);
  EXPECT_EQ(later_text(d_),
            "allowed from kernel 7.3.4 on (NVIDIA host bridge; read in 7.3.4's source; earlier 7.3.y not read)");
  d_.later = &row(0x1d17, 0x1008);
  EXPECT_EQ(later_text(d_),
            "would be allowed once the pending allowlist row for Zhaoxin host bridge is merged (PCI maintainer tree "
            "after 7.3-rc1; in no release)");
}

}  // namespace
}  // namespace p2pcheck
