// Kernel and CPU findings, each a small step over the facts load_machine_state read.
#include "p2pcheck/checks/kernel.h"

#include <cstdio>
#include <optional>

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

std::string hex_family(int family) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", family);
  return buf;
}

// Where the judged release came from, as evidence: the input's file, or the option that gave it.
Evidence release_evidence(const KernelRules& rules) {
  switch (rules.origin) {
    case KernelOrigin::kSupplied: return {"--kernel-release", rules.release};
    case KernelOrigin::kWhatIf: return {"--what-if-kernel", rules.release};
    case KernelOrigin::kInput: return {"/proc/sys/kernel/osrelease", rules.release};
    case KernelOrigin::kUnknown: break;
  }
  return {"/proc/sys/kernel/osrelease", "(missing)"};
}

Provenance kernel_state(const KernelRules& rules) {
  return rules.what_if()                           ? Provenance::kWhatIf
         : rules.origin == KernelOrigin::kSupplied ? Provenance::kSupplied
                                                   : Provenance::kObserved;
}

// What to ask for when the kernel release is not in the input.
constexpr const char* kReleaseFix =
    "give the release the machine runs with --kernel-release REL (`uname -r` there), or replay a `p2pcheck capture` "
    "of it; --what-if-kernel REL asks what another kernel would decide";

Finding release_finding(const Machine& m, const KernelRules& rules) {
  Finding release{"kernel.release", Level::kInfo, "", "", {release_evidence(rules)}, ""};
  release.state = kernel_state(rules);
  std::string os = m.os.pretty_name.empty() ? "" : ", " + m.os.pretty_name;
  switch (rules.origin) {
    case KernelOrigin::kInput: release.message = "kernel " + rules.release + os; break;
    case KernelOrigin::kSupplied:
      release.message = "kernel " + rules.release + " (supplied with --kernel-release; the input does not say)" + os;
      break;
    case KernelOrigin::kWhatIf:
      release.message = "what-if: the rules of kernel " + rules.release + " (--what-if-kernel), not the kernel the " +
                        (rules.input_release.empty() ? std::string("input runs (it does not say which)")
                                                     : "input runs (" + rules.input_release + ")") +
                        os;
      break;
    case KernelOrigin::kUnknown:
      release.level = Level::kUnknown;
      release.message = "kernel release unknown: /proc/sys/kernel/osrelease and /proc/version are missing";
      release.fix = kReleaseFix;
      if (std::string why = m.not_carried({"/proc/sys/kernel/osrelease"}); !why.empty()) {
        release.not_carried = why;
        release.message = "kernel release unknown: it is " + why;
        release.evidence.front().value = why;
      }
      break;
  }
  if (!m.os.file.empty()) release.evidence.push_back({m.os.file, "PRETTY_NAME=" + m.os.pretty_name});
  return release;
}

// Distribution kernels known to have CONFIG_PCI_P2PDMA, for a fix that says which to boot.
std::string kernels_with_p2pdma(const Machine& m) {
  std::string out;
  if (const DistroKernel* distro = find_distro_kernel(m.os); distro && !distro->p2pdma)
    for (const auto& row : distro_kernels())
      if (row.p2pdma && std::string(row.target).rfind(std::string(distro->target) + "-", 0) == 0)
        out += " (e.g. " + std::string(row.os) + " kernel " + row.kernel + ")";
  return out +
         "; distribution kernels known to have it: Ubuntu 22.04 HWE / 24.04 (6.8), RHEL 9.4/9.6, RHEL 10.0, SLES 15 "
         "SP7";
}

