#include "p2pcheck/report/check.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "p2pcheck/checks/kernel.h"
#include "p2pcheck/checks/links.h"
#include "p2pcheck/report/host_fix.h"
#include "p2pcheck/report/pair_fix.h"
#include "p2pcheck/report/rule_text.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

using namespace report_detail;

namespace {

// `concerns`: whether it bears on the result (machine-wide, or about a device of a selected pair).
// Members set one by one: an initializer list builds each member as a two-element array first,
// and a fabric's report has a finding per device (20 M of 404 M instructions at 1,252 functions).
json finding_json(const Finding& f, bool concerns) {
  json ev = json::array();
  for (const auto& e : f.evidence) {
    json item = object_for(2);
    item["file"] = e.file;
    item["value"] = e.value;
    ev.push_back(std::move(item));
  }
  json devices = json::array();
  for (const Bdf& b : f.devices) devices.push_back(b.str());
  json j = object_for(9);
  j["id"] = f.id;
  j["level"] = to_string(f.level);
  j["subject"] = f.subject;
  j["devices"] = std::move(devices);
  j["concerns_selected_pairs"] = concerns;
  j["message"] = f.message;
  j["evidence"] = std::move(ev);
  j["fix"] = f.fix.empty() ? json(nullptr) : json(f.fix);
  j["state"] = to_string(f.state);
  return j;
}

json fix_json(const PairFix& fix) {
  if (fix.empty()) return nullptr;
  json devices = json::array();
  for (const Bdf& b : fix.devices) devices.push_back(b.str());
  json j = object_for(4);
  j["kind"] = fix.kind;
  j["kernel_cmdline"] = fix.kernel_cmdline.empty() ? json(nullptr) : json(fix.kernel_cmdline);
  j["devices"] = std::move(devices);
  j["text"] = fix.text;
  return j;
}

json flow_json(const PairDecision& d, const Flow& f) {
  json j = object_for(3);
  j["verdict"] = to_string(f.verdict);
  j["reason"] = flow_reason_text(d, f);
  const char* hardware = hardware_token(f.hardware);
  j["hardware"] = hardware ? json(hardware) : json(nullptr);
  return j;
}

const char* level_color(Level l) {
  switch (l) {
    case Level::kPass: return "32";
    case Level::kInfo: return "0";
    case Level::kWarn: return "33";
    case Level::kFail: return "1;31";
    case Level::kUnknown: return "35";
  }
  return "0";
}

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

// Why the overall verdict is not the path's: stable tokens (docs/json.md).
json blocked_by_json(const PairDecision& d) {
  json out = json::array();
  if (d.decided_by == DecidedBy::kNoP2pdmaConfig) out.push_back("kernel_without_p2pdma");
  if (d.known_bad) out.push_back("known_bad_kernel");
  for (const auto& u : d.unknowns)
    if (u.fact == UnknownFact::kP2pdmaConfig) out.push_back("p2pdma_config_unknown");
  return out;
}

}  // namespace

json decision_json(const CheckReport& r, const PairDecision& d) {
  return decision_json(r.topo, d, r.inv, pair_fix(d, r.rules, r.machine));
}

