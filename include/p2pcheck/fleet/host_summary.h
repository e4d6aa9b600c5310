// One machine of a fleet as `p2pcheck fleet` keeps it: who it is, its result, its findings and
// pairs in brief, and a fingerprint of its PCI tree. Small on purpose, so a thousand hosts fit in
// a few MB: the whole CheckReport of each host is dropped as soon as this is taken from it.
//
// Captures and imports are summarised from their CheckReport's decisions; saved `check --json`
// files (schema_version 2, or 1 from an older p2pcheck) by a reader of the document. A test holds
// the two to the same summary on every fixture.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/report/host_fix.h"
#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

struct HostFinding {
  std::string id;
  Level level = Level::kInfo;
  std::string subject, message, fix;
  bool concerns = true;  // counts toward the host's result (concerns_selected_pairs)
  std::string cause;     // Finding::cause: which of the id's problems ("md", "dm-crypt"); "" when one
};

struct HostPair {
  std::string gpu, nvme, nvme_name;  // BDFs; the controller name or ""
  Verdict verdict = Verdict::kUnknown;
  Verdict to_gpu = Verdict::kUnknown, from_gpu = Verdict::kUnknown;
  std::string map_type;        // BUS_ADDR, THRU_HOST_BRIDGE, NOT_SUPPORTED, UNKNOWN
  Cause cause = Cause::kNone;  // explain/explanation.h pair_cause(): kNone for a supported pair
  // Kept only for pairs with a cause: the deciding rule in words, and the ports whose ACS redirect
  // sends the pair up (PairExplanation::acs_ports: pci=disable_acs_redir= fixes it).
  std::string rule;
  std::vector<Bdf> acs_ports;
  // How near the two sit (model/locality.h to_string: "same_switch", ...); "unknown" when not
  // known or not in a saved report (schema_version 1 has none).
  std::string locality = "unknown";
};

struct HostSummary {
  std::string host;    // host_name_for()
  std::string input;   // the input as found (a file or directory path)
  std::string format;  // capture, lspci, udev, hwloc, sosreport, tree, check --json
  std::optional<bool> redacted;
  Result result = Result::kNoPairs;
  FailPolicy fail_on;  // the --fail-on the report was judged under (check --json `fail_on`)
  std::string kernel, cpu;
  std::size_t gpus = 0, nvmes = 0;
  std::vector<HostFinding> findings;
  std::vector<HostPair> pairs;
  // topology_fingerprint() of its PCI tree; "" when the input has none (a saved check --json).
  std::string topology;
  std::size_t functions = 0;  // PCI functions in that tree
  // The report's host_fix; nullopt for a saved report written before check --json had one.
  std::optional<HostFix> fix;
};

// A host's pairs counted by verdict, as every fleet view shows them.
struct PairTally {
  std::size_t supported = 0, not_supported = 0, unknown = 0;
};
PairTally pair_tally(const HostSummary& host);

// What the host is called in the report: the machine's `identity.hostname` (check --json's, of a
// saved report or of this replay: /proc/sys/kernel/hostname, /etc/hostname, a sosreport's), else
// the capture manifest's `hostname`, else the input's file name without its extensions. A name is
// skipped when it is empty, "(none)" or localhost, or when its object says `redacted`: a redacted
// capture's name is a placeholder ("host-0001") every redacted capture shares, so the file name,
// which the collector chose (the Ansible inventory name), tells the hosts apart.
// "racks/host-07.tar.zst" -> "host-07"; "dumps/host-07/root" and ".../p2pcheck-capture" (an
// unpacked capture) -> "host-07", the folder they are in.
std::string file_stem(const std::string& input);

std::string host_name_for(const nlohmann::ordered_json* manifest, const nlohmann::ordered_json* identity,
                          const std::string& input);

// Reads a check --json document (schema p2pcheck.check) into a summary; `file` names it in
// errors. Throws Error for anything that is not what check --json writes.
HostSummary summarize_check_json(const nlohmann::ordered_json& check, const std::string& file);

// A host analysed here, from its report's decisions and findings, with the capture manifest (when
// the source has one) for its name and format, and the PCI tree's fingerprint.
HostSummary summarize_report(const CheckReport& report, const nlohmann::ordered_json* manifest,
                             const std::string& input);

}  // namespace p2pcheck
