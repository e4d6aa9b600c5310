// The kernel's CPU rule, cpu_supports_p2pdma() (drivers/pci/p2pdma.c, 6.1 :286, 6.12 :413):
//   #ifdef CONFIG_X86
//     struct cpuinfo_x86 *c = &cpu_data(0);
//     if (c->x86_vendor == X86_VENDOR_AMD && c->x86 >= 0x17) return true;   /* Zen and later */
//   #endif
//   return false;
// and the one thing p2pcheck adds about CPUs: pre-Zen AMD root complexes pass P2P writes, drop reads.
#pragma once

#include "p2pcheck/model/machine.h"
#include "p2pcheck/rules/tri.h"

namespace p2pcheck {

// The first family the kernel counts as Zen (0x17: Zen, Zen+, Zen 2; 0x19 Zen 3/4; 0x1a Zen 5).
inline constexpr int kFirstZenFamily = 0x17;

// Which side of the rule CPU 0 is on; every CPU sentence and the rule itself read this.
enum class CpuClass {
  kUnknown,    // no /proc/cpuinfo, or its vendor or family unread
  kNotX86,     // another architecture: the rule is compiled out (#ifdef CONFIG_X86)
  kAmdZen,     // AMD, family >= 0x17: the rule passes
  kAmdPreZen,  // AMD before Zen: the rule fails; the hardware passes writes, drops reads
  kHygon,      // X86_VENDOR_HYGON: a vendor of its own to the kernel, so the rule fails
  kOtherX86,   // Intel and any other x86 vendor: the rule fails
};
CpuClass classify_cpu(const CpuInfo& cpu);

// cpu_supports_p2pdma(), three-valued: unknown where CPU 0 was not read.
Tri cpu_supports_p2pdma(const CpuInfo& cpu);

// p2pcheck's rule: an AMD root complex before Zen (seed debian-bug-1015871).
bool cpu_is_pre_zen_amd(const CpuInfo& cpu);

}  // namespace p2pcheck
