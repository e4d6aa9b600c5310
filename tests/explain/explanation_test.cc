// A decision of each class, made by decide_pair() on a small machine, gets its explanation: the
// rule, what blocks it, fleet's cause, the fix (kind, command line, devices, words) and ACS ports.
#include "p2pcheck/explain/explanation.h"

#include <tuple>

#include "p2pcheck/fleet/fleet.h"
#include "rules/verdict_machine.h"

namespace p2pcheck {
namespace {

using testing::ConfigSpace;
using testing::kNoAcs;

class Explain : public testing::Machine {
 protected:
  PairExplanation explain(const std::string& gpu, const std::string& nvme,
                          const std::string& kernel = "6.8.0-142-generic") {
    decision_ = decide(gpu, nvme, kernel);
    return explain_pair(decision_, kernel_rules_for(machine_, assume_), machine_);
  }
  std::vector<Bdf> bdfs(std::initializer_list<const char*> texts) {
    std::vector<Bdf> out;
    for (const char* t : texts) out.push_back(*Bdf::parse(t));
    return out;
  }
  PairDecision decision_;
};

TEST_F(Explain, BelowASwitchNothingToDo) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("GenuineIntel", 6);
  PairExplanation e = explain("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(e.rule, Rule::kCommonBridge);
  EXPECT_STREQ(token(e.rule), "common_bridge");
  EXPECT_EQ(e.rule_text, "common upstream bridge 0000:01:00.0 and no ACS redirect on the path: traffic stays below it");
  EXPECT_TRUE(e.blocked_by.empty());
  EXPECT_EQ(e.cause, Cause::kNone);
  EXPECT_TRUE(e.fix.empty());
  EXPECT_TRUE(e.acs_ports.empty());
  EXPECT_EQ(e.acs_cmdline(), "");
}

TEST_F(Explain, AcsRedirectRefusedGetsTheAcsListWithItsCost) {
  switch_machine(kNoAcs, kNoAcs, 0x001d, 0x0020);
  cpu("GenuineIntel", 6);
  PairExplanation e = explain("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(e.rule, Rule::kHostBridgeRefused);
  EXPECT_EQ(e.cause, Cause::kAcsRedirect);
  EXPECT_STREQ(token(e.cause), "pair.acs_redirect");
  EXPECT_EQ(e.fix.kind, FixKind::kDisableAcsRedir);
  EXPECT_STREQ(token(e.fix.kind), "disable_acs_redir");
  EXPECT_EQ(e.fix.devices, bdfs({"0000:02:01.0", "0000:02:02.0"}));
  EXPECT_EQ(e.fix.kernel_cmdline, "pci=disable_acs_redir=0000:02:01.0;0000:02:02.0");
  EXPECT_EQ(e.fix.text, "boot with pci=disable_acs_redir=0000:02:01.0;0000:02:02.0 — costs " + e.fix.cost());
  EXPECT_NE(e.fix.cost().find("IOMMU isolation"), std::string::npos);
  EXPECT_FALSE(e.fix.moves_the_pair());
  EXPECT_EQ(e.acs_ports, e.fix.devices);
  EXPECT_EQ(e.acs_cmdline(), e.fix.kernel_cmdline);
}

// check --json's shared rows: the same explanation, its words and fix naming no port; the ports stay data.
TEST_F(Explain, ListedPortsNameNoPort) {
  switch_machine(kNoAcs, kNoAcs, 0x001d, 0x0020);
  cpu("GenuineIntel", 6);
  PairExplanation named = explain("0000:03:00.0", "0000:04:00.0");
  PairExplanation listed = explain_pair(decision_, kernel_rules_for(machine_, assume_), machine_, PortNames::kListed);
  EXPECT_EQ(std::tie(listed.rule, listed.cause, listed.fix.kind), std::tie(named.rule, named.cause, named.fix.kind));
  EXPECT_EQ(listed.acs_ports, named.acs_ports);
  EXPECT_TRUE(listed.fix.devices.empty());
  EXPECT_TRUE(listed.fix.kernel_cmdline.empty());
  EXPECT_TRUE(listed.fix.acts_on_acs_ports());
  EXPECT_EQ(listed.fix.text,
            "boot with pci=disable_acs_redir= naming the pair's listed ports — costs " + named.fix.cost());
  EXPECT_EQ(listed.rule_text.rfind("ACS redirect on the pair's listed ports sends the traffic up", 0), 0u)
      << listed.rule_text;
  for (const Bdf& port : named.acs_ports) EXPECT_EQ(listed.rule_text.find(port.str()), std::string::npos);
  // Read back with the pair's ports (fleet's saved version 4), the rule is the model's.
  EXPECT_EQ(rule_naming_ports(listed.rule_text, named.acs_ports), named.rule_text);
  EXPECT_EQ(rule_naming_ports(listed.rule_text, {}), listed.rule_text);
  EXPECT_EQ(rule_naming_ports(named.rule_text, named.acs_ports), named.rule_text);  // no listed clause
}

TEST_F(Explain, AcsRedirectAllowedByTheCpuKeepsItsPortsButNeedsNoFix) {
  switch_machine(kNoAcs, 0x0008, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x19);
  PairExplanation e = explain("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(e.rule, Rule::kCpuAllows);
  EXPECT_EQ(e.cause, Cause::kNone);
  EXPECT_TRUE(e.fix.empty());
  EXPECT_EQ(e.acs_cmdline(), "pci=disable_acs_redir=0000:01:00.0");
}

TEST_F(Explain, RefusedAtTheHostBridgeMovesThePair) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x6f00);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairExplanation e = explain("0000:01:00.0", "0000:02:00.0");
  EXPECT_EQ(e.rule, Rule::kHostBridgeRefused);
  EXPECT_EQ(e.cause, Cause::kHostBridge);
  EXPECT_EQ(e.fix.kind, FixKind::kSameSwitch);
  EXPECT_EQ(e.fix.text, row(FixKind::kSameSwitch).words);
  EXPECT_EQ(e.fix.devices, bdfs({"0000:01:00.0", "0000:02:00.0"}));
  EXPECT_TRUE(e.fix.moves_the_pair());
  EXPECT_EQ(e.fix.kernel_cmdline, "");
}

TEST_F(Explain, RefusedAcrossTwoHostBridgesNamesBoth) {
  endpoint(port(host_bridge("0000:00", 0x8086, 0x2f00), "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(host_bridge("0000:80", 0x8086, 0x2f00), "0000:80:01.0", 4), "0000:81:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  PairExplanation e = explain("0000:01:00.0", "0000:81:00.0");
  EXPECT_EQ(e.cause, Cause::kHostBridge);
  EXPECT_EQ(e.fix.kind, FixKind::kSameHostBridge);
  EXPECT_NE(e.fix.text.find("0000:00 or 0000:80"), std::string::npos) << e.fix.text;
  EXPECT_TRUE(e.fix.moves_the_pair());
}

TEST_F(Explain, KernelWithoutP2pdmaBlocksAnAllowedPath) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x19);
  p2pdma_ = "n";
  PairExplanation e = explain("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(e.rule, Rule::kNoP2pdmaConfig);
  EXPECT_EQ(e.blocked_by, std::vector<Blocker>{Blocker::kKernelWithoutP2pdma});
  EXPECT_EQ(e.cause, Cause::kKernelConfigP2pdma);
  EXPECT_STREQ(token(e.cause), "kernel.config_p2pdma");
  EXPECT_EQ(e.fix.kind, FixKind::kKernelWithP2pdma);
  EXPECT_TRUE(row(e.fix.kind).kernel_wide);
}

TEST_F(Explain, KnownBadKernelBlocksAnAllowedPath) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x19);
  PairExplanation e = explain("0000:03:00.0", "0000:04:00.0", "5.14.0-687.49.1.el9_8.x86_64");
  EXPECT_EQ(e.rule, Rule::kCommonBridge);
  EXPECT_EQ(e.blocked_by, std::vector<Blocker>{Blocker::kKnownBadKernel});
  EXPECT_EQ(e.cause, Cause::kKernelKnownBad);
  EXPECT_EQ(e.fix.kind, FixKind::kOtherKernel);
  EXPECT_EQ(e.fix.text, row(FixKind::kOtherKernel).words);
}

TEST_F(Explain, UnknownKernelConfigLeavesAnAllowedPathUndecided) {
  switch_machine(kNoAcs, kNoAcs, kNoAcs, kNoAcs);
  cpu("AuthenticAMD", 0x19);
  p2pdma_ = "";
  PairExplanation e = explain("0000:03:00.0", "0000:04:00.0", "6.8.12-custom");
  EXPECT_EQ(e.rule, Rule::kCommonBridge);
  EXPECT_EQ(e.blocked_by, std::vector<Blocker>{Blocker::kP2pdmaConfigUnknown});
  EXPECT_EQ(e.cause, Cause::kKernelConfigP2pdma);
  EXPECT_EQ(e.fix.kind, FixKind::kKernelConfig);
}

TEST_F(Explain, UnreadableAcsAsksForTheFullConfigSpace) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x6f00);
  std::string up = port(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 5, kNoAcs, 0x10b5, 0x8747);
  sys_.add(up, "0000:02:02.0", 0x10b5, 0x8747, 0x060400, ConfigSpace(0x10b5, 0x8747, 0x060400, true).pcie(6).bytes(64));
  endpoint("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0", "0000:04:00.0", 0x010802);
  endpoint("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0", "0000:04:00.1", 0x010802);
  cpu("GenuineIntel", 6);
  PairExplanation e = explain("0000:04:00.0", "0000:04:00.1");
  EXPECT_EQ(e.rule, Rule::kUnknownAcs);
  EXPECT_STREQ(token(e.rule), "unknown_acs");
  EXPECT_EQ(e.cause, Cause::kAcsUnknown);
  EXPECT_EQ(e.fix.kind, FixKind::kFullConfigSpace);
  EXPECT_EQ(e.fix.devices, bdfs({"0000:02:02.0"}));
}

