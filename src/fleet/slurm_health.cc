// The Slurm health check's decision (slurm_health.h).
#include "p2pcheck/fleet/slurm_health.h"

#include "p2pcheck/source/printable.h"

namespace p2pcheck {

namespace {

// A drain reason: one printable line, at most kDrainReasonLimit bytes, never cut inside a character.
std::string bounded_reason(const std::string& text) {
  std::string line = printable(text);
  if (line.size() <= kDrainReasonLimit) return line;
  return std::string(utf8_prefix(line, kDrainReasonLimit - 3)) + "...";
}

}  // namespace

const char* to_string(HealthAction a) {
  switch (a) {
    case HealthAction::kNothing: return "nothing";
    case HealthAction::kDrain: return "drain";
    case HealthAction::kResume: return "resume";
  }
  return "nothing";
}

HealthDecision health_decision(const HealthInput& in) {
  HealthDecision d;
  if (!in.drift) {
    d.unreadable = true;
    std::string what = "cannot judge the node: " + in.unreadable;
    if (in.drain_on_unreadable) {
      d.action = HealthAction::kDrain;
      d.reason = bounded_reason(kDrainReasonPrefix + what);
      d.message = "UNREADABLE — " + what + "; draining the node (reason: " + d.reason + ")";
    } else {
      d.message = "UNREADABLE — " + what + "; the node is left as it is (--unreadable keep)";
    }
    return d;
  }
  const DriftReport& drift = *in.drift;
  if (drift.overall == Change::kWorse) {
    d.action = HealthAction::kDrain;
    d.reason = bounded_reason(kDrainReasonPrefix + worse_summary(drift, kDrainReasonLimit));
    d.message = std::string("WORSE than the baseline (result ") + to_string(drift.before) + " -> " +
                to_string(drift.after) + "); draining the node (reason: " + d.reason + ")";
    return d;
  }
  std::string state = std::string("no worse than the baseline (result ") + to_string(drift.before) + " -> " +
                      to_string(drift.after) + ")";
  if (in.drained_by_p2pcheck) {
    d.action = HealthAction::kResume;
    d.message = "OK — " + state + "; resuming the node p2pcheck drained";
  } else {
    d.message = "OK — " + state;
  }
  return d;
}

bool drained_by_p2pcheck(const std::string& line) {
  auto state = line.find("State=");
  if (state == std::string::npos) return false;
  auto end = line.find(' ', state);
  std::string value = line.substr(state, end == std::string::npos ? std::string::npos : end - state);
  if (value.find("DRAIN") == std::string::npos) return false;
  return line.find(" Reason=" + std::string(kDrainReasonPrefix)) != std::string::npos;
}

std::vector<std::string> scontrol_drain(const std::string& scontrol, const std::string& node,
                                        const std::string& reason) {
  return {scontrol, "update", "nodename=" + node, "state=drain", "reason=" + bounded_reason(reason)};
}

std::vector<std::string> scontrol_resume(const std::string& scontrol, const std::string& node) {
  return {scontrol, "update", "nodename=" + node, "state=resume"};
}

}  // namespace p2pcheck
