// The model behind `p2pcheck mounts`: each file system on NVMe with, per GPU, the check's pairs to
// its controllers and the stack's storage.stack finding folded into one answer.
#include "p2pcheck/report/mounts.h"

#include <algorithm>
#include <map>
#include <set>

namespace p2pcheck {
namespace {

// A device that names something holding data: a device or file ("/dev/sda1"), a share
// ("server:/export", "//server/share") or a dataset ("pool/fs"); "tmpfs", "proc", "overlay" do not.
bool names_data(const std::string& device) {
  return device.find('/') != std::string::npos || device.find(':') != std::string::npos;
}

// Refused first (no stack can help), then the stack, then what is unknown, then what only warns.
MountAnswer answer_for(const CheckReport& report, const std::vector<std::size_t>& pairs, const PathTarget& t) {
  bool refused = false, undecided = pairs.empty();
  for (std::size_t i : pairs) {
    Verdict v = report.pairs.shared(i).verdict;
    refused = refused || v == Verdict::kNotSupported;
    undecided = undecided || v == Verdict::kUnknown;
  }
  const Level stack = t.stack_finding ? t.stack_finding->level : Level::kPass;
  if (refused) return MountAnswer::kRefused;
  if (stack == Level::kFail) return MountAnswer::kStack;
  if (stack == Level::kInfo) return MountAnswer::kNotData;
  if (undecided || stack == Level::kUnknown) return MountAnswer::kUnknown;
  if (stack == Level::kWarn) return MountAnswer::kDepends;
  return MountAnswer::kP2p;
}

}  // namespace

const char* to_string(MountAnswer answer) {
  switch (answer) {
    case MountAnswer::kP2p: return "p2p";
    case MountAnswer::kStack: return "stack";
    case MountAnswer::kRefused: return "refused";
    case MountAnswer::kUnknown: return "unknown";
    case MountAnswer::kDepends: return "depends";
    case MountAnswer::kNotData: return "not_data";
  }
  return "unknown";
}

bool MountRow::gpus_agree() const {
  return std::all_of(gpus.begin(), gpus.end(), [&](const MountGpu& g) { return g.answer == gpus.front().answer; });
}

MountsView mounts_view(const CheckReport& report) {
  MountsView view;
  view.unknown = report.targets_unknown;
  view.mounts = report.machine.mounts.size();
  // Each GPU of the pairs once, in selection order, with its pairs by NVMe.
  std::vector<Bdf> gpus;
  std::map<std::pair<Bdf, Bdf>, std::size_t> pair_at;
  for (std::size_t i = 0; i < report.pairs.size(); ++i) {
    DevicePair p = report.pairs.pair(i);
    if (std::find(gpus.begin(), gpus.end(), p.gpu) == gpus.end()) gpus.push_back(p.gpu);
    pair_at.try_emplace({p.gpu, p.nvme}, i);
  }
  for (const PathTarget& t : report.targets) {
    MountRow row{&t, {}};
    for (const Bdf& gpu : gpus) {
      MountGpu g{gpu, {}, MountAnswer::kUnknown};
      for (const TargetController& c : t.controllers)
        if (auto it = pair_at.find({gpu, c.bdf}); it != pair_at.end()) g.pairs.push_back(it->second);
      g.answer = answer_for(report, g.pairs, t);
      row.gpus.push_back(std::move(g));
    }
    view.on_nvme += 1 + t.more_mounts.size();
    view.rows.push_back(std::move(row));
  }
  if (!view.unknown.empty()) return view;
  std::set<Mount> on_nvme;
  for (const MountRow& row : view.rows) {
    on_nvme.insert(row.target->mount);
    on_nvme.insert(row.target->more_mounts.begin(), row.target->more_mounts.end());
  }
  for (const Mount& m : report.machine.mounts) {
    if (on_nvme.count(m)) continue;
    std::string device = unescape_mount_path(m.device);
    view.others.push_back({unescape_mount_path(m.mountpoint), m.fstype, device, names_data(device)});
  }
  return view;
}

}  // namespace p2pcheck
