#include "p2pcheck/report/explain.h"

#include <cstdio>

#include "p2pcheck/checks/kernel.h"
#include "p2pcheck/checks/links.h"
#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/source/printable.h"

namespace p2pcheck {

using namespace report_detail;

namespace {

const char* yes_no(Tri value) { return value == Tri::kYes ? "yes" : value == Tri::kNo ? "no" : "unknown"; }
const char* passes_fails(Tri value) { return value == Tri::kYes ? "passes" : value == Tri::kNo ? "fails" : "unknown"; }

std::string acs_or_none(const Function* f) {
  std::string t = acs_text(f->acs);
  return t.empty() ? std::string("no ACS capability") : t;
}

// Step 1: up from the GPU to the common bridge, then down to the NVMe, as the kernel walks it.
std::string walk_text(const CheckReport& r, const PairWalk& w) {
  std::string out = "1. Walk (calc_map_type_and_dist: provider = GPU, client = NVMe)\n";
  for (size_t i = 0; i < w.provider_side.size(); ++i)
    out += "   up    " + function_label(*w.provider_side[i]) + "  <" + role_of(*w.provider_side[i], r.inv) + ">  " +
           acs_or_none(w.provider_side[i]) + "\n";
  if (w.common) {
    out += "   meet  " + function_label(*w.common) + "  <common upstream bridge>  " + acs_or_none(w.common) + "\n";
  } else {
    out += "   —     no common upstream bridge: the chains end at different root-bus devices\n";
  }
  for (auto it = w.client_side.rbegin(); it != w.client_side.rend(); ++it)
    out += "   down  " + function_label(**it) + "  <" + role_of(**it, r.inv) + ">  " + acs_or_none(*it) + "\n";
  out += "   path distance " + std::to_string(w.distance) + "\n\n";
  return out;
}

// Step 2: the ACS Control of each device the kernel checks for redirect.
std::string acs_redirect_text(const PairWalk& w) {
  std::string out = "2. ACS redirect (RR, CR or EC in ACS Control)\n";
  if (!w.common) {
    out += "   not consulted: without a common bridge the traffic goes through the host bridge anyway\n";
  } else {
    for (const Function* f : w.acs_checked) out += "   " + f->bdf.str() + "  " + acs_or_none(f) + "\n";
    out += w.acs_redirect.empty() ? (w.acs_unknown.empty() ? "   none set: BUS_ADDR\n" : "   unknown on some devices\n")
                                  : "   redirect set: the kernel maps THRU_HOST_BRIDGE\n";
  }
  return out;
}

// Step 3: the CPU rule and each host bridge against the allowlist, when the path needs them.
std::string host_check_text(const CheckReport& r, const PairDecision& d) {
  std::string out = "\n3. Host check";
  if (!d.host_checked) return out + ": not needed (the traffic never reaches the root complex)\n";
  out += " (cpu_supports_p2pdma() || host_bridge_whitelist())\n";
  out +=
      "   CPU rule: " + std::string(yes_no(d.host.cpu_supports)) + " (" +
      (r.machine.cpu.vendor_id.empty() ? "no cpuinfo"
                                       : r.machine.cpu.vendor_id + " family " + std::to_string(r.machine.cpu.family)) +
      ")\n";
  for (const auto& b : d.host.bridges) {
    out += "   host bridge " + b.host_bridge + ": " +
           (b.device                       ? "device " + b.device->str() + " [" + b.ids() + "] "
            : !b.device_unknown            ? std::string("no host bridge device ")
            : b.device_not_carried.empty() ? std::string("device unknown (needs root) ")
                                           : "device unknown (config space " + b.device_not_carried + ") ");
    out += b.entry ? std::string("allowlisted (") + b.entry->name +
                         (b.entry->req_same_host_bridge ? ", REQ_SAME_HOST_BRIDGE" : "") + ")"
                   : std::string("not allowlisted");
    out += std::string(" -> ") + passes_fails(b.passes) + "\n";
  }
  out += std::string("   host check: ") + passes_fails(d.host.allowed) +
         (d.host.cpu_supports == Tri::kYes ? " (the CPU rule alone allows it)" : "") + "\n";
  return out;
}

// The answer: the verdict and its rule, each direction, what is unknown, the kernel's own answer,
// the fix and the path's bandwidth ceiling.
std::string verdict_text(const PairDecision& d, const PairExplanation& why, const TextStyle& style) {
  std::string out = "\n" +
                    colored(style, d.verdict == Verdict::kSupported ? "32" : "1;31",
                            "Verdict: " + std::string(to_string(d.map_type)) + ", " + to_string(d.verdict)) +
                    (d.distance ? ", distance " + std::to_string(*d.distance) : "") + "\n";
  out += "  rule  " + why.rule_text + "\n";
  out += "  storage -> GPU: " + std::string(to_string(d.to_gpu.verdict)) + " — " + flow_reason_text(d, d.to_gpu) + "\n";
  out += "  GPU -> storage: " + std::string(to_string(d.from_gpu.verdict)) + " — " + flow_reason_text(d, d.from_gpu) +
         "\n";
  for (const auto& u : unknown_texts(d)) out += "  unknown: " + u + "\n";
  if (std::vector<std::string> moot = moot_texts(d); !moot.empty())
    out += "  also unknown, the answer stands either way: " + join(moot, "; ") + "\n";
  if (d.kernel)
    out += "  the running kernel (p2pprobe): distance " + std::to_string(d.kernel->distance) +
           (d.kernel->map_type == MapType::kUnknown ? " (map type not observed: " + d.kernel->map_note + ")"
                                                    : std::string(", ") + to_string(d.kernel->map_type)) +
           (d.kernel_agrees == Tri::kYes ? " — agrees" : " — DISAGREES") + "\n";
  // On an allowed pair it is no fix, only an option: the traffic would stay below the switch.
  if (std::string acs_fix = why.acs_cmdline(); !acs_fix.empty() && d.verdict == Verdict::kSupported)
    out += "  option (not needed: the pair is allowed) " + acs_fix +
           " would keep its traffic inside the switch instead of the root complex; it weakens IOMMU isolation below "
           "those ports\n";
  else if (!acs_fix.empty())
    out += "  fix   " + acs_fix + " (weakens IOMMU isolation below those ports)\n";
  if (std::string later = later_text(d); !later.empty()) out += "  later " + later + "\n";
  std::optional<double> ceiling = path_ceiling(d.walk);
  if (ceiling) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f GB/s", *ceiling / 1e9);
    out += "  bandwidth ceiling of the path: " + std::string(buf) + " per direction (slowest hop, after encoding)\n";
  }
  return out;
}

}  // namespace

std::string explain_text(const CheckReport& r, const PairDecision& d, const TextStyle& style) {
  std::string out;
  out += "GPU " + function_label(r.topo.at(d.walk.pair().gpu)) + "\n";
  out += "NVMe " + nvme_name_prefix(r.inv, d.walk.pair().nvme) + function_label(r.topo.at(d.walk.pair().nvme)) + "\n";
  out += "kernel " + (r.rules.release.empty() ? std::string("unknown") : r.rules.release) + " — " +
         allowlist_table_note(r.rules) + "\n";
  out += identity_line(r.machine.identity) + "\n";
  out += walk_text(r, d.walk);
  out += acs_redirect_text(d.walk);
  out += host_check_text(r, d);
  out += verdict_text(d, explain_pair(d, r.rules, r.machine), style);
  // Beside the verdict, never part of it: the kernel asks only whether the chains meet.
  Locality locality = walk_locality(r.topo, d.walk);
  out +=
      "\nLocality: " + printable(locality_text(locality)) + " — as nvidia-smi topo -m says it; it changes no verdict\n";
  return fold_to_width(out, style.wrap);
}

}  // namespace p2pcheck
