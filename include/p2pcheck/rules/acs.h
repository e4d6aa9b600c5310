// The kernel's boot-time ACS settings: what pci_enable_acs() leaves in each device's ACS Control,
// from the IOMMU's request (pci_request_acs()) and the command line's pci=disable_acs_redir= and
// pci=config_acs= lists. The checks (iommu.acs_changed), the host fix and the fixture test read it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/rules/tri.h"

namespace p2pcheck {

// The devices one of the command line's ACS options names: "0000:42:02.0" or "42:02.0" by address,
// "pci:vvvv:dddd" by vendor and device ID (pci_dev_str_match()).
struct AcsDeviceList {
  std::set<Bdf> addresses;
  std::set<std::pair<unsigned, unsigned>> ids;
  bool names(const Function& fn) const;
};
struct AcsOverrides {
  AcsDeviceList redirect_disabled, configured;
};
AcsOverrides parse_acs_overrides(std::string_view cmdline);

// What those options say about one device; config_acs= wins over disable_acs_redir= (it is applied
// after it, from the firmware's value).
enum class AcsOverride { kNone, kRedirectDisabled, kConfigured };
AcsOverride acs_override(const AcsOverrides& overrides, const Function& fn);

// pci=config_acs= came in 6.11 ("PCI: Extend ACS configurability"): absent from 6.1.192's pci.c,
// present in 6.12.118's. An older kernel ignores it.
inline constexpr KernelVersion kFirstConfigAcsRelease{6, 11, 0};

// The P2P Request and Completion Redirect bits (RR, CR) of ACS Control after pci_enable_acs()
// (6.1 drivers/pci/pci.c :1043 with pci_std_enable_acs() :1007 and pci_disable_acs_redir() :951;
// 6.12 :1097 with pci_std_enable_acs() :1074 and __pci_config_acs() :979).
//   ACS requested (an IOMMU driver called pci_request_acs()): ctrl |= cap & (SV|RR|CR|UF)
//   device in disable_acs_redir=:                              ctrl &= ~(RR|CR|EC)
//   device in config_acs= (6.11+):                             ctrl = (firmware & ~mask) | flags
// The firmware's own value is not in any input; these two bits do not depend on it where the kernel
// sets or clears them, and are not predicted where it leaves them (no request, config_acs=).
struct AcsAtBoot {
  bool predicted = false;                    // false: the bits are the firmware's or the admin's
  std::uint16_t redirect = 0;                // RR|CR as the kernel leaves them, when predicted
  AcsOverride applied = AcsOverride::kNone;  // the command-line option that applied
};
// `acs_requested` unknown predicts only what the command line clears; `version` nullopt: config_acs=
// may have applied. Devices with a pci_dev_specific_enable_acs() quirk are not modelled.
AcsAtBoot pci_enable_acs(const Function& fn, Tri acs_requested, const AcsOverrides& cmdline,
                         const std::optional<KernelVersion>& version);

}  // namespace p2pcheck