json decision_json(const Topology& topo, const PairDecision& d, const Inventory& inv, const PairFix& fix) {
  // Built member by member in place: about 7 KB per pair, most of it hops, copied three times before.
  json out = object_for(21);
  out["gpu"] = d.path.pair.gpu.str();
  out["nvme"] = d.path.pair.nvme.str();
  out["nvme_name"] = nvme_name_json(d.path, inv);
  out["common_bridge"] = common_bridge_json(d.path);
  out["distance"] = d.distance ? json(*d.distance) : json(nullptr);
  out["path_distance"] = d.walk.distance;
  out["map_type"] = to_string(d.map_type);
  out["verdict"] = to_string(d.verdict);
  // The two levels: the PCI path under the kernel's rules, and what else stops the overall verdict.
  json path = object_for(2);
  path["map_type"] = to_string(d.path_map_type);
  path["verdict"] = to_string(d.path_verdict);
  out["path"] = std::move(path);
  out["blocked_by"] = blocked_by_json(d);
  out["rule"] = rule_text(d);
  out["rule_id"] = rule_id(d);
  out["fix"] = fix_json(fix);
  out["unknowns"] = unknown_texts(d);
  if (!d.moot.empty()) out["unknown_either_way"] = moot_texts(d);  // only where there is any
  // verify's names, the same across commands: to_device = storage -> GPU (a P2P write), to_storage =
  // GPU -> storage (a P2P read). to_gpu/from_gpu are the same, kept for schema_version 1 readers.
  json flows = object_for(4);
  flows["to_device"] = flow_json(d, d.to_gpu);
  flows["to_storage"] = flow_json(d, d.from_gpu);
  flows["to_gpu"] = flows["to_device"];
  flows["from_gpu"] = flows["to_storage"];
  out["flows"] = std::move(flows);
  std::string acs_fix = acs_fix_text(d);
  std::string later = later_text(d);
  out["acs_fix"] = acs_fix.empty() ? json(nullptr) : json(acs_fix);
  out["later"] = later.empty() ? json(nullptr) : json(later);
  if (d.host_checked) {
    json bridges = json::array();
    for (const auto& b : d.host.bridges) {
      bridges.push_back({{"host_bridge", b.host_bridge},
                         {"device", b.device ? json(b.device->str()) : json(nullptr)},
                         {"device_unknown", b.device_unknown},
                         {"ids", b.device ? json(b.ids()) : json(nullptr)},
                         {"allowlist_entry", b.entry ? json(b.entry->name) : json(nullptr)},
                         {"passes", tri_json(b.passes)}});
    }
    out["host_check"] = {{"cpu_supports_p2pdma", tri_json(d.host.cpu_supports)},
                         {"same_host_bridge", d.host.same_host_bridge},
                         {"bridges", std::move(bridges)},
                         {"allowlisted", tri_json(d.host.allowlisted)},
                         {"allowed", tri_json(d.host.allowed)}};
  } else {
    out["host_check"] = nullptr;
  }
  out["hops"] = hops_json(topo, inv, d.path);
  out["acs_redirect"] = bdfs_json(d.walk.acs_redirect);
  out["acs_unknown"] = bdfs_json(d.walk.acs_unknown);
  std::optional<double> ceiling = path_ceiling(d.path);
  out["bandwidth_ceiling_bytes_per_s"] = ceiling ? json(static_cast<std::uint64_t>(*ceiling)) : json(nullptr);
  if (d.kernel) {
    out["kernel"] = {
        {"distance", d.kernel->distance},
        {"map_type", d.kernel->map_type == MapType::kUnknown ? json(nullptr) : json(to_string(d.kernel->map_type))},
        {"map_note", d.kernel->map_note.empty() ? json(nullptr) : json(d.kernel->map_note)},
        {"agrees", d.kernel_agrees == Tri::kYes}};
  } else {
    out["kernel"] = nullptr;
  }
  return out;
}

json counts_json(const ResultCounts& c) {
  json j = object_for(5);
  j["pairs"] = c.pairs;
  j["allowed"] = c.allowed;
  j["refused"] = c.refused;
  j["undecided"] = c.undecided;
  j["checks"] = {{"failing", c.failing}, {"unknown", c.unknown}, {"warn", c.warnings}};
  return j;
}

