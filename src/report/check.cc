#include "p2pcheck/report/check.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "p2pcheck/checks/kernel.h"
#include "p2pcheck/checks/links.h"
#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/report/findings_text.h"
#include "p2pcheck/report/host_fix.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

using namespace report_detail;

namespace {

// One pair's short code in the matrix (as `nvidia-smi topo -m` does): what the pair can do and, for
// the ones it cannot, why. kMatrixCodes is the legend, in the order it is printed.
struct MatrixCode {
  const char* code;
  const char* meaning;
};
constexpr MatrixCode kMatrixCodes[] = {
    {"SW", "allowed both ways, below a common PCIe switch (BUS_ADDR)"},
    {"RC", "allowed both ways, through the root complex (THRU_HOST_BRIDGE)"},
    {"OK", "allowed both ways; below a switch or through the root complex is unknown (ACS not readable)"},
    {"SW?", "the path is allowed below a switch; the kernel itself (CONFIG_PCI_P2PDMA) is unknown"},
    {"RC?", "the path is allowed through the root complex; the kernel itself (CONFIG_PCI_P2PDMA) is unknown"},
    {"OK?", "the path is allowed (which way is unknown); the kernel itself (CONFIG_PCI_P2PDMA) is unknown"},
    {"?", "unknown: the path cannot be decided (see below)"},
    {"X", "refused: through the root complex, and neither the CPU nor the host bridge passes"},
    {"XA", "refused: ACS redirect sends it up through a root complex that refuses it (fix below)"},
    {"W", "refused by the kernel; pre-Zen AMD hardware would pass P2P writes (storage -> GPU), not reads"},
    {"BAD", "never use P2PDMA on this kernel (known to corrupt memory)"},
    {"OFF", "the kernel is built without CONFIG_PCI_P2PDMA"},
};

// `d` may be the pair's shared decision; `acs_redirected`: PairList::acs_redirected.
std::string cell(const PairDecision& d, bool acs_redirected, const KernelRules& rules) {
  if (rules.p2pdma_enabled == Tri::kNo) return "OFF";
  if (rules.known_bad) return "BAD";
  // Allowed either way (ACS unreadable, the host check passes): the map type itself is open.
  const char* way = d.path_map_type == MapType::kBusAddr          ? "SW"
                    : d.path_map_type == MapType::kThruHostBridge ? "RC"
                                                                  : "OK";
  if (d.verdict == Verdict::kSupported) return way;
  if (d.verdict == Verdict::kUnknown) return d.path_verdict == Verdict::kSupported ? std::string(way) + "?" : "?";
  if (d.to_gpu.hardware == Hardware::kPasses) return "W";
  return acs_redirected ? "XA" : "X";
}

const char* cell_color(const PairDecision& d) {
  return d.verdict == Verdict::kSupported ? "32" : d.verdict == Verdict::kUnknown ? "35" : "1;31";
}

}  // namespace

