// The kernel's CPU rule and p2pcheck's pre-Zen one, from one classification of CPU 0.
#include "p2pcheck/rules/cpu.h"

namespace p2pcheck {

CpuClass classify_cpu(const CpuInfo& cpu) {
  // parse_cpuinfo() tells the architecture from the keys each one prints; "" is unknown, not x86.
  if (!cpu.architecture.empty() && cpu.architecture != "x86") return CpuClass::kNotX86;
  if (cpu.vendor_id == "HygonGenuine") return CpuClass::kHygon;
  if (cpu.vendor_id.empty()) return CpuClass::kUnknown;
  if (cpu.vendor_id != "AuthenticAMD") return CpuClass::kOtherX86;
  if (cpu.family < 0) return CpuClass::kUnknown;
  return cpu.family >= kFirstZenFamily ? CpuClass::kAmdZen : CpuClass::kAmdPreZen;
}

Tri cpu_supports_p2pdma(const CpuInfo& cpu) {
  switch (classify_cpu(cpu)) {
    case CpuClass::kUnknown: return Tri::kUnknown;
    case CpuClass::kAmdZen: return Tri::kYes;
    default: return Tri::kNo;
  }
}

bool cpu_is_pre_zen_amd(const CpuInfo& cpu) { return classify_cpu(cpu) == CpuClass::kAmdPreZen; }

}  // namespace p2pcheck
