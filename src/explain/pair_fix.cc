// One fix per pair, from the decision's structured reasons (rules/verdict.h), never from its words.
#include "p2pcheck/explain/pair_fix.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

namespace {

bool has_unknown(const PairDecision& d, UnknownFact fact) {
  return std::any_of(d.unknowns.begin(), d.unknowns.end(), [fact](const Unknown& u) { return u.fact == fact; });
}

// An unknown pair whose missing facts the source's format cannot carry: what to pass instead.
PairFix supply_facts_fix(const PairDecision& d, const KernelRules& rules, const Machine& machine) {
  std::vector<std::string> options, facts;
  std::string phrase;
  if (has_unknown(d, UnknownFact::kCpu)) {
    if (std::string why = machine.not_carried({"/proc/cpuinfo"}); !why.empty()) {
      options.push_back(std::string("--cpu ") + kCpuOptionValues);
      facts.push_back("the CPU");
      phrase = why;
    }
  }
  // The release the machine's own config belongs to: the input's, also under a what-if.
  const std::string& release = rules.what_if() ? rules.input_release : rules.release;
  std::string ask;
  if (has_unknown(d, UnknownFact::kP2pdmaConfig)) {
    std::string why = machine.not_carried({"/proc/config.gz", "/proc/sys/kernel/osrelease"});
    if (!why.empty() || release.empty()) {
      options.push_back("--kernel-config FILE|p2pdma=y");
      if (release.empty()) options.push_back("--kernel-release REL");
      // A dump that shows the release lacks only the config: ask for that file by name.
      facts.push_back(release.empty() ? "the kernel" : "the kernel's config");
      ask = release.empty() ? " (ask for `uname -r` and /boot/config-$(uname -r) or `zcat /proc/config.gz`)"
                            : " (ask for /boot/config-" + release + " or `zcat /proc/config.gz`)";
      if (phrase.empty()) phrase = why.empty() ? "unknown" : why;
    }
  }
  if (options.empty()) return {};
  PairFix fix;
  fix.kind = FixKind::kSupplyFacts;
  fix.text =
      join(facts, " and ") + " " + (facts.size() > 1 ? "are " : "is ") + phrase + ": give " + join(options, " ") + ask;
  if (options.size() == 1 && facts.front() == "the CPU")
    fix.text = "the CPU is " + phrase + ": give " + options.front();
  return fix;
}

// Refused at the host bridge: put the two below one host bridge, or under one switch.
PairFix placement_fix(const PairDecision& d) {
  PairFix fix;
  fix.devices = {d.walk.pair().gpu, d.walk.pair().nvme};
  if (!d.host.same_host_bridge && refused_across_host_bridges(d)) {
    fix.kind = FixKind::kSameHostBridge;
    fix.text = "put the GPU and the NVMe below the same host bridge (one root bus of one socket: " +
               d.host.bridges.front().host_bridge + " or " + d.host.bridges.back().host_bridge +
               "), or under one PCIe switch";
  } else {
    fix.kind = FixKind::kSameSwitch;
    fix.text = row(fix.kind).words;
  }
  return fix;
}

// Undecided on a source that could carry the facts: read what was unreadable (config space, the
// kernel's config). Empty when neither is missing.
PairFix read_more_fix(const PairDecision& d, const KernelRules& rules, const Machine& machine) {
  PairFix fix;
  if (has_unknown(d, UnknownFact::kAcsControl) || has_unknown(d, UnknownFact::kHostBridgeDevice)) {
    fix.kind = FixKind::kFullConfigSpace;
    for (const Unknown& u : d.unknowns)
      if (u.fact == UnknownFact::kAcsControl && u.function &&
          std::find(fix.devices.begin(), fix.devices.end(), u.function->bdf) == fix.devices.end())
        fix.devices.push_back(u.function->bdf);
    fix.text = machine.from_dump ? "ask the machine's owner for its full config space: `sudo lspci -xxxx` output, or a "
                                   "capture taken as root (`sudo p2pcheck capture -o host.tar.zst`)"
                                 : "read the full config space: run p2pcheck as root";
    return fix;
  }
  if (has_unknown(d, UnknownFact::kKernelTable)) {
    fix.kind = FixKind::kKernelTable;
    fix.text = kernel_table_fix_text(machine.from_dump, rules.what_if());
    return fix;
  }
  if (has_unknown(d, UnknownFact::kP2pdmaConfig)) {
    fix.kind = FixKind::kKernelConfig;
    fix.text = machine.from_dump ? "ask for the machine's /boot/config-" +
                                       (machine.kernel_release.empty() ? "$(uname -r)" : machine.kernel_release) +
                                       " (or `zcat /proc/config.gz` there) and give it with --kernel-config FILE, or "
                                       "--kernel-config p2pdma=y|n"
                                 : "make the kernel's config readable (/boot/config-<release> or /proc/config.gz), "
                                   "or give it with --kernel-config FILE|p2pdma=y";
  }
  return fix;
}

}  // namespace

PairFix pair_fix(const PairDecision& d, const KernelRules& rules, const Machine& machine, PortNames names) {
  PairFix fix;
  if (d.verdict == Verdict::kSupported) return fix;  // nothing to do
  if (d.known_bad || d.decided_by == DecidedBy::kNoP2pdmaConfig) {
    fix.kind = d.known_bad ? FixKind::kOtherKernel : FixKind::kKernelWithP2pdma;
    fix.text = row(fix.kind).words;
    return fix;
  }
  // Undecided for want of what the input cannot carry: first give it, then the path's own fix (if any).
  if (d.verdict == Verdict::kUnknown)
    if (PairFix supply = supply_facts_fix(d, rules, machine); !supply.empty()) return supply;
  if (std::vector<Bdf> ports = acs_redirect_ports(d); !ports.empty()) {
    fix.kind = FixKind::kDisableAcsRedir;
    if (names == PortNames::kListed) {
      fix.text = "boot with pci=disable_acs_redir= naming the pair's listed ports — costs " + fix.cost();
      return fix;
    }
    fix.devices = std::move(ports);
    fix.kernel_cmdline = disable_acs_redir_param(fix.devices);
    fix.text = "boot with " + fix.kernel_cmdline + " — costs " + fix.cost();
    return fix;
  }
  if (d.map_type == MapType::kNotSupported && d.host_checked && rules.p2pdma_enabled != Tri::kNo)
    return placement_fix(d);
  if (d.verdict != Verdict::kUnknown) return fix;
  return read_more_fix(d, rules, machine);
}

std::string disable_acs_redir_param(const std::vector<Bdf>& ports, const std::set<std::pair<unsigned, unsigned>>& ids) {
  std::string list;
  for (const Bdf& b : ports) list += (list.empty() ? "" : ";") + b.str();
  for (const auto& [vendor, device] : ids) {
    char id[24];
    std::snprintf(id, sizeof id, "pci:%04x:%04x", vendor, device);
    list += (list.empty() ? "" : ";") + std::string(id);
  }
  return "pci=disable_acs_redir=" + list;
}

}  // namespace p2pcheck
