#include "p2pcheck/checks/check.h"
#include "p2pcheck/model/machine_state.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "p2pcheck/source/error.h"
#include "p2pcheck/checks/gpu_stack.h"
#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/checks/recorded.h"
#include "p2pcheck/checks/storage.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

const char* to_string(Level level) {
  switch (level) {
    case Level::kPass: return "PASS";
    case Level::kInfo: return "INFO";
    case Level::kWarn: return "WARN";
    case Level::kFail: return "FAIL";
    case Level::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

int severity(Level l) {
  switch (l) {
    case Level::kPass: return 0;
    case Level::kInfo: return 1;
    case Level::kWarn: return 2;
    case Level::kUnknown: return 3;
    case Level::kFail: return 4;
  }
  return 0;
}

namespace {

// A device in a pci= ACS list: "0000:42:02.0", "42:02.0", or "pci:vvvv:dddd".
bool device_matches(const std::string& item, const Function& fn) {
  if (auto bdf = Bdf::parse(item)) return *bdf == fn.bdf;
  unsigned vendor = 0, device = 0;
  if (std::sscanf(item.c_str(), "pci:%x:%x", &vendor, &device) == 2) return vendor == fn.vendor && device == fn.device;
  return false;
}

std::string hex_family(int family) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", family);
  return buf;
}
}  // namespace

Level worst(const std::vector<Finding>& findings) {
  Level w = Level::kPass;
  for (const auto& f : findings)
    if (severity(f.level) > severity(w)) w = f.level;
  return w;
}

std::vector<Finding> check_kernel(const Machine& m, const KernelRules& rules) {
  std::vector<Finding> out;
  const DistroKernel* distro = find_distro_kernel(m.os);

  Finding release{"kernel.release", Level::kInfo, "", "", {}, ""};
  release.message = "kernel " + (rules.release.empty() ? std::string("unknown") : rules.release) +
                    (rules.assumed ? " (assumed with --assume-kernel; the source runs " + m.kernel_release + ")" : "") +
                    (m.os.pretty_name.empty() ? "" : ", " + m.os.pretty_name);
  release.evidence.push_back({"/proc/sys/kernel/osrelease", m.kernel_release.empty() ? "(missing)" : m.kernel_release});
  if (!m.os.file.empty()) release.evidence.push_back({m.os.file, "PRETTY_NAME=" + m.os.pretty_name});
  if (rules.release.empty()) {
    release.level = Level::kUnknown;
    release.message = "kernel release unknown: /proc/sys/kernel/osrelease and /proc/version are missing";
  }
  out.push_back(release);

  Finding config{"kernel.config_p2pdma", Level::kPass, "", "", {}, ""};
  if (rules.assumed) {
    config.level = Level::kInfo;
    config.message = "CONFIG_PCI_P2PDMA not checked: --assume-kernel evaluates another kernel's rules";
  } else if (rules.p2pdma_enabled == Tri::kUnknown) {
    config.level = Level::kUnknown;
    std::string tried;
    for (const auto& t : m.config.tried) tried += (tried.empty() ? "" : ", ") + t;
    config.message = "CONFIG_PCI_P2PDMA unknown: no kernel configuration found (looked in " + tried + ")";
    config.fix = "make the kernel's config readable (it is usually /boot/config-" + m.kernel_release +
                 "), or load configs.ko for /proc/config.gz";
  } else if (rules.p2pdma_enabled == Tri::kYes) {
    config.message = "CONFIG_PCI_P2PDMA=y";
    config.evidence.push_back({rules.config_file, "CONFIG_PCI_P2PDMA=y"});
  } else {
    config.level = Level::kFail;
    config.message = "kernel built without CONFIG_PCI_P2PDMA: no P2P DMA at all (it cannot be enabled at run time)";
    config.evidence.push_back({rules.config_file, "# CONFIG_PCI_P2PDMA is not set"});
    config.fix = "boot a kernel built with CONFIG_PCI_P2PDMA=y";
    if (distro && !distro->p2pdma) {
      for (const auto& row : distro_kernels())
        if (row.p2pdma && std::string(row.target).rfind(std::string(distro->target) + "-", 0) == 0)
          config.fix += " (e.g. " + std::string(row.os) + " kernel " + row.kernel + ")";
    }
    config.fix += "; distribution kernels known to have it: Ubuntu 22.04 HWE / 24.04 (6.8), RHEL 9.4/9.6, RHEL 10.0, SLES 15 SP7";
  }
  out.push_back(config);

  Finding bad{"kernel.known_bad", Level::kPass, "", "kernel not on the known-bad list (RHEL 9.8 / 10.2)", {}, ""};
  if (rules.known_bad) {
    bad.level = Level::kFail;
    bad.message = std::string(rules.known_bad->name) + " kernel: P2PDMA there can corrupt memory; never use the fastpath";
    bad.evidence.push_back({"/proc/sys/kernel/osrelease", rules.release});
    bad.fix = "boot another kernel (e.g. the RHEL 9.6 or 10.0 kernel) before using P2PDMA; " + std::string(rules.known_bad->source);
  }
  out.push_back(bad);

  if (distro) {
    Finding d{"kernel.distribution", Level::kInfo, "", "", {{m.os.file, "ID=" + m.os.id + " VERSION_ID=" + m.os.version_id}}, ""};
    d.message = std::string("hipFile's distribution table, ") + distro->target + ": the default kernel (" + distro->kernel +
                ", inspected on " + distro->os + ") has " + (distro->p2pdma ? "CONFIG_PCI_P2PDMA=y" : "no CONFIG_PCI_P2PDMA");
    out.push_back(d);
  }

  out.push_back({"kernel.allowlist_table", Level::kInfo, "", rules.table_note, {}, ""});

  Finding cpu{"cpu.p2pdma_rule", Level::kInfo, "", "", {}, ""};
  const CpuInfo& c = m.cpu;
  if (c.vendor_id.empty()) {
    cpu.level = Level::kUnknown;
    cpu.message = "CPU vendor unknown (no /proc/cpuinfo): the AMD Zen rule cannot be applied";
  } else {
    cpu.evidence.push_back({c.evidence_file, "vendor_id " + c.vendor_id + ", cpu family " + std::to_string(c.family) +
                                                 " (" + hex_family(c.family) + "), model name " + c.model_name});
    if (cpu_supports_p2pdma(c) == Tri::kYes) {
      cpu.message = "AMD Zen or newer (family " + hex_family(c.family) + "): the kernel allows P2P through the root complex";
    } else if (cpu_is_pre_zen_amd(c)) {
      cpu.level = Level::kWarn;
      cpu.message = "pre-Zen AMD (family " + hex_family(c.family) +
                    "): the kernel refuses P2P through the root complex; the hardware passes P2P writes but not reads";
      cpu.fix = "keep each GPU and NVMe under one PCIe switch (BUS_ADDR works on any CPU)";
    } else if (c.vendor_id == "HygonGenuine") {
      cpu.message = "Hygon CPU: not AMD to the kernel's check; P2P through a host bridge needs an allowlisted host bridge";
    } else {
      cpu.message = c.vendor_id + " CPU: P2P through a host bridge needs an allowlisted host bridge";
    }
  }
  out.push_back(cpu);
  return out;
}

AcsOverride acs_override(const std::string& cmdline, const Function& fn) {
  AcsOverride result = AcsOverride::kNone;
  for (const auto& [key, value] : parse_cmdline(cmdline)) {
    if (key != "pci") continue;
    // pci= takes comma-separated options; the device lists inside use ';'.
    for (const std::string& option : split(value, ',')) {
      bool disable = option.rfind("disable_acs_redir=", 0) == 0;
      bool config = option.rfind("config_acs=", 0) == 0;
      if (!disable && !config) continue;
      for (std::string item : split(option.substr(option.find('=') + 1), ';')) {
        if (config) item = item.substr(item.find('@') == std::string::npos ? 0 : item.find('@') + 1);
        if (!device_matches(item, fn)) continue;
        if (config) return AcsOverride::kConfigured;
        result = AcsOverride::kRedirectDisabled;
      }
    }
  }
  return result;
}

std::vector<Finding> check_iommu(Source& source, const Machine& m, const Topology& topo,
                                 const std::vector<PairDecision>& pairs) {
  std::vector<Finding> out;
  std::vector<std::string> units = source.list("/sys/class/iommu");
  std::string cmd_iommu;
  std::string acs_params;
  for (const auto& [key, value] : parse_cmdline(m.cmdline)) {
    if (key == "intel_iommu" || key == "amd_iommu" || key == "iommu" || key == "iommu.passthrough")
      cmd_iommu += (cmd_iommu.empty() ? "" : " ") + key + "=" + value;
    if (key == "pci" && (value.rfind("disable_acs_redir=", 0) == 0 || value.rfind("config_acs=", 0) == 0))
      acs_params += (acs_params.empty() ? "" : " ") + key + "=" + value;
  }
  std::set<std::string> group_types;
  std::string type_file;
  for (const std::string& group : source.list("/sys/kernel/iommu_groups")) {
    std::string path = "/sys/kernel/iommu_groups/" + group + "/type";
    FileRead r = source.read(path);
    if (r.ok()) {
      group_types.insert(std::string(trim(r.bytes)));
      if (type_file.empty()) type_file = path;
    }
  }
  Finding f{"iommu.state", Level::kInfo, "", "", {}, ""};
  // Imports mark what their format does not carry as unreadable (sysfs_builder.h: unknown()).
  FileRead iommu_node = units.empty() ? source.read("/sys/class/iommu") : FileRead{};
  if (iommu_node.status == ReadStatus::kFailed && iommu_node.error != "is a directory") {
    // Unknown, not "no IOMMU"; the verdicts still stand on the ACS registers where config space was given.
    f.message = "whether an IOMMU is on is unknown (" + iommu_node.error + "); verdicts use the ACS registers as given";
    f.evidence.push_back({"/sys/class/iommu", "unknown: " + iommu_node.error});
  } else if (units.empty()) {
    f.message = "no IOMMU active (/sys/class/iommu is empty): the kernel did not request ACS redirect";
    f.evidence.push_back({"/sys/class/iommu", "(empty)"});
  } else {
    std::string mode = group_types.count("identity") && group_types.size() == 1 ? "passthrough"
                       : group_types.empty()                                    ? "mode unknown"
                                                                                : "translated";
    f.message = "IOMMU on (" + mode + ", " + std::to_string(units.size()) + " unit(s))" +
                (cmd_iommu.empty() ? "" : ", " + cmd_iommu) +
                ": the kernel enables ACS redirect on every port that has ACS";
    f.evidence.push_back({"/sys/class/iommu", units.front() + (units.size() > 1 ? " ..." : "")});
    if (!type_file.empty()) f.evidence.push_back({type_file, *group_types.begin()});
  }
  if (!cmd_iommu.empty() || !acs_params.empty()) f.evidence.push_back({"/proc/cmdline", cmd_iommu + (acs_params.empty() ? "" : " " + acs_params)});
  if (!units.empty()) {
    // With an IOMMU the kernel enables RR and CR (and SV, UF) on every device whose ACS capability
    // advertises them, then clears redirect for devices named in pci=disable_acs_redir=; config_acs=
    // sets bits explicitly. A device that differs was changed after boot (setpci) or by a quirk: the
    // kernel decides on the register as it is now, which is what the verdicts above use.
    std::vector<const Function*> differs;
    for (const auto& entry : topo.functions) {
      const Function& fn = entry.second;
      if (fn.acs.presence != Presence::kPresent) continue;
      AcsOverride o = acs_override(m.cmdline, fn);
      if (o == AcsOverride::kConfigured) continue;
      std::uint16_t want = fn.acs.capability & (kAcsRr | kAcsCr);
      if (o == AcsOverride::kRedirectDisabled) want = 0;
      if ((fn.acs.control & (kAcsRr | kAcsCr)) != want) differs.push_back(&fn);
    }
    if (!differs.empty()) {
      Finding d{"iommu.acs_changed", Level::kWarn, "", "", {}, ""};
      d.message = std::to_string(differs.size()) + " device(s) have ACS redirect " +
                  "different from what the kernel sets at boot with an IOMMU (" + differs.front()->bdf.str() +
                  (differs.size() > 1 ? ", ..." : "") + "): changed after boot, e.g. by setpci; verdicts use the current value";
      const Function& first = *differs.front();
      char ctl[32];
      std::snprintf(ctl, sizeof ctl, "ACS cap 0x%04x ctrl 0x%04x", first.acs.capability, first.acs.control);
      d.evidence.push_back({first.sysfs_path + "/config", ctl});
      d.fix = "reboot (or re-apply the same setting on every boot) so the verdict and the running state agree";
      out.push_back(f);
      out.push_back(d);
      return out;
    }
  }
  // Which pairs does ACS redirect push through the root complex?
  std::set<std::string> redirected_ports;
  int affected = 0;
  for (const auto& d : pairs) {
    if (d.walk.common && !d.walk.acs_redirect.empty()) {
      ++affected;
      for (const Function* fn : d.walk.acs_redirect) redirected_ports.insert(fn->bdf.str());
    }
  }
  if (affected) {
    f.level = Level::kWarn;
    f.message += "; ACS redirect on " + std::to_string(redirected_ports.size()) + " port(s) sends " +
                 std::to_string(affected) + " switch-local pair(s) up through the root complex";
    f.fix = "only if those pairs fail: boot with the pair's pci=disable_acs_redir= list (see the pair details); it "
            "weakens IOMMU isolation for the devices below those ports (they may share an IOMMU group, and VFIO "
            "passthrough loses isolation)";
  }
  out.push_back(f);
  return out;
}

std::optional<double> path_ceiling(const PairPath& path) {
  std::optional<double> ceiling;
  for (const Hop& hop : path.hops) {
    if (!hop.function) continue;
    const LinkInfo& l = hop.function->link;
    if (!l.cur_speed || !l.cur_width) continue;
    double bw = lane_bytes_per_second(*l.cur_speed) * *l.cur_width;
    if (!ceiling || bw < *ceiling) ceiling = bw;
  }
  return ceiling;
}

std::vector<Finding> check_links(const Topology& topo, const std::vector<PairDecision>& pairs) {
  std::vector<Finding> out;
  std::set<Bdf> seen;
  for (const auto& d : pairs) {
    for (const Hop& hop : d.path.hops) {
      if (!hop.function || !seen.insert(hop.function->bdf).second) continue;
      const Function& fn = *hop.function;
      LinkCheck link = check_link(topo, fn);
      if (!link.downtrained) continue;
      Finding f{"link.downtrained", Level::kWarn, fn.bdf.str(), "", {}, ""};
      f.message = "link above " + hop.role + " " + fn.bdf.str() + " runs at " + link_text(fn.link) + ", both ends can do " +
                  (link.capable_speed ? format_speed(*link.capable_speed) : "?") + " x" +
                  (link.capable_width ? std::to_string(*link.capable_width) : "?");
      f.evidence.push_back({fn.sysfs_path + "/current_link_speed", fn.link.cur_speed ? format_speed(*fn.link.cur_speed) : "?"});
      f.evidence.push_back({fn.sysfs_path + "/current_link_width", fn.link.cur_width ? std::to_string(*fn.link.cur_width) : "?"});
      f.fix = "reseat the card or riser, check the slot's wiring and BIOS link settings; a downtrained link caps every "
              "transfer through it";
      out.push_back(f);
    }
  }
  if (out.empty() && !pairs.empty()) out.push_back({"link.health", Level::kPass, "", "no downtrained link on any GPU–NVMe path", {}, ""});
  return out;
}

namespace {

// The kernel's answers beside ours: one finding, FAIL naming the pairs where they differ.
// `answer` gives the kernel's verdict for a pair, nullopt when it was not asked about it.
Finding compare_with_kernel(std::vector<PairDecision>& pairs,
                            const std::function<std::optional<KernelVerdict>(const DevicePair&)>& answer, Evidence ev,
                            const std::string& whose) {
  std::vector<std::string> disagree;
  size_t compared = 0;
  for (PairDecision& d : pairs) {
    auto k = answer(d.path.pair);
    if (!k) continue;
    ++compared;
    d.kernel = *k;
    d.kernel_agrees = tri(agrees(d, *d.kernel));
    if (d.kernel_agrees == Tri::kNo) disagree.push_back(d.path.pair.gpu.str() + " <-> " + d.path.pair.nvme.str());
  }
  if (compared == 0)
    return {"kmod.kernel_verdict", Level::kInfo, "", whose + " answers cover none of the pairs checked here", {ev}, ""};
  if (disagree.empty()) {
    std::string of = compared == pairs.size() ? "all " + std::to_string(compared)
                                              : std::to_string(compared) + " of " + std::to_string(pairs.size());
    return {"kmod.kernel_verdict", Level::kPass, "",
            whose + " answers agree with p2pcheck for " + of + " pair(s) (distance, supported, map type where observable)",
            {ev}, ""};
  }
  return {"kmod.kernel_verdict", Level::kFail, "",
          whose + " answers disagree with p2pcheck's rules on " + std::to_string(disagree.size()) +
              " pair(s): " + disagree.front() + (disagree.size() > 1 ? ", ..." : "") +
              " — trust the kernel's answer; this is a bug in p2pcheck or a kernel patch it does not know",
          {ev}, "report it with `p2pcheck capture` attached; the pair details show both answers"};
}

}  // namespace

std::vector<Finding> check_kernel_module(const CheckOptions& options, bool live, std::vector<PairDecision>& pairs) {
  std::vector<Finding> out;
  if (!options.kernel_module) {
    if (live)
      out.push_back({"kmod.kernel_verdict", Level::kInfo, "",
                     "the kernel's own answers were not asked (" +
                         (options.kernel_module_problem.empty() ? std::string("p2pprobe not loaded") : options.kernel_module_problem) +
                         "): the verdicts are p2pcheck's prediction from the kernel's rules",
                     {{"/dev/p2pprobe", "absent"}},
                     "p2pcheck kmod load (as root) to compare every pair with the running kernel's answer"});
    return out;
  }
  P2pprobeClient& module = *options.kernel_module;
  try {
    ModuleInfo info = module.info();
    Evidence ev{module.path(), "p2pprobe " + info.module_version + " on " + info.kernel_release +
                                   (info.p2pdma ? ", CONFIG_PCI_P2PDMA=y" : ", no CONFIG_PCI_P2PDMA")};
    out.push_back(compare_with_kernel(
        pairs, [&](const DevicePair& p) -> std::optional<KernelVerdict> { return module.verdict(p.gpu, p.nvme); }, ev,
        "the running kernel's own"));
  } catch (const Error& e) {
    // A module that stops answering leaves our prediction standing, said plainly.
    for (PairDecision& d : pairs) d.kernel.reset(), d.kernel_agrees = Tri::kUnknown;
    out.push_back({"kmod.kernel_verdict", Level::kUnknown, "", std::string("the kernel module did not answer: ") + e.what(),
                   {{module.path(), "ioctl failed"}}, "reload it: p2pcheck kmod unload; p2pcheck kmod load"});
  }
  return out;
}

std::vector<Finding> check_recorded_kernel_answers(const RecordedKernelAnswers& recorded, std::vector<PairDecision>& pairs) {
  Evidence ev{kRecordedKmodPath, "p2pprobe " + recorded.info.module_version + " on " + recorded.info.kernel_release +
                                     (recorded.info.p2pdma ? ", CONFIG_PCI_P2PDMA=y" : ", no CONFIG_PCI_P2PDMA") +
                                     ", recorded at capture time"};
  return {compare_with_kernel(
      pairs,
      [&](const DevicePair& p) -> std::optional<KernelVerdict> {
        auto it = recorded.verdicts.find({p.gpu, p.nvme});
        if (it == recorded.verdicts.end()) return std::nullopt;
        return it->second;
      },
      ev, "the captured machine's kernel (p2pprobe)")};
}

std::unique_ptr<CheckReport> run_check(Source& source, const CheckOptions& options) {
  auto report = std::make_unique<CheckReport>();
  MachineState state = load_machine_state(source);
  report->source = std::move(state.source);
  report->topo = std::move(state.topo);  // before deciding: the decisions point into report->topo
  report->inv = std::move(state.inv);
  report->machine = std::move(state.machine);
  report->rules = kernel_rules_for(report->machine, options.assume_kernel);
  std::vector<DevicePair> selected = select_pairs(report->topo, report->inv, options.selection);
  report->pairs.reserve(selected.size());  // growing one by one moved ~8,000 large PairDecisions
  for (const DevicePair& pair : selected)
    report->pairs.push_back(decide_pair(report->topo, report->inv, report->machine, report->rules, pair));

  auto add = [&](std::vector<Finding> more) {
    report->findings.insert(report->findings.end(), more.begin(), more.end());
  };
  add(check_kernel(report->machine, report->rules));
  if (auto recorded = source.is_live() ? std::nullopt : read_recorded_kernel_answers(source))
    add(check_recorded_kernel_answers(*recorded, report->pairs));
  else
    add(check_kernel_module(options, source.is_live(), report->pairs));
  add(check_iommu(source, report->machine, report->topo, report->pairs));
  add(check_links(report->topo, report->pairs));
  add(check_gpu_stack(source, report->machine, report->topo, report->inv));
  add(check_storage(source, report->machine, report->inv));
  if (!source.is_live())
    if (auto verified = recorded_verify_finding(source, report->pairs)) add({*verified});

  Level result = worst(report->findings);
  if (result == Level::kWarn || result == Level::kInfo) result = Level::kPass;
  for (const auto& d : report->pairs) {
    if (d.verdict == Verdict::kNotSupported) result = Level::kFail;
    else if (d.verdict == Verdict::kUnknown && result != Level::kFail) result = Level::kUnknown;
  }
  report->result = result;
  return report;
}

}  // namespace p2pcheck
