// Slurm's HealthCheckProgram mode (`p2pcheck slurm health --baseline FILE`): drain the node with a
// reason a person can read when its result got worse than the baseline an admin accepted (a
// saved check --json; drift.h), resume it when that is fixed, and never act on an input it could
// not read without saying so in the reason. Only nodes this mode drained (their reason starts
// with "p2pcheck:") are ever resumed: an admin's own drain is left alone. The decision is here;
// the CLI runs scontrol (argv, never a shell).
#pragma once

#include <string>
#include <vector>

#include "p2pcheck/fleet/drift.h"

namespace p2pcheck {

inline constexpr const char* kDrainReasonPrefix = "p2pcheck: ";
inline constexpr std::size_t kDrainReasonLimit = 250;  // bytes of the reason, prefix included

enum class HealthAction { kNothing, kDrain, kResume };
const char* to_string(HealthAction a);  // "nothing", "drain", "resume"

struct HealthDecision {
  HealthAction action = HealthAction::kNothing;
  std::string reason;   // kDrain: "p2pcheck: ACS redirect on 0000:03:09.0 refuses pairs (not at the baseline); ..."
  std::string message;  // what the mode prints: what it found and what it did
  bool unreadable = false;
};

struct HealthInput {
  const DriftReport* drift = nullptr;  // nullptr when an input could not be read
  std::string unreadable;              // then: which input and why ("baseline /etc/...: not valid JSON")
  bool drained_by_p2pcheck = false;    // the node is drained with a reason starting "p2pcheck:"
  bool drain_on_unreadable = true;     // --unreadable drain (the default) or keep
};
HealthDecision health_decision(const HealthInput& in);

// Whether `scontrol show node -o NAME`'s line shows the node drained (or draining) by this mode.
bool drained_by_p2pcheck(const std::string& scontrol_show_node);

// scontrol's argv for the two actions; the reason is made printable and bounded first.
std::vector<std::string> scontrol_drain(const std::string& scontrol, const std::string& node,
                                        const std::string& reason);
std::vector<std::string> scontrol_resume(const std::string& scontrol, const std::string& node);

}  // namespace p2pcheck
