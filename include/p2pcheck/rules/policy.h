// Policy tables as data, each row with where it comes from: the kernel's host-bridge allowlist by
// version, kernels known to corrupt memory with P2PDMA, and distribution kernels' P2PDMA support.
#pragma once

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/machine.h"

namespace p2pcheck {

// How sure we are that a row is in a kernel release.
enum class RowStatus {
  kVerified,  // read from the kernel source tree of that release
  kReported,  // from stable-review mails; not read from a source tree
  kPending,   // in a maintainer tree, in no release: never allows anything, only "would allow"
};

struct AllowlistEntry {
  std::uint16_t vendor;
  std::optional<std::uint16_t> device;  // nullopt = any device of the vendor
  bool req_same_host_bridge;            // REQ_SAME_HOST_BRIDGE in pci_p2pdma_whitelist[]
  KernelVersion since;                  // first release carrying the row (pending: none)
  RowStatus status;
  const char* name;
  const char* source;
};

// pci_p2pdma_whitelist[] across releases (drivers/pci/p2pdma.c; ../shared/docs/p2pdma-facts.md).
const std::vector<AllowlistEntry>& host_bridge_allowlist();

// The oldest release whose table we read ourselves; older kernels are evaluated with it, and say so.
inline constexpr KernelVersion kOldestVerifiedTable{6, 1, 0};
// The releases whose table was read from a source tree; between and after them, the rows newer than
// the last read table come from reports.
struct VerifiedAllowlist {
  KernelVersion first, last;  // the releases the reading covers
  const char* newest;         // the newest release read, as notes name it ("6.12", "7.3.4")
  const char* note;           // what the table note says ("same table as 6.1-6.12, verified from source")
  const char* source;
};
inline constexpr VerifiedAllowlist kVerifiedAllowlists[] = {
    {{6, 1, 0},
     {6, 12, 999},
     "6.12",
     "same table as 6.1-6.12, verified from source",
     "drivers/pci/p2pdma.c read in 6.1.192 and 6.12.117"},
    // 7.3.0-7.3.3 are not covered: the NVIDIA rows may have come in a stable update.
    {{7, 3, 4},
     {7, 3, 999},
     "7.3.4",
     "table read from 7.3.4's source",
     "drivers/pci/p2pdma.c :541-573 in Debian's linux-source-7.3 7.3.4-1~bpo13+1"},
};
// The reading that covers `version`, or nullptr.
const VerifiedAllowlist* verified_allowlist_for(const KernelVersion& version);
// The newest reading older than `version` ("6.12" or "7.3.4" in the table note), or nullptr.
const VerifiedAllowlist* verified_allowlist_before(const KernelVersion& version);

// Release strings of vendor kernels whose backports their version number does not show (RHEL's
// el8/el9/el10, SLES's "-default"): the table by version may miss rows they carry.
inline constexpr const char* kVendorKernelMarkers[] = {".el", "-default"};
bool is_vendor_kernel(const std::string& release);

// The errno a request gets when the kernel's P2P map type is NOT_SUPPORTED, by the first release
// of each behaviour: nvme turns the mapping's -EREMOTEIO into BLK_STS_TARGET (drivers/nvme/host/
// pci.c, its dma_map_sgtable() call: 6.1 :849, 6.12 :819); from 6.17 blk_dma_map_iter_start() sets BLK_STS_INVAL
// (blk-mq-dma.c 7.3 :193), so the I/O fails with EINVAL. Newest row first.
struct P2pRefusalErrno {
  int major, minor;  // the first release that behaves so
  int errno_value;
  const char* name;
  const char* source;
};
inline constexpr P2pRefusalErrno kP2pRefusalErrnos[] = {
    {6, 17, EINVAL, "EINVAL", "block/blk-mq-dma.c blk_dma_map_iter_start (7.3 :193): BLK_STS_INVAL"},
    {0, 0, EREMOTEIO, "EREMOTEIO", "drivers/nvme/host/pci.c nvme_map_data: -EREMOTEIO -> BLK_STS_TARGET"},
};
// The row for `release` (major, minor); the oldest row for an unknown release.
const P2pRefusalErrno& p2p_refusal_errno(int major, int minor);

// A kernel known to corrupt memory with P2PDMA, by what identifies its build: RHEL's kernel base
// (upstream version and Red Hat's build number: "5.14.0-687" is 9.8's) and the marker its own builds
// carry (".el9_8"). Rebuilds (CentOS Stream's ".el9", TOSS's ".1toss") and later builds of the same
// base keep the number but not the marker: whether they carry the fix cannot be told from the name.
struct KnownBadKernel {
  const char* upstream;        // "5.14.0"
  int first_build;             // 687: the base's build number; later builds of `upstream` come from it
  const char* release_marker;  // ".el9_8": followed by the end of the release, '.' or '+'
  const char* name;            // "RHEL 9.8"
  const char* source;
};
const std::vector<KnownBadKernel>& known_bad_kernels();

enum class KnownBadMatch {
  kNone,
  kRelease,   // the marker: one of the known-bad release's own builds
  kSameBase,  // RHEL's numbering at or after the base's build, without the marker: a rebuild or a later build
};
struct KnownBadIdentity {
  const KnownBadKernel* row = nullptr;
  KnownBadMatch match = KnownBadMatch::kNone;
  std::string base;  // kSameBase: what the release shares with the base ("5.14.0-687")
};
KnownBadIdentity identify_known_bad_kernel(const std::string& release);
// The row when the release is one of its builds (KnownBadMatch::kRelease); nullptr otherwise.
const KnownBadKernel* find_known_bad_kernel(const std::string& release);

// The first upstream release with P2PDMA: commit 52916982af48 ("PCI/P2PDMA: Support peer-to-peer
// memory") was merged for 4.20; before it the kernel has no CONFIG_PCI_P2PDMA to set.
inline constexpr KernelVersion kFirstP2pdmaRelease{4, 20, 0};

struct DistroKernel {
  const char* target;  // ROCm matrix name: "ubuntu-2404"
  const char* os;      // what was inspected: "Ubuntu 24.04.4 LTS"
  const char* kernel;  // "6.8.0-142-generic"
  bool p2pdma;         // CONFIG_PCI_P2PDMA=y in its default kernel
  // How a release string names this distribution's kernel series: it starts with `release_prefix`
  // and has `release_marker` followed by its end or a '.' ("4.18.0-" ... ".el8_10" ".x86_64").
  const char* release_prefix;
  const char* release_marker;
};
// hipFile's inspected table (seeds/hipfile-kernel-p2pdma-support.txt).
const std::vector<DistroKernel>& distro_kernels();
// How an os-release ID names its rows: "ubuntu" 24.04 -> "ubuntu-2404", "ol" 9.8 -> "oracle-9".
enum class VersionForm { kAsIs, kFirstDotRemoved, kMajorOnly };
struct OsReleaseFamily {
  const char* id;            // os-release ID
  const char* target_stem;   // the rows' target before the version: "ubuntu-"
  VersionForm version_form;  // how VERSION_ID becomes the rest of the target
};
const std::vector<OsReleaseFamily>& os_release_families();
// The row for an os-release ID/VERSION_ID, if the seed inspected that distribution.
const DistroKernel* find_distro_kernel(const OsRelease& os);
// The row whose kernel series a release string names ("5.14.0-570.12.1.el9_6.x86_64" -> rhel-9.6), if any.
const DistroKernel* find_distro_kernel_by_release(const std::string& release);

}  // namespace p2pcheck