// kernel.config_p2pdma: whether the kernel has P2PDMA at all, and how that was decided.
// Long: one case per P2pdmaBasis (config read, older than P2PDMA, distribution table, what-if,
// unknown), each a whole finding; split, the ways the answer is reached would no longer read as one list.
Finding config_finding(const Machine& m, const KernelRules& rules) {
  Finding config{"kernel.config_p2pdma", Level::kPass, "", "", {}, ""};
  config.state = rules.config_supplied ? Provenance::kSupplied : kernel_state(rules);
  const std::string boot = "boot a kernel built with CONFIG_PCI_P2PDMA=y" + kernels_with_p2pdma(m);
  switch (rules.p2pdma_basis) {
    case P2pdmaBasis::kConfig:
      config.evidence.push_back({rules.config_file, rules.p2pdma_enabled == Tri::kYes
                                                        ? "CONFIG_PCI_P2PDMA=y"
                                                        : "# CONFIG_PCI_P2PDMA is not set"});
      if (rules.p2pdma_enabled == Tri::kYes) {
        config.message = "CONFIG_PCI_P2PDMA=y";
        if (config.state != Provenance::kObserved) {
          config.level = Level::kInfo;
          config.message += rules.config_supplied ? " (supplied with --kernel-config)" : "";
        }
      } else {
        config.level = Level::kFail;
        config.message =
            "kernel built without CONFIG_PCI_P2PDMA: no P2P DMA at all (it cannot be enabled at run time)" +
            std::string(rules.config_supplied ? " (supplied with --kernel-config)" : "");
        config.fix = boot;
      }
      return config;
    case P2pdmaBasis::kBeforeP2pdma:
      config.level = Level::kFail;
      config.evidence.push_back(release_evidence(rules));
      config.message = "kernel " + rules.release + " is older than " + kFirstP2pdmaRelease.str() +
                       ", the first kernel with P2PDMA: no P2P DMA at all";
      config.fix = boot;
      return config;
    case P2pdmaBasis::kDistroTable:
      config.evidence.push_back(release_evidence(rules));
      config.evidence.push_back({"hipFile's distribution table", std::string(rules.distro->target) + ": " +
                                                                     rules.distro->kernel + ", CONFIG_PCI_P2PDMA " +
                                                                     (rules.distro->p2pdma ? "=y" : "not set")});
      config.message = "kernel " + rules.release + " is " + rules.distro->os + "'s series, whose default kernel " +
                       (rules.distro->p2pdma ? "has CONFIG_PCI_P2PDMA=y" : "is built without CONFIG_PCI_P2PDMA") +
                       " (hipFile's distribution table; this kernel's own config was not read)";
      if (rules.distro->p2pdma) {
        config.level = Level::kInfo;
      } else {
        config.level = Level::kFail;
        config.fix = boot;
      }
      return config;
    case P2pdmaBasis::kWhatIfAssumed:
      config.level = Level::kInfo;
      config.evidence.push_back(release_evidence(rules));
      config.message = "what-if: kernel " + rules.release +
                       " taken as built with CONFIG_PCI_P2PDMA=y (its release names no distribution kernel whose "
                       "config is known)";
      return config;
    case P2pdmaBasis::kUnknown: break;
  }
  config.level = Level::kUnknown;
  std::string tried;
  for (const auto& t : m.config.tried) tried += (tried.empty() ? "" : ", ") + t;
  config.message = "CONFIG_PCI_P2PDMA unknown: no kernel configuration found (looked in " + tried + ")";
  config.evidence.push_back({tried.empty() ? "/proc/config.gz" : m.config.tried.front(), "not found"});
  config.fix = m.from_dump ? "ask for the machine's /boot/config-" + m.kernel_release +
                                 " (or `zcat /proc/config.gz` there) and give it with --kernel-config FILE, or "
                                 "--kernel-config p2pdma=y|n if you know it"
                           : "make the kernel's config readable (it is usually /boot/config-" + m.kernel_release +
                                 "), load configs.ko for /proc/config.gz, or give --kernel-config FILE|p2pdma=y";
  if (std::string why = m.not_carried({"/proc/config.gz", "/boot"}); !why.empty() || rules.release.empty()) {
    if (!why.empty()) config.not_carried = why;
    config.message = "CONFIG_PCI_P2PDMA unknown: the kernel configuration is " +
                     (why.empty() ? std::string("unknown without the kernel release") : why);
    config.evidence.back() = {"/proc/config.gz", why.empty() ? "kernel release unknown" : why};
    config.fix =
        "give the machine's kernel config with --kernel-config FILE (ask for /boot/config-$(uname -r) or `zcat "
        "/proc/config.gz`), or --kernel-config p2pdma=y|n if you know it";
  }
  return config;
}

