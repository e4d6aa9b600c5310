#include "p2pcheck/rules/policy.h"

#include <iterator>
#include <optional>
#include <string>

namespace p2pcheck {

const std::vector<AllowlistEntry>& host_bridge_allowlist() {
  static const char* kSrc61 = "drivers/pci/p2pdma.c pci_p2pdma_whitelist[], read in 6.1.192 and 6.12.117";
  // Both read in drivers/pci/p2pdma.c :541-573 of Debian's linux-source-7.3 (7.3.4-1~bpo13+1).
  static const char* kSrc71 = "stable-review mails for 7.1; also in 7.3.4's source";
  static const char* kSrcNv = "read in 7.3.4's source; earlier 7.3.y not read";
  static const char* kSrcZx = "PCI maintainer tree after 7.3-rc1; in no release";
  static const std::vector<AllowlistEntry> table = {
      // Rows present before 6.1 are dated by the first P2PDMA kernel (4.20): history not verified.
      {0x8086, 0x3c00, true, {4, 20, 0}, RowStatus::kVerified, "Intel Xeon E5 / Core i7 (Sandy Bridge-EP)", kSrc61},
      {0x8086, 0x3c01, true, {4, 20, 0}, RowStatus::kVerified, "Intel Xeon E5 / Core i7 (Sandy Bridge-EP)", kSrc61},
      {0x8086, 0x2f00, true, {4, 20, 0}, RowStatus::kVerified, "Intel Xeon E5 v3 / E7 v3 (Haswell-EP)", kSrc61},
      {0x8086, 0x2f01, true, {4, 20, 0}, RowStatus::kVerified, "Intel Xeon E5 v3 / E7 v3 (Haswell-EP)", kSrc61},
      {0x8086, 0x2030, false, {4, 20, 0}, RowStatus::kVerified, "Intel Skylake-SP root port", kSrc61},
      {0x8086, 0x2031, false, {4, 20, 0}, RowStatus::kVerified, "Intel Skylake-SP root port", kSrc61},
      {0x8086, 0x2032, false, {4, 20, 0}, RowStatus::kVerified, "Intel Skylake-SP root port", kSrc61},
      {0x8086, 0x2033, false, {4, 20, 0}, RowStatus::kVerified, "Intel Skylake-SP root port", kSrc61},
      {0x8086, 0x2020, false, {4, 20, 0}, RowStatus::kVerified, "Intel Skylake-SP DMI3 host bridge", kSrc61},
      {0x8086,
       0x09a2,
       false,
       {5, 18, 0},
       RowStatus::kVerified,
       "Intel 3rd Gen Xeon Scalable (also Sapphire/Emerald Rapids 00.0)",
       "commit feaea1fe8b36 (5.18); in 6.1 and 6.12"},
      {0x8086, 0x0b25, false, {7, 1, 0}, RowStatus::kReported, "Intel DSA", kSrc71},
      {0x8086, 0x0cfe, false, {7, 1, 0}, RowStatus::kReported, "Intel IAA/QAT", kSrc71},
      {0x8086, 0x11fb, false, {7, 1, 0}, RowStatus::kReported, "Intel DSA/IAA/QAT", kSrc71},
      {0x8086, 0x1212, false, {7, 1, 0}, RowStatus::kReported, "Intel DSA/IAA/QAT", kSrc71},
      {0x8086, 0x1216, false, {7, 1, 0}, RowStatus::kReported, "Intel DSA/IAA/QAT", kSrc71},
      {0x8086, 0x4940, false, {7, 1, 0}, RowStatus::kReported, "Intel QAT", kSrc71},
      {0x8086, 0x4942, false, {7, 1, 0}, RowStatus::kReported, "Intel QAT", kSrc71},
      {0x8086, 0x4944, false, {7, 1, 0}, RowStatus::kReported, "Intel QAT", kSrc71},
      {0x8086, 0x4946, false, {7, 1, 0}, RowStatus::kReported, "Intel QAT", kSrc71},
      {0x8086, 0x4948, false, {7, 1, 0}, RowStatus::kReported, "Intel QAT", kSrc71},
      {0x1ae0, std::nullopt, false, {7, 1, 0}, RowStatus::kReported, "Google (any device)", kSrc71},
      {0x10de, 0x2f95, false, {7, 3, 4}, RowStatus::kVerified, "NVIDIA host bridge", kSrcNv},
      {0x10de, 0x2f96, false, {7, 3, 4}, RowStatus::kVerified, "NVIDIA host bridge", kSrcNv},
      {0x10de, 0x2f97, false, {7, 3, 4}, RowStatus::kVerified, "NVIDIA host bridge", kSrcNv},
      {0x10de, 0x2f98, false, {7, 3, 4}, RowStatus::kVerified, "NVIDIA host bridge", kSrcNv},
      {0x1d17, 0x1003, true, {}, RowStatus::kPending, "Zhaoxin host bridge", kSrcZx},
      {0x1d17, 0x1005, true, {}, RowStatus::kPending, "Zhaoxin host bridge", kSrcZx},
      {0x1d17, 0x1006, true, {}, RowStatus::kPending, "Zhaoxin host bridge", kSrcZx},
      {0x1d17, 0x1007, true, {}, RowStatus::kPending, "Zhaoxin host bridge", kSrcZx},
      {0x1d17, 0x1008, false, {}, RowStatus::kPending, "Zhaoxin host bridge", kSrcZx},
  };
  return table;
}

const VerifiedAllowlist* verified_allowlist_for(const KernelVersion& version) {
  for (const VerifiedAllowlist& table : kVerifiedAllowlists)
    if (table.first <= version && version <= table.last) return &table;
  return nullptr;
}

const VerifiedAllowlist* verified_allowlist_before(const KernelVersion& version) {
  const VerifiedAllowlist* before = nullptr;
  for (const VerifiedAllowlist& table : kVerifiedAllowlists)
    if (table.last < version) before = &table;
  return before;
}

const std::vector<KnownBadKernel>& known_bad_kernels() {
  static const char* kSrc =
      "the hipFile documentation, \"hipFile kernel P2PDMA support\" (its Linux distribution P2PDMA support table)";
  static const std::vector<KnownBadKernel> table = {
      {"5.14.0", 687, ".el9_8", "RHEL 9.8", kSrc},
      {"6.12.0", 211, ".el10_2", "RHEL 10.2", kSrc},
  };
  return table;
}

namespace {

// `marker` in `release`, followed by its end, '.' (the architecture) or '+' (a variant: +debug).
bool has_marker(const std::string& release, const std::string& marker) {
  for (std::size_t at = release.find(marker); at != std::string::npos; at = release.find(marker, at + 1)) {
    std::size_t end = at + marker.size();
    if (end == release.size() || release[end] == '.' || release[end] == '+') return true;
  }
  return false;
}

// RHEL's numbering: "UPSTREAM-BUILD" then nothing, or '.'/'+' and more without a '-' (SUSE's
// "-default" and Ubuntu's "-generic" flavours have one) and without Oracle's own kernel ("uek").
std::optional<int> rhel_build(const std::string& release, const std::string& upstream) {
  const std::string prefix = upstream + "-";
  if (release.rfind(prefix, 0) != 0) return std::nullopt;
  std::size_t at = prefix.size(), end = at;
  while (end < release.size() && end - at < 6 && release[end] >= '0' && release[end] <= '9') ++end;
  if (end == at) return std::nullopt;
  const std::string rest = release.substr(end);
  if (!rest.empty() && rest[0] != '.' && rest[0] != '+') return std::nullopt;
  if (rest.find('-') != std::string::npos || rest.find("uek") != std::string::npos) return std::nullopt;
  return std::stoi(release.substr(at, end - at));
}

}  // namespace

KnownBadIdentity identify_known_bad_kernel(const std::string& release) {
  for (const auto& bad : known_bad_kernels())
    if (has_marker(release, bad.release_marker)) return {&bad, KnownBadMatch::kRelease, ""};
  for (const auto& bad : known_bad_kernels())
    if (auto build = rhel_build(release, bad.upstream); build && *build >= bad.first_build)
      return {&bad, KnownBadMatch::kSameBase, std::string(bad.upstream) + "-" + std::to_string(*build)};
  return {};
}

const KnownBadKernel* find_known_bad_kernel(const std::string& release) {
  KnownBadIdentity id = identify_known_bad_kernel(release);
  return id.match == KnownBadMatch::kRelease ? id.row : nullptr;
}

const std::vector<DistroKernel>& distro_kernels() {
  // seeds/hipfile-kernel-p2pdma-support.txt: default kernels inspected by the hipFile team.
  static const std::vector<DistroKernel> table = {
      {"debian-12", "Debian GNU/Linux 12 (bookworm)", "6.1.0-53-amd64", false, "6.1.0-", "-amd64"},
      {"debian-13", "Debian GNU/Linux 13 (trixie)", "6.12.107+deb13-amd64", false, "6.12.", "+deb13-amd64"},
      {"oracle-10", "Oracle Linux Server 10.1", "6.12.0-109.67.6.el10uek.x86_64", false, "6.12.0-", ".el10uek"},
      {"oracle-9", "Oracle Linux Server 9.8", "6.12.0-1.23.3.2.el9uek.x86_64", false, "6.12.0-", ".el9uek"},
      {"rhel-10.0", "Rocky Linux 10.0", "6.12.0-55.41.1.el10_0.x86_64", true, "6.12.0-", ".el10_0"},
      {"rhel-10.2", "Rocky Linux 10.2", "6.12.0-211.58.1.el10_2.x86_64", true, "6.12.0-", ".el10_2"},
      {"rhel-8.10", "Rocky Linux 8.10", "4.18.0-553.166.1.el8_10.x86_64", false, "4.18.0-", ".el8_10"},
      {"rhel-9.4", "Rocky Linux 9.4", "5.14.0-427.42.1.el9_4.x86_64", true, "5.14.0-", ".el9_4"},
      {"rhel-9.6", "Rocky Linux 9.6", "5.14.0-570.58.1.el9_6.x86_64", true, "5.14.0-", ".el9_6"},
      {"rhel-9.8", "Rocky Linux 9.8", "5.14.0-687.49.1.el9_8.x86_64", true, "5.14.0-", ".el9_8"},
      {"sles-15.7", "SLES 15 SP7", "6.4.0-150700.53.81-default", true, "6.4.0-150700.", "-default"},
      {"sles-16.0", "openSUSE Leap 16.0", "6.12.0-160000.37-default", true, "6.12.0-160000.", "-default"},
      {"ubuntu-2204", "Ubuntu 22.04.5 LTS", "5.15.0-194-generic", false, "5.15.0-", "-generic"},
      {"ubuntu-2204-hwe", "Ubuntu 22.04.5 LTS (HWE)", "6.8.0-138-generic", true, "6.8.0-", "-generic"},
      {"ubuntu-2404", "Ubuntu 24.04.4 LTS", "6.8.0-142-generic", true, "6.8.0-", "-generic"},
      {"ubuntu-2404-hwe", "Ubuntu 24.04.4 LTS (HWE)", "7.0.0-34-generic", true, "7.0.0-", "-generic"},
      {"ubuntu-2604", "Ubuntu 26.04 LTS", "7.0.0-34-generic", true, "7.0.0-", "-generic"},
  };
  return table;
}

const std::vector<OsReleaseFamily>& os_release_families() {
  // os-release(5) IDs of the distributions in distro_kernels(); rebuilds share their upstream's rows.
  static const std::vector<OsReleaseFamily> table = {
      {"debian", "debian-", VersionForm::kAsIs},  {"ubuntu", "ubuntu-", VersionForm::kFirstDotRemoved},
      {"rhel", "rhel-", VersionForm::kAsIs},      {"rocky", "rhel-", VersionForm::kAsIs},
      {"almalinux", "rhel-", VersionForm::kAsIs}, {"centos", "rhel-", VersionForm::kAsIs},
      {"ol", "oracle-", VersionForm::kMajorOnly}, {"sles", "sles-", VersionForm::kAsIs},
      {"sled", "sles-", VersionForm::kAsIs},      {"opensuse-leap", "sles-", VersionForm::kAsIs},
  };
  return table;
}

const DistroKernel* find_distro_kernel(const OsRelease& os) {
  for (const OsReleaseFamily& family : os_release_families()) {
    if (os.id != family.id) continue;
    std::string version = os.version_id;
    std::size_t dot = version.find('.');
    if (family.version_form == VersionForm::kFirstDotRemoved && dot != std::string::npos) version.erase(dot, 1);
    if (family.version_form == VersionForm::kMajorOnly) version = version.substr(0, dot);
    std::string target = family.target_stem + version;
    for (const auto& row : distro_kernels())
      if (target == row.target) return &row;
    return nullptr;
  }
  return nullptr;
}

const P2pRefusalErrno& p2p_refusal_errno(int major, int minor) {
  for (const P2pRefusalErrno& row : kP2pRefusalErrnos)
    if (major > row.major || (major == row.major && minor >= row.minor)) return row;
  return kP2pRefusalErrnos[std::size(kP2pRefusalErrnos) - 1];
}

bool is_vendor_kernel(const std::string& release) {
  for (const char* marker : kVendorKernelMarkers)
    if (release.find(marker) != std::string::npos) return true;
  return false;
}

const DistroKernel* find_distro_kernel_by_release(const std::string& release) {
  for (const auto& row : distro_kernels()) {
    if (release.rfind(row.release_prefix, 0) != 0) continue;
    const std::string marker = row.release_marker;
    for (std::size_t at = release.find(marker); at != std::string::npos; at = release.find(marker, at + 1)) {
      std::size_t end = at + marker.size();
      if (end == release.size() || release[end] == '.') return &row;
    }
  }
  return nullptr;
}

}  // namespace p2pcheck