json check_json(const CheckReport& r, bool with_pairs) {
  json findings = json::array();
  for (const auto& f : r.findings) findings.push_back(finding_json(f, concerns_selected_pairs(f, r)));
  json pairs = json::array();
  if (with_pairs)
    for (const auto& d : r.pairs) pairs.push_back(decision_json(r, d));
  json gpus = json::array();
  for (const Bdf& g : r.inv.gpus) gpus.push_back(g.str());
  json nvmes = json::array();
  for (const auto& c : r.inv.nvmes)
    nvmes.push_back({{"bdf", c.bdf.str()}, {"name", c.name.empty() ? json(nullptr) : json(c.name)}});
  json j = json_envelope("p2pcheck.check", r.source);
  j["result"] = to_string(r.result);
  j["counts"] = counts_json(r.counts);
  json fail_on = json::array();
  for (const std::string& word : fail_policy_words(r.fail_on)) fail_on.push_back(word);
  j["fail_on"] = std::move(fail_on);
  json supplied = json::array();
  for (const SuppliedUse& use : r.supplied)
    supplied.push_back({{"option", use.option},
                        {"value", use.value},
                        {"used", use.used},
                        {"why_not_used", use.used ? json(nullptr) : json(use.why_not_used)}});
  j["supplied"] = std::move(supplied);
  j["kernel"] = {
      {"release", r.rules.release},
      {"origin", to_string(r.rules.origin)},
      {"assumed", r.rules.what_if()},
      {"what_if",
       r.rules.what_if()
           ? json({{"release", r.rules.release},
                   {"input_release", r.rules.input_release.empty() ? json(nullptr) : json(r.rules.input_release)},
                   {"input_known_bad", r.rules.input_known_bad ? json(r.rules.input_known_bad->name) : json(nullptr)}})
           : json(nullptr)},
      {"vendor_kernel", r.rules.vendor_kernel},
      {"table", allowlist_table_note(r.rules)},
      {"p2pdma_config", tri_json(r.rules.p2pdma_enabled)},
      {"p2pdma_basis", to_string(r.rules.p2pdma_basis)},
      {"distro_row", r.rules.distro ? json(r.rules.distro->target) : json(nullptr)},
      {"known_bad", r.rules.known_bad ? json(r.rules.known_bad->name) : json(nullptr)}};
  j["cpu"] = {{"vendor", r.machine.cpu.vendor_id},
              {"family", r.machine.cpu.family},
              {"model", r.machine.cpu.model},
              {"model_name", r.machine.cpu.model_name},
              {"hypervisor", r.machine.cpu.hypervisor},
              {"architecture", r.machine.cpu.architecture.empty() ? json(nullptr) : json(r.machine.cpu.architecture)}};
  j["identity"] = identity_json(r.machine.identity);
  // Whose GPU-direct stack the verdicts speak for: hipFile (AMD), GDS in P2PDMA mode (NVIDIA).
  json stacks = json::array();
  for (const Bdf& b : r.inv.gpus)
    if (const Function* fn = r.topo.find(b)) {
      const char* stack = fn->vendor == kPciVendorAmd      ? "hipfile"
                          : fn->vendor == kPciVendorNvidia ? "gds_p2pdma"
                                                           : nullptr;
      if (stack && std::find(stacks.begin(), stacks.end(), stack) == stacks.end()) stacks.push_back(stack);
    }
  j["gpu_stacks"] = std::move(stacks);
  j["config_space_complete"] = !r.topo.config_truncated;
  j["gpus"] = std::move(gpus);
  j["nvme"] = std::move(nvmes);
  j["findings"] = std::move(findings);
  j["host_fix"] = host_fix_json(host_fix(r));
  j["pairs"] = std::move(pairs);
  return j;
}

json explain_json(const CheckReport& r, const PairDecision& d) {
  json j = json_envelope("p2pcheck.explain", r.source);
  j["identity"] = identity_json(r.machine.identity);
  json pair = decision_json(r, d);  // a named object: items() of a temporary would dangle
  for (auto& [key, value] : pair.items()) j[key] = std::move(value);
  return j;
}