Finding known_bad_finding(const Machine& m, const KernelRules& rules) {
  Finding bad{"kernel.known_bad", Level::kPass, "", "kernel not on the known-bad list (RHEL 9.8 / 10.2)", {}, ""};
  bad.state = kernel_state(rules);
  if (rules.release.empty()) {
    bad.level = Level::kUnknown;
    bad.message = "known-bad kernels (RHEL 9.8 / 10.2) cannot be ruled out: the kernel release is unknown";
    bad.not_carried = m.not_carried({"/proc/sys/kernel/osrelease"});
    bad.evidence.push_back({"/proc/sys/kernel/osrelease", bad.not_carried.empty() ? "(missing)" : bad.not_carried});
    bad.fix = kReleaseFix;
    return bad;
  }
  bad.evidence.push_back(release_evidence(rules));
  if (rules.known_bad) {
    bad.level = Level::kFail;
    bad.message =
        std::string(rules.known_bad->name) + " kernel: P2PDMA there can corrupt memory; never use the fastpath";
    bad.fix = "boot another kernel (e.g. the RHEL 9.6 or 10.0 kernel) before using P2PDMA (source: " +
              std::string(rules.known_bad->source) + ")";
  } else if (const KnownBadKernel* base = rules.known_bad_base.row) {
    bad.level = Level::kUnknown;
    bad.message = "kernel " + rules.release + " is built on " + base->name + "'s kernel base (" + base->upstream + "-" +
                  std::to_string(base->first_build) + " and later builds) but is not one of " + base->name +
                  "'s own builds (" + base->release_marker +
                  "): a rebuild or a later build; cannot tell whether it carries the fix for " + base->name +
                  "'s P2PDMA memory corruption";
    bad.fix = "ask the kernel's vendor whether it carries the fix for " + std::string(base->name) +
              "'s P2PDMA memory corruption, or boot a kernel known to be good (e.g. the RHEL 9.6 or 10.0 kernel) "
              "before using P2PDMA (source: " +
              base->source + ")";
  } else if (bad.state != Provenance::kObserved) {
    bad.level = Level::kInfo;  // a release the input did not show cannot PASS
    bad.message = "kernel " + rules.release + " is not on the known-bad list (RHEL 9.8 / 10.2)";
  }
  return bad;
}

// A what-if must not hide the danger of the kernel the machine really runs.
std::optional<Finding> input_known_bad_finding(const KernelRules& rules) {
  if (!rules.what_if() || !rules.input_known_bad) return std::nullopt;
  Finding f{"kernel.input_known_bad",
            Level::kWarn,
            "",
            "the machine runs " + rules.input_release + ", a " + rules.input_known_bad->name +
                " kernel that can corrupt memory with P2PDMA; this answer is for kernel " + rules.release +
                " (--what-if-kernel), not the one it runs",
            {{"/proc/sys/kernel/osrelease", rules.input_release}},
            "boot " + rules.release + " (or another kernel not on the known-bad list) before using P2PDMA"};
  return f;
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

// CPU 0 and the kernel's CPU rule: the sentence follows classify_cpu(), the rule's own answer.
Finding cpu_finding(const Machine& m) {
  Finding cpu{"cpu.p2pdma_rule", Level::kInfo, "", "", {}, ""};
  const CpuInfo& c = m.cpu;
  const std::string give_cpu =
      std::string("give the CPU: --cpu ") + kCpuOptionValues + ", or --cpu FILE with the machine's /proc/cpuinfo";
  CpuClass cls = classify_cpu(c);
  if (cls == CpuClass::kNotX86) {
    cpu.evidence.push_back(
        {c.evidence_file, "a " + c.architecture + " CPU" + (c.model_name.empty() ? "" : " (" + c.model_name + ")")});
    cpu.message = "a " + c.architecture +
                  " CPU: the kernel's CPU rule (AMD Zen, x86 only) cannot pass; P2P through a host bridge needs an "
                  "allowlisted host bridge";
    return cpu;
  }
  if (cls == CpuClass::kUnknown && c.vendor_id.empty()) {
    cpu.level = Level::kUnknown;
    std::string not_carried = m.not_carried({"/proc/cpuinfo"});
    cpu.evidence.push_back({"/proc/cpuinfo", not_carried.empty() ? "not present" : not_carried});
    cpu.not_carried = not_carried;
    cpu.message = "CPU vendor unknown (" + (not_carried.empty() ? std::string("no /proc/cpuinfo") : not_carried) +
                  "): the AMD Zen rule cannot be applied";
    cpu.fix = give_cpu;
    return cpu;
  }
  cpu.evidence.push_back({c.evidence_file, "vendor_id " + c.vendor_id + ", cpu family " + std::to_string(c.family) +
                                               " (" + hex_family(c.family) + "), model name " + c.model_name});
  if (c.supplied) cpu.state = Provenance::kSupplied;
  switch (cls) {
    case CpuClass::kAmdZen:
      cpu.message =
          "AMD Zen or newer (family " + hex_family(c.family) + "): the kernel allows P2P through the root complex";
      break;
    case CpuClass::kAmdPreZen:
      cpu.level = Level::kWarn;
      cpu.message = "pre-Zen AMD (family " + hex_family(c.family) +
                    "): the kernel refuses P2P through the root complex; the hardware passes P2P writes but not reads";
      cpu.fix = "keep each GPU and NVMe under one PCIe switch (BUS_ADDR works on any CPU)";
      break;
    case CpuClass::kHygon:
      cpu.message =
          "Hygon CPU: not AMD to the kernel's check; P2P through a host bridge needs an allowlisted host bridge";
      break;
    case CpuClass::kUnknown:  // an AMD CPU whose family was not read
      cpu.level = Level::kUnknown;
      cpu.message = "AMD CPU of unknown family: the AMD Zen rule cannot be applied";
      cpu.fix = give_cpu;
      break;
    default: cpu.message = c.vendor_id + " CPU: P2P through a host bridge needs an allowlisted host bridge";
  }
  return cpu;
}

}  // namespace

