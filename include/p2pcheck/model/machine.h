// Facts about the machine outside the PCI tree: CPU, kernel, distribution, configuration, modules,
// mounts. All read through the source, so a replay describes the captured machine, never the
// machine running the analysis (no uname(), no CPUID).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "p2pcheck/model/kernel_table.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

// The values of --cpu (import/dump.cc's cpuinfo_for_option), as every message that asks for it spells them.
inline constexpr const char* kCpuOptionValues = "amd-zen|amd-pre-zen|intel|hygon|power|arm64";

struct CpuInfo {
  std::string vendor_id;  // "AuthenticAMD", "GenuineIntel", "HygonGenuine"; empty when unknown
  int family = -1;        // decimal, as /proc/cpuinfo prints it ("cpu family : 25" = 0x19)
  int model = -1;
  std::string model_name;
  bool hypervisor = false;  // the `hypervisor` cpuinfo flag: we are a guest
  bool flags_read = false;  // a flags line was there (--cpu's assumed CPU has none: no flag is then unknown)
  // "x86", "powerpc", "arm64", "riscv", "s390" from the shape of /proc/cpuinfo (each architecture
  // prints its own keys); empty when unknown. The kernel's CPU rule exists only on x86.
  std::string architecture;
  std::string evidence_file;  // "/proc/cpuinfo" when read; the option when supplied ("--cpu amd-zen")
  bool supplied = false;      // given by the user (--cpu), not read from the input
};

struct KernelConfigValue {
  std::string file;                  // where it came from: /boot/config-<release>, /proc/config.gz, ...
  std::optional<std::string> value;  // "y", "m", a string; nullopt = "is not set" or absent
};

struct KernelConfig {
  std::string file;                            // the config file found; empty when none could be read
  std::map<std::string, std::string> options;  // CONFIG_X -> value for set options
  std::vector<std::string> tried;              // every place looked at, in order
  bool supplied = false;                       // given by the user (--kernel-config): `file` is the option
  bool known() const { return !file.empty(); }
  // nullopt when the config is unknown; "n" when not set.
  std::optional<std::string> get(const std::string& name) const;
};

struct OsRelease {
  std::string id, id_like, version_id, pretty_name;
  std::string file;  // /etc/os-release or /usr/lib/os-release
};

struct Mount {
  std::string device, mountpoint, fstype, options;
  // One line of the mount table: a bind mount or an overmount is another line, another Mount.
  auto operator<=>(const Mount&) const = default;
};

// Who the machine is, for reports and fleets (`identity` in check/topo JSON). Each value is nullopt
// when it could not be read; `*_why` then says why ("needs root", "not in this lspci output").
struct MachineIdentity {
  std::optional<std::string> hostname;     // /proc/sys/kernel/hostname
  std::optional<std::string> dmi_vendor;   // /sys/class/dmi/id/sys_vendor
  std::optional<std::string> dmi_product;  // /sys/class/dmi/id/product_name
  std::optional<std::string> dmi_serial;   // /sys/class/dmi/id/product_serial (root only)
  std::map<std::string, std::string> why;  // "hostname", "dmi_vendor", ... -> why it is null
  bool redacted = false;  // the values are capture --redact placeholders (the CLI knows from the manifest)
  // The reads as made, for checks that cite them (gpu.virtualization): path -> what was read.
  std::map<std::string, FileRead> reads;
};

struct Machine {
  CpuInfo cpu;
  MachineIdentity identity;
  std::string kernel_release;            // /proc/sys/kernel/osrelease
  bool kernel_release_supplied = false;  // given with --kernel-release: the input does not say
  std::string kernel_version;            // /proc/version
  std::string cmdline;                   // /proc/cmdline
  OsRelease os;
  KernelConfig config;
  // The kernel's own pci_p2pdma_whitelist[] (kernel_table.h): read from the running kernel, or
  // stored by a capture; origin kNone (with why_not) otherwise.
  KernelTable kernel_table;
  std::map<std::string, std::string> modules;  // /proc/modules: name -> state ("Live")
  bool modules_known = false;
  std::vector<Mount> mounts;  // /proc/mounts (or /proc/self/mounts)
  bool mounts_known = false;
  // Files of the above that could not be read, and why: "/proc/cpuinfo" -> "not in this lspci
  // output" (a format that cannot carry it), "needs root", "read failed (...)". Absent files are
  // not listed: their absence is a fact.
  std::map<std::string, std::string> unread;
  // Read from a capture, tree or dump, not this machine: a fix then says what to ask the machine's
  // owner for, not what to do here.
  bool from_dump = false;
  // The reason a fact is unknown because the source's format cannot carry it, or "" (any of `paths`).
  std::string not_carried(std::initializer_list<const char*> paths) const;
};

// Why a read gave nothing, for evidence: "not present", "needs root (...)", "not in this lspci output".
std::string why_unread(const FileRead& read);

// /proc/cpuinfo's CPU 0 (vendor, family, model, architecture); also --cpu's file.
CpuInfo parse_cpuinfo(std::string_view text);
// A kernel config's text (plain, or gzip as /proc/config.gz); `file` names it in errors and evidence.
KernelConfig parse_kernel_config(std::string bytes, const std::string& file);

// Everything above, the identity included.
Machine read_machine(Source& source);
// Host name and DMI vendor, product and serial (topo reads only these beside the PCI tree).
MachineIdentity read_identity(Source& source);

// Kernel command-line parameters in order: "pci=disable_acs_redir=..." -> {"pci", "disable_acs_redir=..."},
// as views into `cmdline`.
std::vector<std::pair<std::string_view, std::string_view>> parse_cmdline(std::string_view cmdline);

// How much of /proc/cpuinfo is read: CPU 0's block, with room to spare.
inline constexpr std::size_t kCpu0BlockBytes = 64 * 1024;

// The kernel release: utsname's field is __NEW_UTS_LEN characters (include/uapi/linux/utsname.h).
inline constexpr std::size_t kMaxReleaseBytes = 64;

// /proc/cmdline is saved_command_line (init/main.c): the boot command line, at most
// COMMAND_LINE_SIZE (s390's CONFIG_COMMAND_LINE_SIZE allows 1 MiB, the largest), plus bootconfig's
// kernel and init parameters (each under XBC_DATA_MAX, 32 KiB) and " -- ". A dump's that is longer
// was not made by a kernel.
inline constexpr std::size_t kMaxCmdlineBytes = (1u << 20) + (1u << 16) + 8;

// "6.8.0-142-generic" -> {6, 8, 0}; nullopt for text that does not start with a version.
struct KernelVersion {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const KernelVersion&) const = default;
  std::string str() const;
};
std::optional<KernelVersion> parse_kernel_version(const std::string& release);

}  // namespace p2pcheck