namespace {

bool has_nvidia_gpu(const CheckReport& r) {
  for (const Bdf& b : r.inv.gpus)
    if (const Function* fn = r.topo.find(b); fn && fn->vendor == kPciVendorNvidia) return true;
  return false;
}

// The values given, space-separated ("Supermicro AS -8125GS-TNMR2"); "" when none is.
std::string join_present(std::initializer_list<std::optional<std::string>> values) {
  std::string out;
  for (const auto& v : values)
    if (v && !v->empty()) out += (out.empty() ? "" : " ") + *v;
  return out;
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
  // Which machine, in the words a data-center engineer finds it by (DMI and host name, where shown).
  std::vector<std::string> names;
  const MachineIdentity& id = m.identity;
  std::string model = join_present({id.dmi_vendor, id.dmi_product});
  if (!model.empty()) names.push_back(printable(model));
  if (id.hostname && !id.hostname->empty()) names.push_back("host " + printable(*id.hostname));
  if (!names.empty()) out += "machine: " + join(names, ", ") + "\n";
  if (has_nvidia_gpu(r))
    out +=
        "scope: NVIDIA GPUs — the verdicts are the kernel's P2PDMA path, which GPUDirect Storage uses only in its "
        "P2PDMA mode (open kernel module >= 565, use_pci_p2pdma in cufile.json); GDS's nvidia-fs path is not judged "
        "here, and the storage rules are hipFile's\n";
  for (const SuppliedUse& use : r.supplied)
    if (!use.used) out += "note: " + use.option + " " + use.value + " not used: " + use.why_not_used + "\n";
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

// Problems first: FAIL, then UNKNOWN, then WARN, each in full; PASS and INFO only with -v, where
// one check's per-device PASS lines fold into one.
std::string findings_text(const CheckReport& r, const TextStyle& style, bool verbose) {
  // `alike`: how many more devices have the same finding word for word (printed once, counted).
  auto full = [&](const Finding& f, size_t alike = 0) {
    // A finding about many devices names the first and counts the rest (JSON lists them all).
    const bool many = !f.not_carried.empty() && f.devices.size() > 3;
    std::string subject = many    ? f.devices.front().str() + " and " + std::to_string(f.devices.size() - 1) + " more"
                          : alike ? f.subject + " and " + std::to_string(alike) + " more"
                                  : f.subject;
    std::string line = "  " + colored(style, level_color(f.level), pad(to_string(f.level), 8)) +
                       (subject.empty() ? "" : subject + ": ") + f.message;
    const size_t shown = many ? 1 : f.evidence.size();
    if (!f.evidence.empty())
      line += "\n          evidence: " + f.evidence.front().file + " = " + f.evidence.front().value;
    for (size_t i = 1; i < std::min(shown, f.evidence.size()); ++i)
      line += "; " + f.evidence[i].file + " = " + f.evidence[i].value;
    if (shown < f.evidence.size()) line += "; and " + std::to_string(f.evidence.size() - shown) + " more";
    if (alike) line += "; and the same for the " + std::to_string(alike) + " more";
    if (!f.fix.empty() && (f.level == Level::kFail || f.level == Level::kWarn || f.level == Level::kUnknown))
      line += "\n          fix: " + f.fix;
    return line + "\n";
  };
  std::string out = "\nKernel and stack\n";
  size_t problems = 0, passed = 0, notes = 0;
  // One line per cause: per-device findings that say the same word for word print once, counted.
  auto same_cause = [](const Finding& a, const Finding& b) {
    return a.id == b.id && a.level == b.level && a.message == b.message && a.fix == b.fix && !a.subject.empty() &&
           !b.subject.empty();
  };
  std::vector<bool> printed(r.findings.size());
  for (Level level : {Level::kFail, Level::kUnknown, Level::kWarn})
    for (size_t i = 0; i < r.findings.size(); ++i) {
      if (r.findings[i].level != level || printed[i]) continue;
      size_t alike = 0;
      for (size_t j = i + 1; j < r.findings.size(); ++j)
        if (!printed[j] && same_cause(r.findings[i], r.findings[j])) {
          printed[j] = true;
          ++alike;
        }
      out += full(r.findings[i], alike);
      ++problems;
    }
  std::set<std::string> folded;
  for (const auto& f : r.findings) {
    if (f.level != Level::kPass && f.level != Level::kInfo) continue;
    (f.level == Level::kPass ? passed : notes)++;
    if (!verbose) continue;
    if (f.level == Level::kPass && !f.subject.empty()) {
      if (!folded.insert(f.id).second) continue;
      std::vector<std::string> subjects;
      for (const auto& g : r.findings)
        if (g.id == f.id && g.level == Level::kPass && !g.subject.empty()) subjects.push_back(g.subject);
      if (subjects.size() > 1) {
        out += "  " + colored(style, level_color(f.level), pad("PASS", 8)) + f.message + " — and " +
               std::to_string(subjects.size() - 1) + " more (" + f.id + ": " + subjects.front() + " ... " +
               subjects.back() + ")\n";
        continue;
      }
    }
    out += full(f);
  }
  if (!verbose && passed + notes > 0)
    out += "  " + std::string(problems ? "and " : "") + std::to_string(passed) + " passed, " + std::to_string(notes) +
           " for information (-v lists them)\n";
  return out;
}

// The matrix is printed while it fits about a screenful; beyond that a summary by code says more.
constexpr std::size_t kMaxMatrixLines = 48;

// GPUs down, NVMe across, as many NVMe per block as the width allows; each cell a short code
// (kMatrixCodes) whose legend follows. Too big for a screen: one line per code with its pairs counted.
std::string matrix_text(const CheckReport& r, const TextStyle& style) {
  if (r.pairs.empty()) return "";
  // The devices in the order their first pair comes; seen by the list's device numbers (ends).
  std::vector<Bdf> gpus, nvmes;
  std::vector<char> seen_gpu(r.pairs.ends()), seen_nvme(r.pairs.ends());
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const DevicePair& pair = r.pairs.pair(i);
    if (char& seen = seen_gpu[r.pairs.gpu_end(i)]; !seen) {
      seen = 1;
      gpus.push_back(pair.gpu);
    }
    if (char& seen = seen_nvme[r.pairs.nvme_end(i)]; !seen) {
      seen = 1;
      nvmes.push_back(pair.nvme);
    }
  }
  // Each pair's code, made once per class (and redirect): a fabric's pairs share a few dozen.
  auto cell_index = [&](std::size_t i) { return 2 * r.pairs.class_index(i) + r.pairs.acs_redirected(i); };
  std::vector<std::string> cell_of(2 * r.pairs.classes());
  auto code = [&](std::size_t i) -> const std::string& {
    std::string& c = cell_of[cell_index(i)];
    if (c.empty()) c = cell(r.pairs.shared(i), r.pairs.acs_redirected(i), r.rules);
    return c;
  };
  // Each code's pairs: how many, and the first. Counted per cell first, so the codes' map is
  // touched once per class, not once per pair.
  std::vector<std::size_t> count_of(cell_of.size()), first_of(cell_of.size());
  for (std::size_t i = 0; i < r.pairs.size(); ++i)
    if (count_of[cell_index(i)]++ == 0) first_of[cell_index(i)] = i;
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_code;
  for (std::size_t c = 0; c < cell_of.size(); ++c) {
    if (count_of[c] == 0) continue;
    auto [at, added] = by_code.try_emplace(code(first_of[c]), 0, first_of[c]);
    at->second.first += count_of[c];
    at->second.second = std::min(at->second.second, first_of[c]);
  }
  auto label = [&r](const Bdf& nvme) {
    const NvmeController* c = r.inv.nvme_at(nvme);
    return c && !c->name.empty() ? c->name : nvme.str();
  };
  const size_t first = 20;  // "GPU 0000:03:00.0" and a gap
  size_t column = 4;
  for (const Bdf& n : nvmes) column = std::max(column, label(n).size() + 2);
  size_t per_block = std::max<size_t>(1, (std::max(style.width, first + 2 + column) - 2 - first) / column);
  size_t blocks = (nvmes.size() + per_block - 1) / per_block;
  std::string out = "\nPairs (storage -> GPU and GPU -> storage)\n";
  if (blocks * (gpus.size() + 1) > kMaxMatrixLines) {
    out += "  " + std::to_string(gpus.size()) + " GPU(s) x " + std::to_string(nvmes.size()) +
           " NVMe: " + std::to_string(r.pairs.size()) + " pairs, too many for a matrix in " +
           std::to_string(style.width) + " columns; by verdict and cause:\n";
    for (const MatrixCode& c : kMatrixCodes) {
      auto it = by_code.find(c.code);
      if (it == by_code.end()) continue;
      std::size_t one = it->second.second;
      out += "  " + colored(style, cell_color(r.pairs.shared(one)), pad(c.code, 5)) +
             pad(std::to_string(it->second.first), 7) + c.meaning + " (e.g. GPU " + r.pairs.pair(one).gpu.str() +
             " <-> " + label(r.pairs.pair(one).nvme) + ")\n";
    }
    return out;
  }
  // Each cell's decision by (GPU, NVMe), the first one where a pair repeats: one lookup per cell.
  std::map<std::pair<Bdf, Bdf>, std::size_t> by_pair;
  for (std::size_t i = 0; i < r.pairs.size(); ++i)
    by_pair.emplace(std::make_pair(r.pairs.pair(i).gpu, r.pairs.pair(i).nvme), i);
  for (size_t start = 0; start < nvmes.size(); start += per_block) {
    size_t end = std::min(nvmes.size(), start + per_block);
    std::string header = "  " + pad("", first);
    for (size_t i = start; i < end; ++i) header += pad(label(nvmes[i]), column);
    while (!header.empty() && header.back() == ' ') header.pop_back();
    out += header + "\n";
    for (const Bdf& g : gpus) {
      std::string line = "  " + pad("GPU " + g.str(), first);
      for (size_t i = start; i < end; ++i) {
        auto found = by_pair.find({g, nvmes[i]});
        if (found == by_pair.end()) {
          line += pad("", column);
          continue;
        }
        line += colored(style, cell_color(r.pairs.shared(found->second)), pad(code(found->second), column));
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  for (const MatrixCode& c : kMatrixCodes)
    if (by_code.count(c.code)) out += "  " + pad(c.code, 5) + c.meaning + "\n";
  return out;
}

// What a problem pair's block says below its header line: why, directions, unknowns, the fix, the
// kernel's own answer. Pairs whose bodies are identical share one cause and print as one block.
std::string pair_body(const CheckReport& r, const PairDecision& d) {
  std::string out = "  why   " + rule_text(d) + "\n";
  if (d.to_gpu.hardware == Hardware::kPasses)
    out += "        storage -> GPU: " + flow_reason_text(d, d.to_gpu) +
           "\n        GPU -> storage: " + flow_reason_text(d, d.from_gpu) + "\n";
  for (const auto& u : unknown_texts(d)) out += "  unknown  " + u + "\n";
  // One fix per cause; a known-bad kernel's ("boot another kernel") is printed once above all pairs.
  PairFix fix = pair_fix(d, r.rules, r.machine);
  if (!fix.empty() && fix.kind != "other_kernel" && fix.kind != "kernel_with_p2pdma")
    out += "  fix   " + fix.text + "\n";
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
    const Bdf& gpu = r.pairs.pair(i).gpu;
    auto it = std::find_if(by_gpu.begin(), by_gpu.end(), [&](const auto& g) { return g.first == gpu; });
    if (it == by_gpu.end()) it = by_gpu.insert(by_gpu.end(), {gpu, {}});
    const NvmeController* c = r.inv.nvme_at(r.pairs.pair(i).nvme);
    it->second.push_back(c && !c->name.empty() ? c->name : r.pairs.pair(i).nvme.str());
  }
  std::string out;
  for (const auto& [gpu, nvmes] : by_gpu) out += "  pairs GPU " + gpu.str() + " <-> " + join(nvmes, ", ") + "\n";
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
           "`p2pcheck explain`)\n  fix   boot another kernel before using the fastpath\n";
  }
  struct Cause {
    std::string status, body;
    std::vector<std::size_t> pairs;
  };
  std::vector<Cause> causes;                  // in the order of their first pair
  std::map<std::string, size_t> cause_index;  // status + body -> its place in `causes`
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const PairDecision& shared = r.pairs.shared(i);
    bool disagreement = r.pairs.kernel_agrees(i) == Tri::kNo;
    if (!disagreement &&
        (shared.verdict == Verdict::kSupported || (r.rules.known_bad && shared.map_type != MapType::kNotSupported)))
      continue;
    const PairDecision d = r.pairs[i];  // a problem pair: its route is named
    std::string status = pair_status(d, style);
    // Pairs that wait only on facts the input cannot carry share one cause, whatever their paths.
    PairFix fix = pair_fix(d, r.rules, r.machine);
    std::string body = fix.kind == "supply_facts" ? supply_facts_body(d, fix) : pair_body(r, d);
    auto [at, added] = cause_index.try_emplace(status + '\n' + body, causes.size());
    if (added) causes.push_back({status, body, {}});
    causes[at->second].pairs.push_back(i);
  }
  for (const Cause& c : causes) {
    const DevicePair& first = r.pairs.pair(c.pairs.front());
    std::string explain = first.gpu.str() + " " + first.nvme.str();
    if (c.pairs.size() == 1) {
      out += "\nGPU " + first.gpu.str() + " <-> " + nvme_name_prefix(r.inv, first.nvme) + first.nvme.str() + ": " +
             c.status + "\n" + c.body + "  see   p2pcheck explain " + explain + "\n";
      continue;
    }
    out += "\n" + std::to_string(c.pairs.size()) + " pairs: " + c.status + ", all for the same reason\n" +
           group_pairs_text(r, c.pairs) + c.body + "  see   p2pcheck explain " + explain + " (any of them)\n";
  }
  return out + either_way_text(r);
}

}  // namespace

std::string check_text(const CheckReport& r, const TextStyle& style, bool verbose) {
  std::string out = banner_text(r) + "\n" + result_line(r, style) + limits_text(r);
  return out + findings_text(r, style, verbose) + matrix_text(r, style) + problem_pairs_text(r, style) +
         host_fix_text(host_fix(r));
}

}  // namespace p2pcheck
