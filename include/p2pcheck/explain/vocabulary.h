// The words every view uses for why a pair was decided, each an enum with one table of rows: the
// rule that decided (JSON `rule_id`), what blocks an allowed path (`blocked_by`), the cause fleet
// groups by, and the kind of fix (`fix.kind`). The tokens are docs/json.md's; nothing else spells them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "p2pcheck/rules/verdict.h"

namespace p2pcheck {

// Which rule decided the pair: DecidedBy, and for an undecided pair the fact that was missing.
enum class Rule : std::uint8_t {
  kCommonBridge,
  kCpuAllows,
  kAllowlistAllows,
  kHostBridgeRefused,
  kEitherWay,
  kNoP2pdmaConfig,
  kUnknownAcs,
  kUnknownCpu,
  kUnknownHostBridgeDevice,
  kUnknownP2pdmaConfig,
  kUnknownKernelTable,
  kUnknown,  // undecided for want of facts not named above
};

// What makes the overall verdict differ from the path's (the kernel itself, not the PCI path).
enum class Blocker : std::uint8_t { kKernelWithoutP2pdma, kKnownBadKernel, kP2pdmaConfigUnknown };

// Why a pair that is not supported is not, as fleet groups hosts by it: the kernel's own finding
// when the kernel blocks an allowed path, else the path's rule.
enum class Cause : std::uint8_t {
  kNone,  // supported
  kKernelConfigP2pdma,
  kKernelKnownBad,
  kAcsRedirect,
  kHostBridge,
  kNotSupported,
  kAcsUnknown,
  kPathUnknown,
};

// What to do about a pair.
enum class FixKind : std::uint8_t {
  kNone,  // nothing to do
  kDisableAcsRedir,
  kSameHostBridge,
  kSameSwitch,
  kKernelWithP2pdma,
  kOtherKernel,
  kSupplyFacts,
  kFullConfigSpace,
  kKernelConfig,
  kKernelTable,
};

struct RuleRow {
  Rule rule;
  const char* token;  // docs/json.md `rule_id`
};

struct BlockerRow {
  Blocker blocker;
  const char* token;  // docs/json.md `blocked_by[]`
  Verdict verdict;    // the overall verdict it leaves an allowed path with
  Cause cause;        // fleet's cause for a pair it blocks
};

struct CauseRow {
  Cause cause;
  const char* token;  // a pair cause ("pair.acs_redirect"), or the id of the kernel finding that names it
  bool finding;       // `token` is a finding's id: fleet's group `kind` is "finding"
  const char* title;  // fleet's words for the group, where no finding's message names it
  // The fix fleet shows for the group when it is the same on every machine: a fix kind's words, or
  // fleet's own; pair.acs_redirect's is each host's ACS list (kDisableAcsRedir, no words).
  FixKind fix;
  const char* fix_words;
};

struct FixRow {
  FixKind kind;
  const char* token;    // docs/json.md `fix.kind`
  const char* label;    // the host fix step's label in text ("placement"); the token where nullptr
  const char* words;    // the fix in words when they are the same for every pair; nullptr when made per pair
  const char* cost;     // what it costs, where that is a fact of its own; nullptr when none
  bool moves_the_pair;  // the devices it acts on are the pair's own GPU and NVMe
  bool kernel_wide;     // the kernel's own fix: printed once for every pair, a kernel finding's step
};

const RuleRow& row(Rule rule);
const BlockerRow& row(Blocker blocker);
const CauseRow& row(Cause cause);
const FixRow& row(FixKind kind);

// The rows in order: every value once (tests, readers of saved reports).
std::span<const RuleRow> rule_rows();
std::span<const BlockerRow> blocker_rows();
std::span<const CauseRow> cause_rows();
std::span<const FixRow> fix_rows();

inline const char* token(Rule rule) { return row(rule).token; }
inline const char* token(Blocker blocker) { return row(blocker).token; }
inline const char* token(Cause cause) { return row(cause).token; }  // "" for kNone
inline const char* token(FixKind kind) { return row(kind).token; }  // "" for kNone

// A saved report's token back to its value; nullopt for a token no row has.
std::optional<Blocker> blocker_named(std::string_view token);
std::optional<FixKind> fix_kind_named(std::string_view token);

}  // namespace p2pcheck
