// pci_enable_acs() and the command line it reads: the one model of the kernel's boot-time ACS.
#include "p2pcheck/rules/acs.h"

#include <cstdio>
#include <string>

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

bool AcsDeviceList::names(const Function& fn) const {
  return addresses.count(fn.bdf) || ids.count({fn.vendor, fn.device});
}

AcsOverrides parse_acs_overrides(std::string_view cmdline) {
  AcsOverrides overrides;
  for (const auto& [key, value] : parse_cmdline(cmdline)) {
    if (key != "pci") continue;
    // pci= takes comma-separated options; the device lists inside use ';'.
    for (const std::string& option : split(value, ',')) {
      bool disable = option.rfind("disable_acs_redir=", 0) == 0;
      bool config = option.rfind("config_acs=", 0) == 0;
      if (!disable && !config) continue;
      AcsDeviceList& list = config ? overrides.configured : overrides.redirect_disabled;
      for (std::string item : split(option.substr(option.find('=') + 1), ';')) {
        if (config) item = item.substr(item.find('@') == std::string::npos ? 0 : item.find('@') + 1);
        unsigned vendor = 0, device = 0;
        if (auto bdf = Bdf::parse(item))
          list.addresses.insert(*bdf);
        else if (std::sscanf(item.c_str(), "pci:%x:%x", &vendor, &device) == 2)
          list.ids.insert({vendor, device});
      }
    }
  }
  return overrides;
}

AcsOverride acs_override(const AcsOverrides& overrides, const Function& fn) {
  if (overrides.configured.names(fn)) return AcsOverride::kConfigured;
  if (overrides.redirect_disabled.names(fn)) return AcsOverride::kRedirectDisabled;
  return AcsOverride::kNone;
}

AcsAtBoot pci_enable_acs(const Function& fn, Tri acs_requested, const AcsOverrides& cmdline,
                         const std::optional<KernelVersion>& version) {
  AcsAtBoot boot;
  // pos = dev->acs_cap; if (!pos) return;
  if (fn.acs.presence != Presence::kPresent) return boot;
  bool config_acs_read = !version || !(*version < kFirstConfigAcsRelease);
  if (config_acs_read && cmdline.configured.names(fn)) {
    boot.applied = AcsOverride::kConfigured;  // the admin's flags over the firmware's value
    return boot;
  }
  if (cmdline.redirect_disabled.names(fn)) {
    boot.applied = AcsOverride::kRedirectDisabled;  // RR|CR|EC cleared whatever came before
    boot.predicted = true;
    return boot;
  }
  if (acs_requested != Tri::kYes) return boot;  // the firmware's bits stand (or may)
  boot.predicted = true;
  boot.redirect = fn.acs.capability & (kAcsRr | kAcsCr);
  return boot;
}

}  // namespace p2pcheck
