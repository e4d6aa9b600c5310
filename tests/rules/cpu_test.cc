// classify_cpu(): the kernel's CPU rule (cpu_supports_p2pdma()) and p2pcheck's pre-Zen rule from one answer.
#include "p2pcheck/rules/cpu.h"

#include <gtest/gtest.h>

#include "p2pcheck/rules/policy.h"

namespace p2pcheck {
namespace {

CpuInfo cpu(const std::string& vendor, int family, const std::string& architecture = "x86") {
  CpuInfo c;
  c.vendor_id = vendor;
  c.family = family;
  c.architecture = architecture;
  return c;
}

TEST(ClassifyCpu, ZenStartsAtFamily0x17) {
  EXPECT_EQ(classify_cpu(cpu("AuthenticAMD", kFirstZenFamily)), CpuClass::kAmdZen);
  EXPECT_EQ(classify_cpu(cpu("AuthenticAMD", 0x19)), CpuClass::kAmdZen);
  EXPECT_EQ(classify_cpu(cpu("AuthenticAMD", 0x16)), CpuClass::kAmdPreZen);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("AuthenticAMD", 0x17)), Tri::kYes);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("AuthenticAMD", 0x15)), Tri::kNo);
  EXPECT_TRUE(cpu_is_pre_zen_amd(cpu("AuthenticAMD", 0x15)));
  EXPECT_FALSE(cpu_is_pre_zen_amd(cpu("AuthenticAMD", 0x17)));
}

TEST(ClassifyCpu, HygonAndIntelFailTheRule) {
  // X86_VENDOR_HYGON is not X86_VENDOR_AMD, whatever its family (0x18).
  EXPECT_EQ(classify_cpu(cpu("HygonGenuine", 0x18)), CpuClass::kHygon);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("HygonGenuine", 0x18)), Tri::kNo);
  EXPECT_EQ(classify_cpu(cpu("GenuineIntel", 6)), CpuClass::kOtherX86);
  EXPECT_EQ(cpu_supports_p2pdma(cpu("GenuineIntel", 6)), Tri::kNo);
  EXPECT_FALSE(cpu_is_pre_zen_amd(cpu("GenuineIntel", 6)));
}

TEST(ClassifyCpu, EveryOtherArchitectureCompilesTheRuleOut) {
  for (const char* arch : {"arm64", "powerpc", "riscv", "s390"}) {
    EXPECT_EQ(classify_cpu(cpu("", -1, arch)), CpuClass::kNotX86) << arch;
    EXPECT_EQ(cpu_supports_p2pdma(cpu("", -1, arch)), Tri::kNo) << arch;
  }
  // s390's cpuinfo has a vendor_id ("IBM/S390"): still not x86.
  EXPECT_EQ(classify_cpu(cpu("IBM/S390", -1, "s390")), CpuClass::kNotX86);
}

TEST(ClassifyCpu, WhatWasNotReadIsUnknown) {
  EXPECT_EQ(classify_cpu(CpuInfo{}), CpuClass::kUnknown);
  EXPECT_EQ(cpu_supports_p2pdma(CpuInfo{}), Tri::kUnknown);
  // An AMD CPU whose family line was missing: Zen or not is not known.
  EXPECT_EQ(classify_cpu(cpu("AuthenticAMD", -1)), CpuClass::kUnknown);
  EXPECT_FALSE(cpu_is_pre_zen_amd(cpu("AuthenticAMD", -1)));
  // A vendor without the architecture known (a udev modalias) is x86's vendor list.
  EXPECT_EQ(classify_cpu(cpu("AuthenticAMD", 0x19, "")), CpuClass::kAmdZen);
}

TEST(OsReleaseFamilies, EachIdNamesItsRowsTarget) {
  auto target = [](const std::string& id, const std::string& version) -> std::string {
    OsRelease os;
    os.id = id;
    os.version_id = version;
    const DistroKernel* row = find_distro_kernel(os);
    return row ? row->target : "(none)";
  };
  EXPECT_EQ(target("ubuntu", "24.04"), "ubuntu-2404");
  EXPECT_EQ(target("ol", "9.8"), "oracle-9");
  EXPECT_EQ(target("almalinux", "9.6"), "rhel-9.6");
  EXPECT_EQ(target("opensuse-leap", "16.0"), "sles-16.0");
  EXPECT_EQ(target("sled", "15.7"), "sles-15.7");
  EXPECT_EQ(target("debian", "12"), "debian-12");
  EXPECT_EQ(target("debian", "11"), "(none)");
  EXPECT_EQ(target("fedora", "41"), "(none)");
  for (const OsReleaseFamily& family : os_release_families()) {
    bool has_row = false;
    for (const DistroKernel& row : distro_kernels())
      has_row = has_row || std::string(row.target).rfind(family.target_stem, 0) == 0;
    EXPECT_TRUE(has_row) << family.id << " names no row of the distribution table";
  }
}

TEST(VendorKernel, ReleasesWithBackportsTheNumberDoesNotShow) {
  EXPECT_TRUE(is_vendor_kernel("5.14.0-570.58.1.el9_6.x86_64"));
  EXPECT_TRUE(is_vendor_kernel("6.4.0-150700.53.81-default"));
  EXPECT_FALSE(is_vendor_kernel("6.12.107+deb13-amd64"));
  EXPECT_FALSE(is_vendor_kernel("6.8.0-142-generic"));
}

TEST(P2pRefusalErrno, EremoteioUntil616ThenEinval) {
  EXPECT_STREQ(p2p_refusal_errno(6, 1).name, "EREMOTEIO");
  EXPECT_STREQ(p2p_refusal_errno(6, 16).name, "EREMOTEIO");
  EXPECT_STREQ(p2p_refusal_errno(6, 17).name, "EINVAL");
  EXPECT_EQ(p2p_refusal_errno(7, 3).errno_value, EINVAL);
  EXPECT_EQ(p2p_refusal_errno(0, 0).errno_value, EREMOTEIO);  // unknown release: the older behaviour
}

}  // namespace
}  // namespace p2pcheck
