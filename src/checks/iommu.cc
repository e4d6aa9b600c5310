// IOMMU state and ACS redirect: a read step over /sys/class/iommu and the IOMMU groups, and a pure
// check over what it read, the command line and the ACS registers already in the topology.
#include "p2pcheck/checks/iommu.h"

#include <cstdio>
#include <unordered_set>

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// The IOMMU and ACS parameters of the kernel command line, as evidence.
struct IommuCmdline {
  std::string iommu;  // "intel_iommu=on iommu=pt"
  std::string acs;    // "pci=disable_acs_redir=..."
};

IommuCmdline iommu_cmdline(std::string_view cmdline) {
  IommuCmdline out;
  auto append = [](std::string& to, std::string_view key, std::string_view value) {
    if (!to.empty()) to += ' ';
    to.append(key).append("=").append(value);
  };
  for (const auto& [key, value] : parse_cmdline(cmdline)) {
    if (key == "intel_iommu" || key == "amd_iommu" || key == "iommu" || key == "iommu.passthrough")
      append(out.iommu, key, value);
    if (key == "pci" && (value.rfind("disable_acs_redir=", 0) == 0 || value.rfind("config_acs=", 0) == 0))
      append(out.acs, key, value);
  }
  return out;
}

Finding state_finding(const IommuState& iommu, const IommuCmdline& cmd) {
  Finding f{"iommu.state", Level::kInfo, "", "", {}, ""};
  const FileRead& dir = iommu.units_dir;
  if (dir.status == ReadStatus::kNotCarried) {
    f.not_carried = dir.error;
    f.message = "whether an IOMMU is on is " + dir.error + "; verdicts use the ACS registers as given";
    f.evidence.push_back({"/sys/class/iommu", dir.error});
  } else if (dir.status == ReadStatus::kFailed && dir.error != "is a directory") {
    // Unknown, not "no IOMMU"; the verdicts still stand on the ACS registers where config space was given.
    f.message = "whether an IOMMU is on is unknown (" + dir.error + "); verdicts use the ACS registers as given";
    f.evidence.push_back({"/sys/class/iommu", "unknown: " + dir.error});
  } else if (iommu.units.empty()) {
    f.message = "no IOMMU active (/sys/class/iommu is empty): the kernel did not request ACS redirect";
    f.evidence.push_back({"/sys/class/iommu", "(empty)"});
  } else {
    const std::set<std::string>& types = iommu.group_types;
    std::string mode = types.count("identity") && types.size() == 1 ? "passthrough"
                       : types.empty()                              ? "mode unknown"
                                                                    : "translated";
    f.message = "IOMMU on (" + mode + ", " + std::to_string(iommu.units.size()) + " unit(s))" +
                (cmd.iommu.empty() ? "" : ", " + cmd.iommu) +
                ": the kernel enables ACS redirect on every port that has ACS";
    f.evidence.push_back({"/sys/class/iommu", iommu.units.front() + (iommu.units.size() > 1 ? " ..." : "")});
    if (!iommu.type_file.empty()) f.evidence.push_back({iommu.type_file, *types.begin()});
  }
  if (!cmd.iommu.empty() || !cmd.acs.empty())
    f.evidence.push_back({"/proc/cmdline", cmd.iommu + (cmd.acs.empty() ? "" : " " + cmd.acs)});
  return f;
}

// Devices whose RR and CR differ from what pci_enable_acs() left at boot: changed since (setpci) or
// by a quirk. The kernel decides on the register as it is now, which is what the verdicts use.
std::vector<const Function*> acs_changed_after_boot(const Topology& topo, const AcsOverrides& overrides,
                                                    const std::optional<KernelVersion>& version) {
  std::vector<const Function*> differs;
  for (const auto& entry : topo.functions) {
    const Function& fn = entry.second;
    AcsAtBoot boot = pci_enable_acs(fn, Tri::kYes, overrides, version);
    if (boot.predicted && (fn.acs.control & (kAcsRr | kAcsCr)) != boot.redirect) differs.push_back(&fn);
  }
  return differs;
}

