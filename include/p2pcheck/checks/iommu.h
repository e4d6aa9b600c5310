// The IOMMU and ACS redirect: with an IOMMU on, the kernel turns on ACS redirect at boot, which
// sends switch-local P2P up through the root complex.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "p2pcheck/model/finding.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/topology.h"
#include "p2pcheck/rules/pair_classes.h"
#include "p2pcheck/rules/verdict.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

struct IommuState {
  std::vector<std::string> units;  // entries of /sys/class/iommu
  // /sys/class/iommu itself, read only when it lists nothing: an import marks a fact its format does
  // not carry as a failed read there (sysfs_builder.h: unknown()), a real empty directory is not.
  FileRead units_dir;
  std::set<std::string> group_types;  // the readable /sys/kernel/iommu_groups/*/type values
  std::string type_file;              // the first of those files, cited as evidence
};

// Lists /sys/class/iommu and /sys/kernel/iommu_groups and reads each group's type.
IommuState read_iommu(Source& source);

// iommu.state (WARN when ACS redirect sends switch-local pairs through the root complex), and
// iommu.acs_changed when a device's ACS redirect differs from what the kernel sets at boot.
std::vector<Finding> check_iommu(const IommuState& iommu, const Machine& machine, const Topology& topo,
                                 const PairList& pairs);

// The devices the kernel command line's ACS options name (pci=disable_acs_redir=, pci=config_acs=):
// "0000:42:02.0" or "42:02.0" by address, "pci:vvvv:dddd" by vendor and device ID.
struct AcsDeviceList {
  std::set<Bdf> addresses;
  std::set<std::pair<unsigned, unsigned>> ids;
  bool names(const Function& fn) const;
};
struct AcsOverrides {
  AcsDeviceList redirect_disabled, configured;
};
AcsOverrides parse_acs_overrides(std::string_view cmdline);

// What those options say about one device; config_acs= wins over disable_acs_redir=.
enum class AcsOverride { kNone, kRedirectDisabled, kConfigured };
AcsOverride acs_override(const AcsOverrides& overrides, const Function& fn);

}  // namespace p2pcheck
