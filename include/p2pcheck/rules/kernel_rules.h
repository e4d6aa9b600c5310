// Which kernel a verdict is for, and what that kernel is known to be: its allowlist table, whether it
// has P2PDMA at all (CONFIG_PCI_P2PDMA, the release it arrived in, hipFile's distribution table), and
// whether it is known to corrupt memory. The same judgement for the input's own kernel, a release the
// user supplied for an input that lacks one, and a what-if release.
#pragma once

#include <optional>
#include <string>

#include "p2pcheck/model/kernel_image.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/rules/p2pdma.h"
#include "p2pcheck/rules/policy.h"
#include "p2pcheck/rules/tri.h"

namespace p2pcheck {

// Which host bridge allowlist the verdict uses for a kernel release.
enum class TableBasis {
  kReleaseUnknown,     // no parseable release: the 6.1-6.12 table
  kOlderThanVerified,  // before 6.1: 6.1's algorithm with rows dated by release, history unverified
  kVerified,           // a release whose table was read from source (kVerifiedAllowlists)
  kNewerRowsReported,  // after a read table: rows added later come from reports
};

// Where the release the rules are for came from.
enum class KernelOrigin {
  kInput,     // the input's own /proc/sys/kernel/osrelease (or /proc/version)
  kSupplied,  // --kernel-release: the input has none
  kWhatIf,    // --what-if-kernel (alias --assume-kernel): another kernel than the one the input runs
  kUnknown,   // neither the input nor the user says
};
const char* to_string(KernelOrigin origin);  // "input", "supplied", "what_if", "unknown"

// Why the kernel has CONFIG_PCI_P2PDMA or not, or why that is unknown.
enum class P2pdmaBasis {
  kConfig,         // a kernel config: the input's (observed) or --kernel-config (supplied)
  kBeforeP2pdma,   // the release is older than the first kernel with P2PDMA (kFirstP2pdmaRelease)
  kDistroTable,    // the release names a row of hipFile's distribution table (its default kernel)
  kWhatIfAssumed,  // a what-if release that names no row: taken as built with CONFIG_PCI_P2PDMA=y
  kUnknown,        // no config, and the release does not settle it
};
const char* to_string(P2pdmaBasis basis);  // "config", "before_p2pdma", "distro_table", "what_if_assumed", "unknown"

// The kernel the verdict is evaluated for.
struct KernelRules {
  std::string release;                   // "6.8.0-142-generic"; empty when unknown
  std::optional<KernelVersion> version;  // parsed upstream version
  KernelOrigin origin = KernelOrigin::kUnknown;
  bool what_if() const { return origin == KernelOrigin::kWhatIf; }
  bool vendor_kernel = false;  // RHEL/SLES-style release: backports make the number unreliable
  // Which allowlist table was assumed, and how sure that is (checks/kernel.h says it in words).
  TableBasis table_basis = TableBasis::kReleaseUnknown;
  Tri p2pdma_enabled = Tri::kUnknown;  // CONFIG_PCI_P2PDMA
  P2pdmaBasis p2pdma_basis = P2pdmaBasis::kUnknown;
  bool config_supplied = false;          // kConfig from --kernel-config, not the input
  std::string config_file;               // kConfig: the file (or the option) that says so
  std::string config_not_carried;        // the source's phrase when its format holds no kernel config
  const DistroKernel* distro = nullptr;  // the distribution-table row the release names, if any
  const KnownBadKernel* known_bad = nullptr;
  // Not one of a known-bad release's own builds, but on its kernel base (a rebuild, a later build):
  // whether it carries the fix is unknown, so it is never judged safe.
  KnownBadIdentity known_bad_base;
  // A what-if's starting point: the kernel the input itself runs, and whether that one is known-bad.
  std::string input_release;
  const KnownBadKernel* input_known_bad = nullptr;
  // The allowlist the host check reads: the kernel's own rows where they were read, else upstream's.
  AllowlistInUse allowlist;
  KernelTable own_table;                     // what was read (or why not) of the judged kernel's table
  std::vector<KernelTableRow> rows_added;    // own rows upstream's table of `version` lacks
  std::vector<KernelTableRow> rows_missing;  // upstream rows of `version` the kernel lacks
};

// The rules for `machine`'s kernel (its own release, or one supplied where it had none: see
// model/supplied.h), or with `what_if_release` for that release instead.
// With `image` (--what-if-kernel FILE), its release, config and table are the what-if kernel's.
KernelRules kernel_rules_for(const Machine& machine, const std::optional<std::string>& what_if_release,
                             const KernelImage* image = nullptr);

}  // namespace p2pcheck
