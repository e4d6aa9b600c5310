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
#include "p2pcheck/rules/acs.h"
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

}  // namespace p2pcheck