Finding acs_changed_finding(const std::vector<const Function*>& differs) {
  Finding d{"iommu.acs_changed", Level::kWarn, "", "", {}, ""};
  d.message = std::to_string(differs.size()) + " device(s) have ACS redirect " +
              "different from what the kernel sets at boot with an IOMMU (" + differs.front()->bdf.str() +
              (differs.size() > 1 ? ", ..." : "") +
              "): changed after boot, e.g. by setpci; verdicts use the current value";
  const Function& first = *differs.front();
  char ctl[32];
  std::snprintf(ctl, sizeof ctl, "ACS cap 0x%04x ctrl 0x%04x", first.acs.capability, first.acs.control);
  d.evidence.push_back({first.sysfs_path + "/config", ctl});
  d.fix = "reboot (or re-apply the same setting on every boot) so the verdict and the running state agree";
  return d;
}

// Which pairs ACS redirect pushes through the root complex: WARN on the state finding.
void add_redirected_pairs(Finding& f, const PairList& pairs) {
  std::unordered_set<const Function*> redirected_ports;  // one Function per BDF: counted by pointer
  int affected = 0;
  // A walk's redirect ports are its two sides' and the common bridge's: a pair whose sides both
  // came with earlier redirected pairs adds none.
  SidesSeen sides(pairs);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (!pairs.acs_redirected(i)) continue;
    ++affected;
    bool new_gpu_side = sides.first(pairs.gpu_end(i), pairs.common(i));
    if (!sides.first(pairs.nvme_end(i), pairs.common(i)) && !new_gpu_side) continue;
    PairWalk walk = pairs.walk(i);  // only for the redirected pairs: their ports
    redirected_ports.insert(walk.acs_redirect.begin(), walk.acs_redirect.end());
  }
  if (!affected) return;
  // The warning rests on the ACS registers the source showed, not on what it could not carry.
  f.level = Level::kWarn;
  f.not_carried.clear();
  f.message += "; ACS redirect on " + std::to_string(redirected_ports.size()) + " port(s) sends " +
               std::to_string(affected) + " switch-local pair(s) up through the root complex";
  f.fix =
      "only if those pairs fail: boot with the pair's pci=disable_acs_redir= list (see the pair details); it "
      "weakens IOMMU isolation for the devices below those ports (they may share an IOMMU group, and VFIO "
      "passthrough loses isolation)";
}

}  // namespace

IommuState read_iommu(Source& source) {
  IommuState iommu;
  iommu.units = source.list("/sys/class/iommu");
  for (const std::string& group : source.list("/sys/kernel/iommu_groups")) {
    std::string path = "/sys/kernel/iommu_groups/" + group + "/type";
    FileRead r = source.read(path);
    if (!r.ok()) continue;
    iommu.group_types.insert(std::string(trim(r.bytes)));
    if (iommu.type_file.empty()) iommu.type_file = path;
  }
  if (iommu.units.empty()) iommu.units_dir = source.read("/sys/class/iommu");
  return iommu;
}

std::vector<Finding> check_iommu(const IommuState& iommu, const Machine& m, const Topology& topo,
                                 const PairList& pairs) {
  Finding state = state_finding(iommu, iommu_cmdline(m.cmdline));
  if (!iommu.units.empty()) {
    // Parsed once, not per device: a dump's command line may be a megabyte.
    // The IOMMU's driver asked for ACS (pci_request_acs()) on the kernel that booted, the input's.
    std::vector<const Function*> differs =
        acs_changed_after_boot(topo, parse_acs_overrides(m.cmdline), parse_kernel_version(m.kernel_release));
    // The pairs' verdicts rest on the changed registers: that is the news, not the redirect count.
    if (!differs.empty()) return {state, acs_changed_finding(differs)};
  }
  add_redirected_pairs(state, pairs);
  return {state};
}

}  // namespace p2pcheck