namespace {

bool has_nvidia_gpu(const CheckReport& r) {
  for (const Bdf& b : r.inv.gpus)
    if (const Function* fn = r.topo.find(b); fn && fn->vendor == kPciVendorNvidia) return true;
  return false;
}

// The banner: tool, kernel, OS, CPU, how many GPUs and NVMe, the source and the machine's names.
std::string banner_text(const CheckReport& r) {
  const Machine& m = r.machine;
  std::string kernel = r.rules.release.empty() ? "unknown" : r.rules.release;
  if (r.rules.origin == KernelOrigin::kSupplied) kernel += " (supplied)";
  if (r.rules.what_if())
    kernel += " (what-if; the machine runs " +
              (r.rules.input_release.empty() ? "an unknown kernel" : r.rules.input_release) + ")";
  std::string out = "p2pcheck " + std::string(kToolVersion) + " — kernel " + kernel;
  if (!m.os.pretty_name.empty()) out += " (" + printable(m.os.pretty_name) + ")";
  if (!m.cpu.model_name.empty()) out += ", " + printable(m.cpu.model_name) + (m.cpu.supplied ? " (supplied)" : "");
  out += ", " + std::to_string(r.inv.gpus.size()) + " GPU(s), " + std::to_string(r.inv.nvmes.size()) + " NVMe\n";
  out += "source: " + r.source + "\n";
  out += identity_line(m.identity);
  if (has_nvidia_gpu(r))
    out +=
        "scope: NVIDIA GPUs — the verdicts are the kernel's P2PDMA path, which GPUDirect Storage uses only in its "
        "P2PDMA mode (open kernel module >= 565, use_pci_p2pdma in cufile.json); GDS's nvidia-fs path is not judged "
        "here, and the storage rules are hipFile's\n";
  for (const SuppliedUse& use : r.supplied)
    if (!use.used) out += "note: " + use.option + " " + use.value + " not used: " + use.why_not_used + "\n";
  // Out of the pairs because of how they are bound: said where the counts are, not only under -v;
  // one line per reason (eight VFs bound to vfio-pci are one line).
  std::map<std::pair<bool, std::string>, std::vector<std::string>> unusable;
  for (const UnusableEndpoint& u : r.inv.unusable)
    if (!r.selected_devices.count(u.bdf))  // named with --gpu/--nvme, it is judged like any other
      unusable[{u.gpu, printable(u.why())}].push_back(u.bdf.str());  // the driver's name is the input's
  for (const auto& [kind, bdfs] : unusable) {
    std::string listed, what = kind.first ? "GPU" : "NVMe function";
    for (std::size_t i = 0; i < bdfs.size() && i < 6; ++i) listed += (i ? " " : "") + bdfs[i];
    if (bdfs.size() > 6) listed += " and " + std::to_string(bdfs.size() - 6) + " more";
    out += "left out: " +
           (bdfs.size() == 1 ? what + " " + listed : std::to_string(bdfs.size()) + " " + what + "s (" + listed + ")") +
           ", " + kind.second + "\n";
  }
  return out;
}

// The notes that limit the whole answer, under the RESULT line.
std::string limits_text(const CheckReport& r) {
  std::string out;
  if (r.topo.config_truncated)
    out +=
        std::string("note: only 64 bytes of config space were readable (not root): ACS and port types are unknown; ") +
        (r.machine.from_dump
             ? "ask for a capture taken as root (`sudo p2pcheck capture`) or `sudo lspci -xxxx` output\n"
             : "run as root\n");
  if (r.inv.gpus.empty() && !r.pairs.empty())
    out += "no AMD or NVIDIA GPU in " + r.source + "; the pairs below were named with --gpu\n";
  return out;
}

// The matrix is printed while it fits about a screenful; beyond that a summary by code says more.
constexpr std::size_t kMaxMatrixLines = 48;
constexpr std::size_t kGpuLabelWidth = 20;  // "GPU 0000:03:00.0" and a gap

// The matrix's rows and columns: the devices in the order their first pair comes.
struct MatrixDevices {
  std::vector<Bdf> gpus, nvmes;
};

// Seen by the list's device numbers (ends), not by address: one vector lookup per pair.
MatrixDevices devices_in_pair_order(const PairList& pairs) {
  MatrixDevices devices;
  std::vector<char> seen_gpu(pairs.ends()), seen_nvme(pairs.ends());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const DevicePair& pair = pairs.pair(i);
    if (char& seen = seen_gpu[pairs.gpu_end(i)]; !seen) {
      seen = 1;
      devices.gpus.push_back(pair.gpu);
    }
    if (char& seen = seen_nvme[pairs.nvme_end(i)]; !seen) {
      seen = 1;
      devices.nvmes.push_back(pair.nvme);
    }
  }
  return devices;
}

