// Kernel and CPU findings, each a small step over the facts load_machine_state read.
#include "p2pcheck/checks/kernel.h"

#include <cstdio>
#include <optional>

namespace p2pcheck {
namespace {

std::string hex_family(int family) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", family);
  return buf;
}

Finding release_finding(const Machine& m, const KernelRules& rules) {
  Finding release{"kernel.release", Level::kInfo, "", "", {}, ""};
  release.message =
      "kernel " + (rules.release.empty() ? std::string("unknown") : rules.release) +
      (rules.assumed ? " (assumed with --assume-kernel; " +
                           (m.kernel_release.empty() ? std::string("the source does not say which it runs")
                                                     : "the source runs " + m.kernel_release) +
                           ")"
                     : "") +
      (m.os.pretty_name.empty() ? "" : ", " + m.os.pretty_name);
  release.evidence.push_back({"/proc/sys/kernel/osrelease", m.kernel_release.empty() ? "(missing)" : m.kernel_release});
  if (!m.os.file.empty()) release.evidence.push_back({m.os.file, "PRETTY_NAME=" + m.os.pretty_name});
  if (rules.release.empty()) {
    release.level = Level::kUnknown;
    release.message = "kernel release unknown: /proc/sys/kernel/osrelease and /proc/version are missing";
    if (std::string why = m.not_carried({"/proc/sys/kernel/osrelease"}); !why.empty()) {
      release.not_carried = why;
      release.message = "kernel release unknown: it is " + why;
      release.evidence.front().value = why;
      release.fix = "evaluate a release's rules with --assume-kernel REL (e.g. the one the machine runs)";
    }
  }
  return release;
}

Finding config_finding(const Machine& m, const KernelRules& rules) {
  const DistroKernel* distro = find_distro_kernel(m.os);
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
    if (std::string why = m.not_carried({"/proc/config.gz", "/boot"}); !why.empty() || rules.release.empty()) {
      if (!why.empty()) config.not_carried = why;
      config.message = "CONFIG_PCI_P2PDMA unknown: the kernel configuration is " +
                       (why.empty() ? std::string("unknown without the kernel release") : why);
      config.fix = "evaluate a release's rules with --assume-kernel REL, which takes its CONFIG_PCI_P2PDMA as set";
    }
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
    config.fix +=
        "; distribution kernels known to have it: Ubuntu 22.04 HWE / 24.04 (6.8), RHEL 9.4/9.6, RHEL 10.0, SLES 15 SP7";
  }
  return config;
}

Finding known_bad_finding(const KernelRules& rules) {
  Finding bad{"kernel.known_bad", Level::kPass, "", "kernel not on the known-bad list (RHEL 9.8 / 10.2)", {}, ""};
  if (rules.known_bad) {
    bad.level = Level::kFail;
    bad.message =
        std::string(rules.known_bad->name) + " kernel: P2PDMA there can corrupt memory; never use the fastpath";
    bad.evidence.push_back({"/proc/sys/kernel/osrelease", rules.release});
    bad.fix = "boot another kernel (e.g. the RHEL 9.6 or 10.0 kernel) before using P2PDMA (source: " +
              std::string(rules.known_bad->source) + ")";
  }
  return bad;
}

// hipFile's distribution table row for this OS, if it has one.
std::optional<Finding> distribution_finding(const Machine& m) {
  const DistroKernel* distro = find_distro_kernel(m.os);
  if (!distro) return std::nullopt;
  Finding d{"kernel.distribution",
            Level::kInfo,
            "",
            "",
            {{m.os.file, "ID=" + m.os.id + " VERSION_ID=" + m.os.version_id}},
            ""};
  d.message = std::string("hipFile's distribution table, ") + distro->target + ": the default kernel (" +
              distro->kernel + ", inspected on " + distro->os + ") has " +
              (distro->p2pdma ? "CONFIG_PCI_P2PDMA=y" : "no CONFIG_PCI_P2PDMA");
  return d;
}

