// A host's result as scheduler features: Slurm's and node-feature-discovery's (node_features.h).
#include "p2pcheck/fleet/node_features.h"

#include <ctime>
#include <map>

namespace p2pcheck {

namespace {

P2pClass p2p_class(Result result, std::size_t allowed) {
  switch (result) {
    case Result::kPass: return P2pClass::kAll;
    case Result::kUnknown: return P2pClass::kUnknown;
    case Result::kFail: return allowed ? P2pClass::kPartial : P2pClass::kNone;
    case Result::kNoPairs: return P2pClass::kNone;
  }
  return P2pClass::kUnknown;
}

// Per GPU: an allowed same-switch pair (yes), else one that might be (an undecided pair, an unknown
// locality: unknown), else no. The machine's answer is the weakest GPU's.
Tristate same_switch(const HostSummary& host) {
  std::map<std::string, Tristate> gpus;
  for (const HostPair& p : host.pairs) {
    Tristate& g = gpus.try_emplace(p.gpu, Tristate::kNo).first->second;
    if (g == Tristate::kYes) continue;
    if (p.verdict == Verdict::kSupported && p.locality == "same_switch")
      g = Tristate::kYes;
    else if (p.verdict != Verdict::kNotSupported && (p.verdict == Verdict::kUnknown || p.locality == "unknown"))
      g = Tristate::kUnknown;
  }
  if (gpus.empty()) return Tristate::kNo;
  Tristate out = Tristate::kYes;
  for (const auto& [gpu, t] : gpus) {
    if (t == Tristate::kNo) return Tristate::kNo;
    if (t == Tristate::kUnknown) out = Tristate::kUnknown;
  }
  return out;
}

Tristate known_bad(const HostSummary& host) {
  Tristate out = Tristate::kUnknown;
  for (const HostFinding& f : host.findings) {
    if (f.id == "kernel.input_known_bad" && f.level == Level::kWarn) return Tristate::kYes;
    if (f.id != "kernel.known_bad") continue;
    if (f.level == Level::kFail) return Tristate::kYes;
    if (f.level == Level::kPass || f.level == Level::kInfo) out = Tristate::kNo;
  }
  return out;
}

}  // namespace

const char* to_string(P2pClass c) {
  switch (c) {
    case P2pClass::kAll: return "all";
    case P2pClass::kPartial: return "partial";
    case P2pClass::kNone: return "none";
    case P2pClass::kUnknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(Tristate t) {
  switch (t) {
    case Tristate::kYes: return "true";
    case Tristate::kNo: return "false";
    case Tristate::kUnknown: return "unknown";
  }
  return "unknown";
}

NodeFeatures node_features(const HostSummary& host) {
  NodeFeatures f;
  f.result = host.result;
  PairTally t = pair_tally(host);
  f.allowed = t.supported;
  f.refused = t.not_supported;
  f.undecided = t.unknown;
  f.p2p = p2p_class(host.result, f.allowed);
  f.same_switch = same_switch(host);
  f.known_bad_kernel = known_bad(host);
  return f;
}

const std::vector<std::string>& slurm_feature_names() {
  static const std::vector<std::string> names = {"p2p_gpu_nvme", "p2p_partial", "p2p_none", "p2p_unknown",
                                                 "p2p_same_switch"};
  return names;
}

std::string slurm_features_text(const NodeFeatures& f) {
  const auto& n = slurm_feature_names();
  std::string out = n[static_cast<std::size_t>(f.p2p)] + "\n";
  if (f.same_switch == Tristate::kYes) out += n[4] + "\n";
  return out;
}

std::string nfd_features_text(const NodeFeatures& f, const std::string& expiry) {
  std::string result = to_string(f.result);
  if (f.result == Result::kNoPairs) result = "NO_PAIRS";  // a label value has no space
  std::string out = "# p2pcheck: GPU-NVMe peer-to-peer DMA of this node (p2pcheck check --nfd)\n";
  out += "# +expiry-time=" + expiry + "\n";
  auto line = [&out](const char* name, const std::string& value) {
    out += std::string(kNfdLabelPrefix) + name + "=" + value + "\n";
  };
  line("result", result);
  line("p2p", to_string(f.p2p));
  line("same-switch", to_string(f.same_switch));
  line("known-bad-kernel", to_string(f.known_bad_kernel));
  line("pairs-allowed", std::to_string(f.allowed));
  line("pairs-refused", std::to_string(f.refused));
  line("pairs-undecided", std::to_string(f.undecided));
  return out;
}

std::string rfc3339_utc(long long seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace p2pcheck