// Each pair's code, made once per class (and redirect): a fabric's pairs share a few dozen.
class MatrixCells {
 public:
  explicit MatrixCells(const CheckReport& r) : r_(r), code_of_(2 * r.pairs.classes()) {}
  std::size_t count() const { return code_of_.size(); }
  std::size_t index(std::size_t pair) const { return 2 * r_.pairs.class_index(pair) + r_.pairs.acs_redirected(pair); }
  const std::string& code(std::size_t pair) {
    std::string& c = code_of_[index(pair)];
    if (c.empty()) c = cell(r_.pairs.shared(pair), r_.pairs.acs_redirected(pair), r_.rules);
    return c;
  }

 private:
  const CheckReport& r_;
  std::vector<std::string> code_of_;
};

// code -> (how many pairs have it, the first of them).
using CodeCounts = std::map<std::string, std::pair<std::size_t, std::size_t>>;

// Counted per cell first, so the codes' map is touched once per class, not once per pair.
CodeCounts pairs_by_code(const CheckReport& r, MatrixCells& cells) {
  std::vector<std::size_t> count_of(cells.count()), first_of(cells.count());
  for (std::size_t i = 0; i < r.pairs.size(); ++i)
    if (count_of[cells.index(i)]++ == 0) first_of[cells.index(i)] = i;
  CodeCounts by_code;
  for (std::size_t c = 0; c < cells.count(); ++c) {
    if (count_of[c] == 0) continue;
    auto [at, added] = by_code.try_emplace(cells.code(first_of[c]), 0, first_of[c]);
    at->second.first += count_of[c];
    at->second.second = std::min(at->second.second, first_of[c]);
  }
  return by_code;
}

// A column's NVMe: its controller name, else the name the input gives it (a plan's), else its address.
std::string nvme_label(const CheckReport& r, const Bdf& nvme) {
  const NvmeController* c = r.inv.nvme_at(nvme);
  if (c && !c->name.empty()) return c->name;
  const Function* fn = r.topo.find(nvme);
  return fn && !fn->name.empty() ? printable(fn->name) : nvme.str();
}

// "nvme0 " or the input's name for it ("d4 "), else "": what goes before an NVMe's address.
std::string nvme_prefix(const CheckReport& r, const Bdf& nvme) {
  std::string prefix = nvme_name_prefix(r.inv, nvme);
  const Function* fn = r.topo.find(nvme);
  return !prefix.empty() || !fn ? prefix : name_prefix(*fn);
}

// A row's GPU: "GPU 0000:03:00.0", or the name the input gives it ("GPU gpu0 03:00.0").
std::string gpu_label(const CheckReport& r, const Bdf& gpu) {
  const Function* fn = r.topo.find(gpu);
  if (!fn || fn->name.empty()) return "GPU " + gpu.str();
  return printable(fn->name) + " " + gpu.short_str();
}

// Too big for a screen: one line per code with its pairs counted and the first as an example.
std::string matrix_summary_text(const CheckReport& r, const TextStyle& style, const MatrixDevices& devices,
                                const CodeCounts& by_code) {
  std::string out = "  " + std::to_string(devices.gpus.size()) + " GPU(s) x " + std::to_string(devices.nvmes.size()) +
                    " NVMe: " + std::to_string(r.pairs.size()) + " pairs, too many for a matrix in " +
                    std::to_string(style.width) + " columns; by verdict and cause:\n";
  for (const MatrixCode& c : kMatrixCodes) {
    auto it = by_code.find(c.code);
    if (it == by_code.end()) continue;
    std::size_t one = it->second.second;
    out += "  " + colored(style, cell_color(r.pairs.shared(one)), pad(c.code, 5)) +
           pad(std::to_string(it->second.first), 7) + c.meaning + " (e.g. GPU " + r.pairs.pair(one).gpu.str() +
           " <-> " + nvme_label(r, r.pairs.pair(one).nvme) + ")\n";
  }
  return out;
}