Finding cpu_finding(const Machine& m) {
  Finding cpu{"cpu.p2pdma_rule", Level::kInfo, "", "", {}, ""};
  const CpuInfo& c = m.cpu;
  if (!c.architecture.empty() && c.architecture != "x86" && c.architecture != "s390") {
    cpu.evidence.push_back(
        {c.evidence_file, "a " + c.architecture + " CPU" + (c.model_name.empty() ? "" : " (" + c.model_name + ")")});
    cpu.message = "a " + c.architecture +
                  " CPU: the kernel's CPU rule (AMD Zen, x86 only) cannot pass; P2P through a host bridge needs an "
                  "allowlisted host bridge";
  } else if (c.vendor_id.empty()) {
    cpu.level = Level::kUnknown;
    std::string not_carried = m.not_carried({"/proc/cpuinfo"});
    if (!not_carried.empty()) {
      cpu.not_carried = not_carried;
      cpu.message = "CPU vendor unknown (" + not_carried + "): the AMD Zen rule cannot be applied";
      cpu.fix = "give the CPU: --cpu amd-zen|amd-pre-zen|intel|hygon, or a /proc/cpuinfo file beside the dump";
    } else {
      cpu.message = "CPU vendor unknown (no /proc/cpuinfo): the AMD Zen rule cannot be applied";
    }
  } else {
    cpu.evidence.push_back({c.evidence_file, "vendor_id " + c.vendor_id + ", cpu family " + std::to_string(c.family) +
                                                 " (" + hex_family(c.family) + "), model name " + c.model_name});
    if (cpu_supports_p2pdma(c) == Tri::kYes) {
      cpu.message =
          "AMD Zen or newer (family " + hex_family(c.family) + "): the kernel allows P2P through the root complex";
    } else if (cpu_is_pre_zen_amd(c)) {
      cpu.level = Level::kWarn;
      cpu.message = "pre-Zen AMD (family " + hex_family(c.family) +
                    "): the kernel refuses P2P through the root complex; the hardware passes P2P writes but not reads";
      cpu.fix = "keep each GPU and NVMe under one PCIe switch (BUS_ADDR works on any CPU)";
    } else if (c.vendor_id == "HygonGenuine") {
      cpu.message =
          "Hygon CPU: not AMD to the kernel's check; P2P through a host bridge needs an allowlisted host bridge";
    } else {
      cpu.message = c.vendor_id + " CPU: P2P through a host bridge needs an allowlisted host bridge";
    }
  }
  return cpu;
}

}  // namespace

std::string allowlist_table_note(const KernelRules& rules) {
  std::string note;
  switch (rules.table_basis) {
    case TableBasis::kReleaseUnknown:
      note = "kernel release unknown: evaluated with the 6.1-6.12 allowlist (verified from source)";
      break;
    case TableBasis::kOlderThanVerified:
      note = "kernel " + rules.version->str() +
             " is older than 6.1: evaluated with 6.1's algorithm and the rows dated by release; "
             "history before 6.1 is not verified (before 5.9 AMD Zen was allowlisted by root "
             "complex ID instead of CPU family, and early kernels refused any ACS redirect)";
      break;
    case TableBasis::kVerified:
      note = "allowlist as of " + rules.version->str() + " (same table as 6.1-6.12, verified from source)";
      break;
    case TableBasis::kNewerRowsReported:
      note = "allowlist as of " + rules.version->str() + " (rows newer than 6.12 are from reports)";
      break;
  }
  if (rules.vendor_kernel)
    note += "; vendor kernel: backports may differ from upstream " +
            (rules.version ? rules.version->str() : std::string("?")) + ", the kernel module's own answer settles it";
  return note;
}

std::vector<Finding> check_kernel(const Machine& m, const KernelRules& rules) {
  std::vector<Finding> out;
  out.push_back(release_finding(m, rules));
  out.push_back(config_finding(m, rules));
  out.push_back(known_bad_finding(rules));
  if (auto distro = distribution_finding(m)) out.push_back(*distro);
  out.push_back({"kernel.allowlist_table", Level::kInfo, "", allowlist_table_note(rules), {}, ""});
  out.push_back(cpu_finding(m));
  return out;
}

}  // namespace p2pcheck