namespace {

// "8086:09a2 (added upstream in 5.18)", "8086:29c0 (in no upstream table)".
std::string added_row_text(const KernelTableRow& row) {
  for (const AllowlistEntry& up : host_bridge_allowlist())
    if (up.vendor == row.vendor && up.device == std::optional<std::uint16_t>(row.device))
      return row_text(row) + (up.status == RowStatus::kPending ? " (pending upstream, in no release)"
                                                               : " (added upstream in " + up.since.str() + ")");
  return row_text(row) + " (in no upstream table)";
}

std::string own_table_note(const KernelRules& rules) {
  const KernelTable& t = rules.own_table;
  std::string upstream = allowlist_source_text(AllowlistSource::kUpstreamTable, rules.version);
  std::string note = "allowlist of the " + allowlist_source_text(rules.allowlist.source, rules.version) + " (" +
                     std::to_string(t.rows.size()) + " rows; " + t.how +
                     (t.build_id.empty() ? "" : "; build id " + t.build_id) + ")";
  if (rules.rows_added.empty() && rules.rows_missing.empty()) return note + ": the same rows as the " + upstream;
  std::vector<std::string> parts;
  for (const KernelTableRow& row : rules.rows_added) parts.push_back("has " + added_row_text(row));
  for (const KernelTableRow& row : rules.rows_missing) parts.push_back("lacks " + row_text(row));
  return note + "; differs from the " + upstream + ": this " + (rules.release.empty() ? "" : rules.release + " ") +
         "kernel " + join(parts, ", ");
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
      if (const VerifiedAllowlist* read = verified_allowlist_for(*rules.version))
        note = "allowlist as of " + rules.version->str() + " (" + read->note + ")";
      else
        note = "allowlist as of " + rules.version->str() + " (verified from source)";
      break;
    case TableBasis::kNewerRowsReported: {
      const VerifiedAllowlist* before = verified_allowlist_before(*rules.version);
      note = "allowlist as of " + rules.version->str() + " (rows newer than " + (before ? before->newest : "6.12") +
             " are from reports)";
      break;
    }
  }
  if (rules.allowlist.source != AllowlistSource::kUpstreamTable) return own_table_note(rules);
  if (rules.vendor_kernel)
    note +=
        "; vendor kernel: backports may add rows to upstream " +
        (rules.version ? rules.version->str() : std::string("?")) +
        "'s table, so a host bridge not on it is unknown, not refused, until the kernel's own table is read (" +
        (rules.what_if() ? "--what-if-kernel with its package" : "`sudo p2pcheck check`, or --what-if-kernel FILE") +
        ")";
  if (!rules.own_table.why_not.empty()) note += "; the kernel's own table was not read: " + rules.own_table.why_not;
  return note;
}

std::vector<Finding> check_kernel(const Machine& m, const KernelRules& rules) {
  std::vector<Finding> out;
  out.push_back(release_finding(m, rules));
  out.push_back(config_finding(m, rules));
  out.push_back(known_bad_finding(m, rules));
  if (auto input_bad = input_known_bad_finding(rules)) out.push_back(*input_bad);
  if (auto distro = distribution_finding(m)) out.push_back(*distro);
  out.push_back({"kernel.allowlist_table", Level::kInfo, "", allowlist_table_note(rules), {}, ""});
  out.push_back(cpu_finding(m));
  return out;
}

}  // namespace p2pcheck
