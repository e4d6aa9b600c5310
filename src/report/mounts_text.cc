// The text of `p2pcheck mounts`, and the block each --nvme path adds to check, explain and paths.
// Every name from the input (mount points, devices, dm names, backing files) goes through printable().
#include <algorithm>
#include <array>
#include <set>

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

// "loop0 (loop) → md0 (md) → nvme0n1p4, nvme1n1p1": the layers above the NVMe devices once each,
// top first (the first few of a deep stack, the rest counted), then the NVMe devices it reaches.
std::string stack_cell(const PathTarget& t) {
  constexpr std::size_t kLayersShown = 3;
  std::vector<std::string> above, bottoms;
  std::set<std::string> seen, seen_bottoms;
  for (const StorageStack& s : t.stacks) {
    for (std::size_t i = 0; i + 1 < s.layers.size(); ++i)
      if (seen.insert(s.layers[i].device).second)
        above.push_back(printable(s.layers[i].device) + " (" + to_string(s.layers[i].kind) + ")");
    if (!s.layers.empty() && seen_bottoms.insert(s.layers.back().device).second)
      bottoms.push_back(printable(s.layers.back().device));
  }
  if (above.size() > kLayersShown) {
    const std::size_t more = above.size() - kLayersShown;
    above.resize(kLayersShown);
    above.push_back("… " + std::to_string(more) + " more layer(s)");
  }
  above.push_back(join(bottoms, ", "));
  return join(above, " → ");
}

std::string nvme_cell(const PathTarget& t) {
  std::vector<std::string> names;
  for (const TargetController& c : t.controllers) names.push_back(c.name.empty() ? c.bdf.str() : printable(c.name));
  return names.empty() ? "none local" : join(names, " ");
}

std::string verdict_cell(const MountRow& row) {
  if (row.gpus.empty()) return "no GPU selected";
  if (!row.gpus_agree()) return "differs by GPU (below)";
  return answer_words(row.gpus.front().answer);
}

// A file system's first mounts shown, the rest (a container host's bind mounts) counted unless -v.
constexpr std::size_t kMountsShown = 3;

// Columns as wide as their widest cell up to a cap (a longer cell pushes its row's rest right).
struct Table {
  using Row = std::array<std::string, 6>;  // mount point, fs, stack, NVMe, GPUs, verdict; a note when [1] is ""
  std::vector<Row> rows;
  std::array<std::size_t, 5> width{11, 2, 5, 4, 4};  // the headers' own widths
  static constexpr std::array<std::size_t, 5> kMaxWidth{32, 8, 48, 14, 6};

  void add(Row cells) {
    for (std::size_t i = 0; i < width.size(); ++i)
      width[i] = std::max(width[i], std::min(report_detail::code_points(cells[i]), kMaxWidth[i]));
    rows.push_back(std::move(cells));
  }
  std::string line(const Row& cells) const {
    std::string out = "  ";
    for (std::size_t i = 0; i < width.size(); ++i) out += pad(cells[i], width[i] + 2);
    return out + cells[5] + "\n";
  }
  std::string text() const {
    std::string out = line({"MOUNT POINT", "FS", "STACK", "NVMe", "GPUs", "VERDICT"});
    for (const auto& r : rows) out += r[1].empty() ? r[0] + "\n" : line(r);
    return out;
  }
};

std::string table_text(const MountsView& view, bool verbose) {
  Table table;
  for (const MountRow& row : view.rows) {
    const PathTarget& t = *row.target;
    const std::string fs = printable(t.mount.fstype), stack = stack_cell(t), nvme = nvme_cell(t);
    const std::string gpus = std::to_string(row.gpus.size()), verdict = verdict_cell(row);
    table.add({printable(t.mountpoint), fs, stack, nvme, gpus, verdict});
    const std::size_t shown = verbose ? t.more_mounts.size() : std::min(t.more_mounts.size(), kMountsShown - 1);
    for (std::size_t i = 0; i < shown; ++i)
      table.add({printable(unescape_mount_path(t.more_mounts[i].mountpoint)), fs, stack, nvme, gpus, verdict});
    if (shown < t.more_mounts.size())
      table.rows.push_back({"  … and " + std::to_string(t.more_mounts.size() - shown) + " more mount(s) of " +
                                printable(unescape_mount_path(t.mount.device)) +
                                " (bind mounts: the same file system, the same answer; -v lists them)",
                            "", "", "", "", ""});
  }
  return table.text();
}

