// What a scheduler places jobs by, taken from a host's result (host_summary.h): whether its
// GPU–NVMe pairs are allowed (all, some, none, or not known), whether every GPU has an allowed NVMe
// below its own PCIe switch, and whether the kernel is known to corrupt memory with P2PDMA. Two
// grammars of the same facts: Slurm node features (node_features/helpers: one name a line) and a
// Kubernetes node-feature-discovery local source file (name=value lines). UNKNOWN is its own
// value, never `true` or a feature a job can ask for.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "p2pcheck/fleet/host_summary.h"

namespace p2pcheck {

// all: check's PASS (every selected pair allowed, no counted check failing); partial: FAIL with
// some pair allowed; none: no pair allowed (refused, or no pair at all); unknown: check's UNKNOWN.
enum class P2pClass { kAll, kPartial, kNone, kUnknown };
const char* to_string(P2pClass c);  // "all", "partial", "none", "unknown"

enum class Tristate { kYes, kNo, kUnknown };
const char* to_string(Tristate t);  // "true", "false", "unknown"

struct NodeFeatures {
  Result result = Result::kNoPairs;
  P2pClass p2p = P2pClass::kNone;
  // Every GPU of the pairs has an allowed pair whose NVMe sits below the same PCIe switch
  // (locality same_switch); unknown when a GPU lacks one and has an undecided pair or a pair of
  // unknown locality.
  Tristate same_switch = Tristate::kNo;
  // kernel.known_bad FAIL (or, under --what-if-kernel, kernel.input_known_bad); unknown when
  // kernel.known_bad is UNKNOWN or the report has no such check.
  Tristate known_bad_kernel = Tristate::kUnknown;
  std::size_t allowed = 0, refused = 0, undecided = 0;
};
NodeFeatures node_features(const HostSummary& host);

// Slurm's feature names, one per line: exactly one of p2p_gpu_nvme (all), p2p_partial, p2p_none,
// p2p_unknown, then p2p_same_switch when it is true. Every name slurm_feature_names() lists.
std::string slurm_features_text(const NodeFeatures& f);
const std::vector<std::string>& slurm_feature_names();  // for helpers.conf's Feature= list

// node-feature-discovery's local source (features.d): a comment naming p2pcheck, `# +expiry-time=`
// with `expiry_rfc3339`, then `feature.node.kubernetes.io/p2pcheck.NAME=VALUE` lines whose values
// are all from a fixed vocabulary (no name from input reaches a label). Well under NFD's 64 kB.
std::string nfd_features_text(const NodeFeatures& f, const std::string& expiry_rfc3339);
inline constexpr const char* kNfdLabelPrefix = "feature.node.kubernetes.io/p2pcheck.";

// RFC 3339 UTC ("2026-12-07T10:00:00Z") of seconds since the epoch: NFD's expiry-time.
std::string rfc3339_utc(long long seconds);

}  // namespace p2pcheck