TEST_F(Explain, UnknownAcsAllowedEitherWay) {
  std::string hb = host_bridge("0000:00", 0x1022, 0x14a4);
  std::string up = port(port(hb, "0000:00:01.1", 4), "0000:01:00.0", 5, kNoAcs, 0x10b5, 0x8747);
  sys_.add(up, "0000:02:01.0", 0x10b5, 0x8747, 0x060400, ConfigSpace(0x10b5, 0x8747, 0x060400, true).pcie(6).bytes(64));
  endpoint("sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:01.0", "0000:03:00.0", 0x120000);
  endpoint(port(up, "0000:02:02.0", 6, kNoAcs, 0x10b5, 0x8747), "0000:04:00.0", 0x010802);
  cpu("AuthenticAMD", 0x19);
  PairExplanation e = explain("0000:03:00.0", "0000:04:00.0");
  EXPECT_EQ(e.rule, Rule::kEitherWay);
  EXPECT_EQ(e.cause, Cause::kNone);
  EXPECT_TRUE(e.fix.empty());
}

// Fleet groups hosts by the explanation's cause: two machines refused at the host bridge are one
// group, named and fixed from the cause's row; a pair with another cause is another group.
TEST_F(Explain, FleetGroupsHostsWithTheSameCause) {
  std::string hb = host_bridge("0000:00", 0x8086, 0x6f00);
  endpoint(port(hb, "0000:00:01.0", 4), "0000:01:00.0", 0x030000);
  endpoint(port(hb, "0000:00:02.0", 4), "0000:02:00.0", 0x010802);
  cpu("GenuineIntel", 6);
  auto host = [&](const char* name, Cause cause) {
    HostSummary h;
    h.host = name;
    h.result = Result::kFail;
    HostPair p;
    p.verdict = Verdict::kNotSupported;
    p.cause = cause;
    h.pairs = {p, p};
    return h;
  };
  const Cause refused = explain("0000:01:00.0", "0000:02:00.0").cause;
  ASSERT_EQ(refused, Cause::kHostBridge);
  FleetReport r = build_fleet_report({host("a", refused), host("b", refused), host("c", Cause::kNotSupported)}, {}, 3);
  ASSERT_EQ(r.failures.size(), 2u);
  const CauseGroup& g = r.failures[0];
  EXPECT_EQ(g.pair_cause, Cause::kHostBridge);
  EXPECT_EQ(g.cause, "pair.host_bridge");
  EXPECT_EQ(g.hosts.size(), 2u);
  EXPECT_EQ(g.pairs, 4u);
  EXPECT_EQ(g.title, row(Cause::kHostBridge).title);
  EXPECT_EQ(g.fix, row(FixKind::kSameSwitch).words);
  EXPECT_TRUE(g.pairs_only());
  EXPECT_EQ(r.failures[1].pair_cause, Cause::kNotSupported);
  EXPECT_EQ(r.failures[1].hosts.size(), 1u);
}