// The grid in blocks of `per_block` NVMe across, GPUs down, each cell `column` wide; a (GPU, NVMe)
// that is not a pair is a blank cell.
// `cell_of(i)`: pair i's colour and code (its verdict's, or its locality's).
using CellOf = std::function<std::pair<const char*, std::string>(std::size_t)>;
std::string matrix_grid_text(const CheckReport& r, const TextStyle& style, const MatrixDevices& devices,
                             const CellOf& cell_of, std::size_t column, std::size_t per_block) {
  // Each cell's decision by (GPU, NVMe), the first one where a pair repeats: one lookup per cell.
  std::map<std::pair<Bdf, Bdf>, std::size_t> by_pair;
  for (std::size_t i = 0; i < r.pairs.size(); ++i)
    by_pair.emplace(std::make_pair(r.pairs.pair(i).gpu, r.pairs.pair(i).nvme), i);
  const std::vector<Bdf>& nvmes = devices.nvmes;
  std::string out;
  for (size_t start = 0; start < nvmes.size(); start += per_block) {
    size_t end = std::min(nvmes.size(), start + per_block);
    std::string header = "  " + pad("", kGpuLabelWidth);
    for (size_t i = start; i < end; ++i) header += pad(nvme_label(r, nvmes[i]), column);
    while (!header.empty() && header.back() == ' ') header.pop_back();
    out += header + "\n";
    for (const Bdf& g : devices.gpus) {
      std::string line = "  " + pad(gpu_label(r, g), kGpuLabelWidth);
      for (size_t i = start; i < end; ++i) {
        auto found = by_pair.find({g, nvmes[i]});
        if (found == by_pair.end()) {
          line += pad("", column);
          continue;
        }
        auto [color, code] = cell_of(found->second);
        line += colored(style, color, pad(code, column));
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  return out;
}

// The pairs' locality (model/locality.h) in the verdicts' layout: a second matrix of codes, as
// `nvidia-smi topo -m` prints its own, and a legend naming nvidia-smi's word for each. Beside the
// verdicts: it changes none of them. `summary`: one line per code with its pairs counted instead.
std::string locality_matrix_text(const CheckReport& r, const TextStyle& style, const MatrixDevices& devices,
                                 std::size_t column, std::size_t per_block, bool summary) {
  std::vector<Locality> of(r.pairs.size());
  std::map<LocalityClass, std::pair<std::size_t, std::set<std::string>>> by_class;  // count, why
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    of[i] = pair_locality(r, i);
    auto& [count, why] = by_class[of[i].cls];
    ++count;
    if (!of[i].why.empty() && why.size() < 3) why.insert(printable(of[i].why));
  }
  std::string out = "\nLocality (how near each pair sits, as nvidia-smi topo -m says it; it changes no verdict)\n";
  if (!summary) {
    auto locality_cell = [&](std::size_t i) {
      return std::pair<const char*, std::string>(of[i].cls == LocalityClass::kUnknown ? "35" : "0",
                                                 locality_code(of[i].cls));
    };
    out += matrix_grid_text(r, style, devices, locality_cell, column, per_block);
  }
  for (const auto& [cls, seen] : by_class) {
    std::string meaning = locality_meaning(cls);
    if (!seen.second.empty())
      meaning += ": " + join(std::vector<std::string>(seen.second.begin(), seen.second.end()), "; ");
    out += "  " + pad(locality_code(cls), 5) + (summary ? pad(std::to_string(seen.first), 7) : "") + meaning + "\n";
  }
  return out;
}

// The NVMe columns in name order (nvme0 nvme1 nvme2), as a person looks them up; their addresses
// need not follow the names.
void sort_columns_by_name(const CheckReport& r, MatrixDevices& devices) {
  std::vector<std::pair<std::string, Bdf>> named;
  named.reserve(devices.nvmes.size());
  for (const Bdf& n : devices.nvmes) named.emplace_back(nvme_label(r, n), n);
  // Those with a name first; those known only by address after them, in address order.
  auto by_name = [](const auto& x, const auto& y) {
    const bool x_named = x.first != x.second.str(), y_named = y.first != y.second.str();
    if (x_named != y_named) return x_named;
    return x_named ? report_detail::natural_less(x.first, y.first) : x.second < y.second;
  };
  std::stable_sort(named.begin(), named.end(), by_name);
  for (std::size_t i = 0; i < named.size(); ++i) devices.nvmes[i] = named[i].second;
}

// GPUs down, NVMe across, as many NVMe per block as the width allows; each cell a short code
// (kMatrixCodes) whose legend follows. Too big for a screen: one line per code with its pairs counted.
std::string matrix_text(const CheckReport& r, const TextStyle& style) {
  if (r.pairs.empty()) return "";
  MatrixDevices devices = devices_in_pair_order(r.pairs);
  sort_columns_by_name(r, devices);
  MatrixCells cells(r);
  CodeCounts by_code = pairs_by_code(r, cells);
  size_t column = 4;
  for (const Bdf& n : devices.nvmes) column = std::max(column, nvme_label(r, n).size() + 2);
  size_t per_block =
      std::max<size_t>(1, (std::max(style.width, kGpuLabelWidth + 2 + column) - 2 - kGpuLabelWidth) / column);
  size_t blocks = (devices.nvmes.size() + per_block - 1) / per_block;
  std::string out = "\nPairs (storage -> GPU and GPU -> storage)\n";
  if (blocks * (devices.gpus.size() + 1) > kMaxMatrixLines)
    return out + matrix_summary_text(r, style, devices, by_code) +
           locality_matrix_text(r, style, devices, column, per_block, true);
  auto verdict_cell = [&](std::size_t i) {
    return std::pair<const char*, std::string>(cell_color(r.pairs.shared(i)), cells.code(i));
  };
  out += matrix_grid_text(r, style, devices, verdict_cell, column, per_block);
  for (const MatrixCode& c : kMatrixCodes)
    if (by_code.count(c.code)) out += "  " + pad(c.code, 5) + c.meaning + "\n";
  return out + locality_matrix_text(r, style, devices, column, per_block, false);
}

// What a problem pair's block says below its header line: why, directions, unknowns, the fix, the
// kernel's own answer. Pairs whose bodies are identical share one cause and print as one block.
std::string pair_body(const PairDecision& d, const PairExplanation& why) {
  std::string out = "  why   " + why.rule_text + "\n";
  if (d.to_gpu.hardware == Hardware::kPasses)
    out += "        storage -> GPU: " + flow_reason_text(d, d.to_gpu) +
           "\n        GPU -> storage: " + flow_reason_text(d, d.from_gpu) + "\n";
  for (const auto& u : unknown_texts(d)) out += "  unknown  " + u + "\n";
  // One fix per cause; a known-bad kernel's ("boot another kernel") is printed once above all pairs.
  if (!why.fix.empty() && !row(why.fix.kind).kernel_wide) out += "  fix   " + why.fix.text + "\n";
  if (std::string later = later_text(d); !later.empty()) out += "  later " + later + "\n";
  if (d.kernel)
    out += "  kernel says distance " + std::to_string(d.kernel->distance) +
           (d.kernel->map_type == MapType::kUnknown ? "" : std::string(", ") + to_string(d.kernel->map_type)) +
           (d.kernel_agrees == Tri::kYes ? " (agrees)" : " — DISAGREES with p2pcheck") + "\n";
  return out;
}

// An undecided pair whose missing facts the input cannot carry: what is missing and how to give it.
// The ACS registers along the path are named once, not port by port, so pairs on different paths
// that lack the same facts print as one cause.
std::string supply_facts_body(const PairDecision& d, const PairFix& fix) {
  std::vector<std::string> facts, acs_notes;
  for (const Unknown& u : d.unknowns) {
    if (u.fact != UnknownFact::kAcsControl) {
      facts.push_back(unknown_text(u));
      continue;
    }
    std::string note = u.function && !u.function->config_note.empty() ? u.function->config_note : "not readable";
    if (std::find(acs_notes.begin(), acs_notes.end(), note) == acs_notes.end()) acs_notes.push_back(note);
  }
  // The walk's ACS unknowns come first in a decision (rules/p2pcheck_rules.cc), so they lead here too.
  if (!acs_notes.empty()) facts.insert(facts.begin(), "ACS control along the path (" + join(acs_notes, "; ") + ")");
  return "  why   cannot decide: " + join(facts, "; ") + "\n  fix   " + fix.text + "\n";
}

// The two levels in a pair's heading: the overall verdict, then the PCI path under the kernel's rules.
std::string pair_status(const PairDecision& d, const TextStyle& style) {
  std::string path = d.path_map_type != MapType::kUnknown    ? to_string(d.path_map_type)
                     : d.path_verdict == Verdict::kSupported ? "allowed, way unknown"
                                                             : "unknown";
  return colored(style, d.verdict == Verdict::kUnknown ? "35" : "1;31",
                 d.verdict == Verdict::kUnknown ? "UNKNOWN" : "NOT SUPPORTED") +
         " (path " + path + ")";
}

// "GPU 0000:03:00.0 <-> nvme0, nvme1" per GPU, or "all 72" when the group is every pair.
std::string group_pairs_text(const CheckReport& r, const std::vector<std::size_t>& group) {
  if (group.size() == r.pairs.size()) return "  pairs all " + std::to_string(group.size()) + "\n";
  std::vector<std::pair<Bdf, std::vector<std::string>>> by_gpu;
  for (std::size_t i : group) {
    const Bdf gpu = r.pairs.pair(i).gpu;
    auto it = std::find_if(by_gpu.begin(), by_gpu.end(), [&](const auto& g) { return g.first == gpu; });
    if (it == by_gpu.end()) it = by_gpu.insert(by_gpu.end(), {gpu, {}});
    it->second.push_back(nvme_label(r, r.pairs.pair(i).nvme));
  }
  std::string out;
  for (const auto& [gpu, nvmes] : by_gpu)
    out += "  pairs GPU " + name_prefix(r.topo.at(gpu)) + gpu.str() + " <-> " + join(nvmes, ", ") + "\n";
  return out;
}

// The pairs that are not supported (or where the kernel disagrees): why, what is unknown, the fix;
// pairs with the same cause (the same block) once, with the pairs it covers.
// One line for what is unknown on the selected pairs' paths but changes no answer, instead of a
// line in each pair's block: the host bridge devices the CPU rule never asks for, ACS on paths
// allowed either way. "" when there is none.
std::string either_way_text(const CheckReport& r) {
  std::vector<bool> seen(r.pairs.classes(), false);
  std::set<std::string> host_bridges;
  std::size_t acs_pairs = 0;
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const PairDecision& d = r.pairs.shared(i);
    bool acs = false;
    for (const Unknown& u : d.moot) acs = acs || u.fact == UnknownFact::kAcsControl;
    acs_pairs += acs;
    std::uint32_t k = r.pairs.class_index(i);
    if (k < seen.size() && seen[k]) continue;
    if (k < seen.size()) seen[k] = true;
    for (const Unknown& u : d.moot)
      if (u.fact == UnknownFact::kHostBridgeDevice) host_bridges.insert(u.host_bridge);
  }
  std::vector<std::string> parts;
  if (!host_bridges.empty())
    parts.push_back("the host bridge device of " +
                    join(std::vector<std::string>(host_bridges.begin(), host_bridges.end()), ", ") +
                    " (the CPU rule allows the root complex before the kernel looks at it)");
  if (acs_pairs)
    parts.push_back("ACS control on the paths of " + std::to_string(acs_pairs) + (acs_pairs == 1 ? " pair" : " pairs") +
                    " (allowed either way; only the route is unknown)");
  if (parts.empty()) return "";
  return "\nAlso unknown, but no pair's answer depends on it: " + join(parts, "; ") + "\n";
}

std::string problem_pairs_text(const CheckReport& r, const TextStyle& style) {
  std::string out;
  if (r.rules.known_bad && !r.pairs.empty()) {
    out += "\nAll pairs: NOT SAFE on this kernel — " + std::string(r.rules.known_bad->name) +
           " kernels can corrupt memory with P2PDMA, whatever the path rules say (the kernel's own answers are in "
           "`p2pcheck explain`)\n  fix   " +
           row(FixKind::kOtherKernel).words + "\n";
  } else if (const KnownBadKernel* base = r.rules.known_bad_base.row; base && !r.pairs.empty()) {
    out += "\nAll pairs: safety UNKNOWN on this kernel — built on " + std::string(base->name) +
           "'s kernel base, whose kernels can corrupt memory with P2PDMA; whether this build carries the fix "
           "cannot be told from its name (kernel.known_bad)\n  fix   ask the kernel's vendor, or boot a kernel "
           "known to be good before using the fastpath\n";
  }
  struct Block {
    std::string status, body;
    std::vector<std::size_t> pairs;
  };
  std::vector<Block> blocks;                  // in the order of their first pair
  std::map<std::string, size_t> block_index;  // status + body -> its place in `blocks`
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const PairDecision& shared = r.pairs.shared(i);
    bool disagreement = r.pairs.kernel_agrees(i) == Tri::kNo;
    if (!disagreement &&
        (shared.verdict == Verdict::kSupported || (r.rules.known_bad && shared.map_type != MapType::kNotSupported)))
      continue;
    const PairDecision d = r.pairs[i];  // a problem pair: its route is named
    std::string status = pair_status(d, style);
    // Pairs that wait only on facts the input cannot carry share one cause, whatever their paths.
    const PairExplanation why = explain_pair(d, r.rules, r.machine);
    std::string body = why.fix.kind == FixKind::kSupplyFacts ? supply_facts_body(d, why.fix) : pair_body(d, why);
    auto [at, added] = block_index.try_emplace(status + '\n' + body, blocks.size());
    if (added) blocks.push_back({status, body, {}});
    blocks[at->second].pairs.push_back(i);
  }
  for (const Block& c : blocks) {
    const DevicePair& first = r.pairs.pair(c.pairs.front());
    std::string explain = first.gpu.str() + " " + first.nvme.str();
    if (c.pairs.size() == 1) {
      out += "\nGPU " + name_prefix(r.topo.at(first.gpu)) + first.gpu.str() + " <-> " + nvme_prefix(r, first.nvme) +
             first.nvme.str() + ": " + c.status + "\n" + c.body + "  see   p2pcheck explain " + explain + "\n";
      continue;
    }
    out += "\n" + std::to_string(c.pairs.size()) + " pairs: " + c.status + ", all for the same reason\n" +
           group_pairs_text(r, c.pairs) + c.body + "  see   p2pcheck explain " + explain + " (any of them)\n";
  }
  return out + either_way_text(r);
}

}  // namespace

Locality pair_locality(const CheckReport& r, std::size_t i) {
  const ChainMeet at = r.pairs.meet(i);
  return classify_locality(r.topo, r.pairs.gpu(i), r.pairs.nvme(i), r.pairs.common(i), at.a, at.b);
}

std::string pair_code(const CheckReport& r, std::size_t i) {
  return cell(r.pairs.shared(i), r.pairs.acs_redirected(i), r.rules);
}

std::string check_banner_text(const CheckReport& r) { return banner_text(r); }

std::string check_text(const CheckReport& r, const TextStyle& style, bool verbose, const std::string& input_notes) {
  std::string out = banner_text(r) + "\n" + result_line(r, style) + limits_text(r);
  if (!input_notes.empty())  // a block of its own: one blank line before it, the findings' own after
    out += "\n" + (input_notes.ends_with("\n\n") ? input_notes.substr(0, input_notes.size() - 1) : input_notes);
  out += findings_text(r, style, verbose) + matrix_text(r, style) + problem_pairs_text(r, style) +
         host_fix_text(host_fix(r));
  return fold_to_width(out, style.wrap);
}

}  // namespace p2pcheck
