// pci_enable_acs(): the kernel's boot-time ACS bits, case by case from 6.1 and 6.12's pci.c, and the
// fixtures' registers (written by tools/mkfixture.py) checked against it.
#include "p2pcheck/rules/acs.h"

#include <filesystem>
#include <gtest/gtest.h>

#include "p2pcheck/checks/iommu.h"
#include "p2pcheck/model/topology.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

Function switch_port(std::uint16_t capability, std::uint16_t control) {
  Function fn;
  fn.bdf = *Bdf::parse("0000:42:02.0");
  fn.vendor = 0x10b5;
  fn.device = 0x8747;
  fn.acs.presence = Presence::kPresent;
  fn.acs.capability = capability;
  fn.acs.control = control;
  return fn;
}

constexpr KernelVersion k61{6, 1, 192}, k612{6, 12, 118};
constexpr std::uint16_t kAllBits = kAcsSv | kAcsTb | kAcsRr | kAcsCr | kAcsUf | kAcsEc | kAcsDt;

TEST(PciEnableAcs, AnIommuSetsRequestAndCompletionRedirectWhereTheCapabilityHasThem) {
  AcsOverrides none;
  AcsAtBoot boot = pci_enable_acs(switch_port(kAllBits, 0), Tri::kYes, none, k612);
  EXPECT_TRUE(boot.predicted);
  EXPECT_EQ(boot.redirect, kAcsRr | kAcsCr);  // pci_std_enable_acs(): ctrl |= cap & RR, cap & CR; EC never
  boot = pci_enable_acs(switch_port(kAcsSv | kAcsRr, 0), Tri::kYes, none, k61);
  EXPECT_EQ(boot.redirect, kAcsRr);
}

TEST(PciEnableAcs, WithoutTheRequestTheFirmwaresBitsStandAndAreNotPredicted) {
  AcsOverrides none;
  EXPECT_FALSE(pci_enable_acs(switch_port(kAllBits, kAcsRr), Tri::kNo, none, k612).predicted);
  EXPECT_FALSE(pci_enable_acs(switch_port(kAllBits, 0), Tri::kUnknown, none, k612).predicted);
}

TEST(PciEnableAcs, DisableAcsRedirClearsTheBitsWithOrWithoutAnIommu) {
  AcsOverrides cmdline = parse_acs_overrides("pci=disable_acs_redir=0000:42:02.0");
  for (Tri requested : {Tri::kYes, Tri::kNo, Tri::kUnknown}) {
    AcsAtBoot boot = pci_enable_acs(switch_port(kAllBits, kAllBits), requested, cmdline, k61);
    EXPECT_TRUE(boot.predicted);
    EXPECT_EQ(boot.redirect, 0);
    EXPECT_EQ(boot.applied, AcsOverride::kRedirectDisabled);
  }
}

TEST(PciEnableAcs, ConfigAcsIsTheAdminsFrom611AndUnknownToOlderKernels) {
  AcsOverrides cmdline = parse_acs_overrides("pci=config_acs=1101x@pci:10b5:8747 pci=disable_acs_redir=42:02.0");
  AcsAtBoot boot = pci_enable_acs(switch_port(kAllBits, 0), Tri::kYes, cmdline, k612);
  EXPECT_FALSE(boot.predicted);
  EXPECT_EQ(boot.applied, AcsOverride::kConfigured);
  // 6.1 has no config_acs= (its pci.c has no config_acs_param): disable_acs_redir= decides.
  boot = pci_enable_acs(switch_port(kAllBits, 0), Tri::kYes, cmdline, k61);
  EXPECT_TRUE(boot.predicted);
  EXPECT_EQ(boot.applied, AcsOverride::kRedirectDisabled);
  // An unknown release may have read it.
  EXPECT_FALSE(pci_enable_acs(switch_port(kAllBits, 0), Tri::kYes, cmdline, std::nullopt).predicted);
}

TEST(PciEnableAcs, ADeviceWithoutAcsIsLeftAlone) {
  Function fn = switch_port(0, 0);
  fn.acs.presence = Presence::kAbsent;
  EXPECT_FALSE(pci_enable_acs(fn, Tri::kYes, AcsOverrides{}, k612).predicted);
  fn.acs.presence = Presence::kUnknown;
  EXPECT_FALSE(pci_enable_acs(fn, Tri::kYes, AcsOverrides{}, k612).predicted);
}

// The fixture tool writes ACS Control as a booted kernel leaves it; this rule, not the tool's own copy
// of it, is the one the checker uses, so every predicted register must agree with it.
TEST(PciEnableAcs, EveryFixturesRegistersAreWhatTheRuleLeavesAtBoot) {
  int predicted = 0, fixtures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    if (!std::filesystem::exists(entry.path() / "root" / "sys")) continue;
    ++fixtures;
    auto source = open_tree_source((entry.path() / "root").string());
    PciDecoder decoder;
    Topology topo = read_topology(*source, decoder);
    Machine machine = read_machine(*source);
    Tri requested = tri(!read_iommu(*source).units.empty());
    AcsOverrides cmdline = parse_acs_overrides(machine.cmdline);
    for (const auto& [bdf, fn] : topo.functions) {
      AcsAtBoot boot = pci_enable_acs(fn, requested, cmdline, parse_kernel_version(machine.kernel_release));
      if (!boot.predicted) continue;
      ++predicted;
      EXPECT_EQ(fn.acs.control & (kAcsRr | kAcsCr), boot.redirect) << entry.path().filename() << " " << bdf.str();
    }
  }
  EXPECT_GE(fixtures, 4);
  EXPECT_GE(predicted, 10);
}

TEST(AcsOverride, ReadsBothCommandLineForms) {
  Function fn;
  fn.bdf = *Bdf::parse("0000:42:02.0");
  fn.vendor = 0x10b5;
  fn.device = 0x8747;
  auto acs_override_in = [&](std::string_view cmdline) { return acs_override(parse_acs_overrides(cmdline), fn); };
  EXPECT_EQ(acs_override_in("quiet"), AcsOverride::kNone);
  EXPECT_EQ(acs_override_in("pci=disable_acs_redir=0000:42:01.0;0000:42:02.0"), AcsOverride::kRedirectDisabled);
  EXPECT_EQ(acs_override_in("pci=noaer,disable_acs_redir=pci:10b5:8747"), AcsOverride::kRedirectDisabled);
  EXPECT_EQ(acs_override_in("pci=config_acs=1101x@0000:42:02.0"), AcsOverride::kConfigured);
  EXPECT_EQ(acs_override_in("pci=disable_acs_redir=0000:43:02.0"), AcsOverride::kNone);
  // config_acs= wins whichever comes first; a device named by ID matches by ID only.
  EXPECT_EQ(acs_override_in("pci=config_acs=1101x@42:02.0 pci=disable_acs_redir=42:02.0"), AcsOverride::kConfigured);
  EXPECT_EQ(acs_override_in("pci=disable_acs_redir=42:02.0 pci=config_acs=1101x@pci:10b5:8747"),
            AcsOverride::kConfigured);
  EXPECT_EQ(acs_override_in("pci=disable_acs_redir=pci:10b5:8748;zz:02.0;;"), AcsOverride::kNone);
  // Init's arguments are not the kernel's.
  EXPECT_EQ(acs_override_in("ro -- pci=disable_acs_redir=42:02.0"), AcsOverride::kNone);
}

}  // namespace
}  // namespace p2pcheck