// The cause of a saved report's pair comes from the same body as the model's.
TEST(PairCause, FromFacts) {
  const Verdict no = Verdict::kNotSupported, open = Verdict::kUnknown, yes = Verdict::kSupported;
  EXPECT_EQ(pair_cause({yes, yes, {}, false, false, false}), Cause::kNone);
  EXPECT_EQ(pair_cause({no, yes, {Blocker::kKernelWithoutP2pdma}, true, false, true}), Cause::kKernelConfigP2pdma);
  EXPECT_EQ(pair_cause({no, open, {Blocker::kKnownBadKernel}, false, false, false}), Cause::kKernelKnownBad);
  // A refused path is the path's cause whatever else blocks it.
  EXPECT_EQ(pair_cause({no, no, {Blocker::kKernelWithoutP2pdma}, true, false, true}), Cause::kAcsRedirect);
  EXPECT_EQ(pair_cause({no, no, {}, false, false, true}), Cause::kHostBridge);
  EXPECT_EQ(pair_cause({no, no, {}, false, false, false}), Cause::kNotSupported);
  EXPECT_EQ(pair_cause({open, yes, {Blocker::kP2pdmaConfigUnknown}, false, true, false}), Cause::kKernelConfigP2pdma);
  // An undecided path is not blocked by the kernel's config: its own unknown is the cause.
  EXPECT_EQ(pair_cause({open, open, {Blocker::kP2pdmaConfigUnknown}, false, true, false}), Cause::kAcsUnknown);
  EXPECT_EQ(pair_cause({open, open, {}, false, false, true}), Cause::kPathUnknown);
}

TEST(DisableAcsRedirParam, AddressesThenIds) {
  EXPECT_EQ(disable_acs_redir_param({*Bdf::parse("0000:03:11.0"), *Bdf::parse("0000:03:09.0")}, {{0x10b5, 0x8747}}),
            "pci=disable_acs_redir=0000:03:11.0;0000:03:09.0;pci:10b5:8747");
}

}  // namespace
}  // namespace p2pcheck
