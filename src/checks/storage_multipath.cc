// Native NVMe multipath, judged for hipFile: head nodes FAIL, the parameter that would make them a
// note (storage_internal.h).
#include "p2pcheck/checks/storage.h"
#include "p2pcheck/source/sysfs_text.h"
#include "storage_internal.h"

namespace p2pcheck::storage_detail {
namespace {

constexpr const char* kMultipathFix =
    "boot with nvme_core.multipath=N on the kernel command line (or `options nvme_core multipath=N` in "
    "/etc/modprobe.d/ and rebuild the initramfs when nvme_core is a module); cost: loses NVMe native multipathing for "
    "dual-ported drives (each path becomes its own block device, no automatic failover)";

// Every head in one finding: they share the cause (nvme_core multipath=Y) and the fix.
Finding multipath_heads_finding(const NvmeMultipath& mp) {
  Finding f;
  f.id = "storage.nvme_multipath";
  f.level = Level::kFail;
  f.evidence.push_back(mp.param_evidence);
  std::vector<std::string> heads, described;
  for (const auto& [head, paths] : mp.heads) {
    heads.push_back(head);
    auto sub = mp.head_subsystem.find(head);
    std::string subsys = sub == mp.head_subsystem.end() ? "" : sub->second;
    std::string ctrls;
    if (auto c = mp.subsystem_controllers.find(subsys); c != mp.subsystem_controllers.end())
      ctrls = join(c->second, ", ");
    described.push_back(head + (subsys.empty() ? "" : " of " + subsys) +
                        (paths.empty() ? "" : " over " + join(paths, ", ")) +
                        (ctrls.empty() ? "" : " (controllers " + ctrls + ")"));
    if (!subsys.empty())
      f.evidence.push_back({"/sys/class/nvme-subsystem/" + subsys, head + (ctrls.empty() ? "" : " " + ctrls)});
    for (const auto& p : paths) f.evidence.push_back({"/sys/class/nvme", p});
  }
  f.subject = join(heads, ", ");
  f.message = join(described, "; ") +
              (heads.size() == 1 ? " is a native NVMe multipath head node" : " are native NVMe multipath head nodes") +
              ": hipFile's fastpath does not support NVMe multipath devices (a head has no PCI parent)";
  f.fix = kMultipathFix;
  return f;
}

// No head node: what nvme_core's multipath parameter says about the drives to come.
Finding multipath_param_finding(const NvmeMultipath& mp) {
  Finding f;
  f.id = "storage.nvme_multipath";
  f.evidence.push_back(mp.param_evidence);
  switch (mp.param) {
    case NvmeMultipath::Param::kDisabled:
      f.level = Level::kPass;
      f.message = "native NVMe multipath is off (nvme_core multipath=N)";
      break;
    case NvmeMultipath::Param::kAbsent:
      f.level = Level::kPass;
      f.message = "the kernel has no native NVMe multipath (no nvme_core multipath parameter)";
      break;
    case NvmeMultipath::Param::kEnabled:
      f.level = Level::kInfo;
      f.message =
          "nvme_core multipath=Y, but no namespace sits behind a multipath head (single-controller subsystems get "
          "none): nothing to do now; a dual-ported drive would get one";
      f.fix = "only if a dual-ported drive is added: " + std::string(kMultipathFix);
      break;
    case NvmeMultipath::Param::kUnknown:
      f.level = Level::kUnknown;
      f.message = "whether native NVMe multipath is on is unknown; no multipath head node was seen";
      f.fix = "check /sys/module/nvme_core/parameters/multipath; hipFile needs N (or no head nodes)";
      if (!mp.not_carried.empty()) {
        f.not_carried = mp.not_carried;
        f.message = "whether native NVMe multipath is on is unknown: nvme_core's parameters are " + mp.not_carried;
        f.fix = kNotCarriedFix;
      }
      break;
  }
  return f;
}

}  // namespace

std::vector<Finding> multipath_findings(const StorageLayout& layout) {
  const NvmeMultipath& mp = layout.multipath;
  if (!mp.heads.empty()) return {multipath_heads_finding(mp)};
  if (layout.nvme_controllers == 0) return {};
  return {multipath_param_finding(mp)};
}

}  // namespace p2pcheck::storage_detail
