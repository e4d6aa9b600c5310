// The text of `p2pcheck mounts`, and the block each --nvme path adds to check, explain and paths.
// Every name from the input (mount points, devices, dm names, backing files) goes through printable().
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/mounts.h"
#include "p2pcheck/source/printable.h"

namespace p2pcheck {
namespace {

using report_detail::pad;

std::string layer_words(const StorageLayer& l) {
  std::string kind = to_string(l.kind);
  return printable(l.device) + " (" + kind + (l.detail.empty() ? "" : ", " + printable(l.detail)) + ")";
}

// "xfs on /dev/md0": the file system and the device the mount table names.
std::string fs_words(const PathTarget& t) {
  return printable(t.mount.fstype) + " on " + printable(unescape_mount_path(t.mount.device));
}

// The stack top to bottom (one line per NVMe device below it), the controllers, and what the
// fastpath makes of it: the storage.stack finding, named by id so `check` finds the same words.
std::string target_body(const PathTarget& t) {
  std::string out;
  for (std::size_t i = 0; i < t.stacks.size(); ++i) {
    std::vector<std::string> layers;
    for (const StorageLayer& l : t.stacks[i].layers) layers.push_back(layer_words(l));
    out += std::string(i == 0 ? "  stack   " : "          ") + join(layers, " → ") + "\n";
  }
  std::vector<std::string> ctrls;
  for (const TargetController& c : t.controllers) ctrls.push_back(printable(c.name) + " " + c.bdf.str());
  out += "  NVMe    " + (ctrls.empty() ? std::string("none with a local PCIe function") : join(ctrls, ", ")) + "\n";
  for (const StorageLayer& l : t.stacked)
    out += "  note    hipFile/GDS will not go peer-to-peer through " + printable(l.device) + " (" + to_string(l.kind) +
           "): its I/O falls back to POSIX through host memory (storage.stack)\n";
  if (t.stack_finding) {
    std::vector<Finding> f{*t.stack_finding};
    make_printable(f);
    out += "  why     storage.stack " + std::string(to_string(f[0].level)) + ": " + f[0].message + "\n";
  }
  return out;
}

std::string answer_words(MountAnswer a) {
  switch (a) {
    case MountAnswer::kP2p: return "P2P";
    case MountAnswer::kStack: return "NO: the stack (hipFile falls back to POSIX I/O)";
    case MountAnswer::kRefused: return "NO: the kernel refuses the pair";
    case MountAnswer::kUnknown: return "UNKNOWN";
    case MountAnswer::kDepends: return "DEPENDS on the hipFile release (the stack warns)";
    case MountAnswer::kNotData: return "not a data file system for hipFile";
  }
  return "UNKNOWN";
}

std::string gpu_line(const CheckReport& report, const MountGpu& g) {
  std::vector<std::string> codes;
  for (std::size_t i : g.pairs) {
    const Bdf nvme = report.pairs.pair(i).nvme;
    codes.push_back(pair_code(report, i) + " " + printable(nvme_name_prefix(report.inv, nvme)) + nvme.str());
  }
  return "  GPU " + g.gpu.str() + "  " + answer_words(g.answer) + "; pairs: " + join(codes, ", ") + "\n";
}

std::string others_text(const MountsView& view) {
  if (view.others.empty()) return "";
  std::string out = "Not on NVMe: " + std::to_string(view.others.size()) + " mount(s)\n";
  std::size_t virtual_fs = 0;
  for (const OtherMount& m : view.others) {
    if (!m.data) {
      ++virtual_fs;
      continue;
    }
    out += "  " + pad(printable(m.mountpoint), 16) + pad(printable(m.fstype), 8) + printable(m.device) + "\n";
  }
  if (virtual_fs > 0)
    out += "  and " + std::to_string(virtual_fs) +
           " kernel or memory file system(s) (proc, sysfs, tmpfs, ...; --json lists every mount)\n";
  return out + "\n";
}

}  // namespace

std::string targets_text(const std::vector<PathTarget>& targets) {
  if (targets.empty()) return "";
  std::string out = "NVMe named by path\n";
  for (const PathTarget& t : targets) {
    out += "  " + printable(t.typed) + (t.path == t.typed ? "" : " (" + printable(t.path) + ")") + ": on " +
           printable(t.mountpoint) + ", " + fs_words(t) + "\n" + target_body(t);
    // A capture holds no file contents: only the mount table says where the path would be.
    if (!t.existence_checked && t.path != t.mountpoint)
      out += "    whether " + printable(t.path) +
             " exists is not in this input (it holds no file contents): judged "
             "by the file system that would hold it\n";
  }
  return out + "\n";
}

std::string mounts_text(const CheckReport& report, const MountsView& view, const TextStyle& style) {
  std::string out = check_banner_text(report) + "\n";
  if (!view.unknown.empty()) {
    out += "mounts: unknown: " + printable(view.unknown) + "\n\n";
    return out + "RESULT: UNKNOWN — which file systems sit on NVMe is unknown: " + printable(view.unknown) + "\n";
  }
  out += "File systems on NVMe: " + std::to_string(view.rows.size()) + " of " + std::to_string(view.mounts) +
         " mount(s)\n\n";
  for (const MountRow& row : view.rows) {
    const PathTarget& t = *row.target;
    out += printable(t.mountpoint) + "  " + fs_words(t) + "\n" + target_body(t);
    for (const MountGpu& g : row.gpus) out += gpu_line(report, g);
    out += "\n";
  }
  if (!view.rows.empty())
    out +=
        "Pair codes as in `p2pcheck check`: SW below a common switch, RC through the root complex, X/XA "
        "refused, ? unknown (check's legend has them all)\n\n";
  out += others_text(view);
  return report_detail::fold_to_width(out + result_line(report, style), style.wrap);
}

}  // namespace p2pcheck