// Per GPU, only for the file systems whose GPUs do not all have the same answer.
std::string by_gpu_text(const CheckReport& report, const MountsView& view) {
  std::string out;
  for (const MountRow& row : view.rows)
    if (!row.gpus_agree()) {
      out += printable(row.target->mountpoint) + ": by GPU\n";
      for (const MountGpu& g : row.gpus) out += gpu_line(report, g);
    }
  if (!out.empty())
    out +=
        "Pair codes as in `p2pcheck check`: SW below a common switch, RC through the root complex, X/XA "
        "refused, ? unknown (check's legend has them all)\n";
  return out.empty() ? "" : out + "\n";
}

// What each stack makes of the fastpath, as check's storage.stack finding says it (its message
// names the file system's mount points); those that pass or only inform (vfat) with -v.
std::string stack_why_text(const MountsView& view, bool verbose) {
  std::string out;
  for (const MountRow& row : view.rows) {
    const PathTarget& t = *row.target;
    const Level level = t.stack_finding ? t.stack_finding->level : Level::kPass;
    if (!t.stack_finding || ((level == Level::kPass || level == Level::kInfo) && !verbose)) continue;
    std::vector<Finding> f{*t.stack_finding};
    make_printable(f);
    out += "  " + pad(to_string(f[0].level), 8) + f[0].message + "\n";
  }
  return out.empty() ? "" : "Why (storage.stack, as `p2pcheck check` reports it)\n" + out + "\n";
}

// Data mounts shown before the rest are counted (-v lists them): 100,000 mounts of absent disks
// must not make 100,000 lines.
constexpr std::size_t kOthersShown = 10;

std::size_t data_mounts(const MountsView& view) {
  return static_cast<std::size_t>(
      std::count_if(view.others.begin(), view.others.end(), [](const OtherMount& m) { return m.data; }));
}

// The mounts not on NVMe: those on a device, file or share listed, the kernel and memory file
// systems counted; only the count (in the header) when there is nothing else.
std::string others_text(const MountsView& view, bool verbose) {
  const std::size_t data = data_mounts(view);
  if (data == 0) return "";
  std::string out = "Not on NVMe: " + std::to_string(view.others.size()) + " mount(s)\n";
  std::size_t shown = 0;
  for (const OtherMount& m : view.others)
    if (m.data && (verbose || shown < kOthersShown)) {
      ++shown;
      out += "  " + pad(printable(m.mountpoint), 16) + pad(printable(m.fstype), 8) + printable(m.device) + "\n";
    }
  if (shown < data)
    out += "  and " + std::to_string(data - shown) + " more on a device, file or share (-v lists them)\n";
  if (const std::size_t virtual_fs = view.others.size() - data; virtual_fs > 0)
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

std::string mounts_result_line(const CheckReport& report, const MountsView& view, const TextStyle& style) {
  if (!view.unknown.empty())
    return "RESULT: UNKNOWN — which file systems sit on NVMe is unknown: " + printable(view.unknown) + "\n";
  return result_line(report, style);
}

std::string mounts_text(const CheckReport& report, const MountsView& view, const TextStyle& style, bool verbose) {
  std::string out = check_banner_text(report) + "\n" + mounts_result_line(report, view, style) + "\n";
  if (!view.unknown.empty()) return out + "mounts: unknown: " + printable(view.unknown) + "\n";
  out += "File systems on NVMe: " + std::to_string(view.on_nvme) + " of " + std::to_string(view.mounts) + " mount(s)";
  if (view.rows.size() != view.on_nvme) out += ", " + std::to_string(view.rows.size()) + " file system(s)";
  if (!view.others.empty() && data_mounts(view) == 0)
    out += "; the other " + std::to_string(view.others.size()) +
           " are kernel or memory file systems (proc, sysfs, tmpfs, ...; --json lists them)";
  out += "\n";
  if (!view.rows.empty())
    out += table_text(view, verbose) + "\n" + by_gpu_text(report, view) + stack_why_text(view, verbose);
  else
    out += "\n";
  out += others_text(view, verbose);
  while (out.size() > 1 && out.compare(out.size() - 2, 2, "\n\n") == 0) out.pop_back();
  return report_detail::fold_to_width(out, style.wrap);
}

}  // namespace p2pcheck
