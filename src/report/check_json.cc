// `check --json` and `explain --json`: the check document (schema p2pcheck.check) and one pair's
// decision, built from the same CheckReport the text views print.
#include <utility>

#include "p2pcheck/checks/kernel.h"
#include "p2pcheck/checks/links.h"
#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/host_fix.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/version.h"

namespace p2pcheck {

using namespace report_detail;

namespace {

// `concerns`: whether it bears on the result (machine-wide, or about a device of a selected pair).
// Members set one by one: an initializer list builds each member as a two-element array first,
// and a fabric's report has a finding per device (20 M of 404 M instructions at 1,252 functions).
json finding_json(const Finding& f, bool concerns) {
  json ev = json::array();
  for (const auto& e : f.evidence) {
    json item = object_for(2);
    item["file"] = e.file;
    item["value"] = e.value;
    ev.push_back(std::move(item));
  }
  json devices = json::array();
  for (const Bdf& b : f.devices) devices.push_back(b.str());
  json j = object_for(10);
  j["id"] = f.id;
  if (!f.cause.empty()) j["cause"] = f.cause;  // only where one id has several problems (storage.stack)
  j["level"] = to_string(f.level);
  j["subject"] = f.subject;
  j["devices"] = std::move(devices);
  j["concerns_selected_pairs"] = concerns;
  j["message"] = f.message;
  j["evidence"] = std::move(ev);
  j["fix"] = f.fix.empty() ? json(nullptr) : json(f.fix);
  j["state"] = to_string(f.state);
  return j;
}

// In a decisions row (`for_pair` false) a fix that moves the pair's own GPU and NVMe lists no
// devices: the row is shared by every pair of its class, each with its own two.
json fix_json(const PairFix& fix, bool for_pair) {
  if (fix.empty()) return nullptr;
  json devices = json::array();
  if (for_pair || !fix.moves_the_pair())
    for (const Bdf& b : fix.devices) devices.push_back(b.str());
  json j = object_for(4);
  j["kind"] = token(fix.kind);
  j["kernel_cmdline"] = fix.kernel_cmdline.empty() ? json(nullptr) : json(fix.kernel_cmdline);
  j["devices"] = std::move(devices);
  j["text"] = fix.text;
  return j;
}

json flow_json(const PairDecision& d, const Flow& f, PortNames names) {
  json j = object_for(3);
  j["verdict"] = to_string(f.verdict);
  j["reason"] = flow_reason_text(d, f, names);
  const char* hardware = hardware_token(f.hardware);
  j["hardware"] = hardware ? json(hardware) : json(nullptr);
  return j;
}

}  // namespace

namespace {

json blocked_by_json(const std::vector<Blocker>& blockers) {
  json out = json::array();
  for (Blocker b : blockers) out.push_back(token(b));
  return out;
}

// The host check's parts: the CPU rule and each host bridge against the allowlist.
json host_check_json(const HostCheck& host) {
  json bridges = json::array();
  for (const auto& b : host.bridges) {
    bridges.push_back({{"host_bridge", b.host_bridge},
                       {"device", b.device ? json(b.device->str()) : json(nullptr)},
                       {"device_unknown", b.device_unknown},
                       {"ids", b.device ? json(b.ids()) : json(nullptr)},
                       {"allowlist_entry", b.entry ? json(b.entry->name) : json(nullptr)},
                       {"allowlist_source", allowlist_source_text(host.table_source, host.table_version)},
                       {"passes", tri_json(b.passes)}});
  }
  return {{"cpu_supports_p2pdma", tri_json(host.cpu_supports)},
          {"same_host_bridge", host.same_host_bridge},
          {"bridges", std::move(bridges)},
          {"allowlisted", tri_json(host.allowlisted)},
          {"allowed", tri_json(host.allowed)}};
}

}  // namespace

json kernel_answer_json(const PairDecision& d) {
  return {{"distance", d.kernel->distance},
          {"map_type", d.kernel->map_type == MapType::kUnknown ? json(nullptr) : json(to_string(d.kernel->map_type))},
          {"map_note", d.kernel->map_note.empty() ? json(nullptr) : json(d.kernel->map_note)},
          {"agrees", d.kernel_agrees == Tri::kYes}};
}

namespace {

// One body for a decision's members, in the order docs/json.md lists them. With `topo`, the pair's
// own members too (devices, distances, hops, bandwidth, the kernel's answer, its ACS redirect ports
// and their fix: explain --json); without, a `decisions` row, which pairs of one class, common
// bridge and locality share, whatever ACS redirect ports each crosses (`why` worded with
// PortNames::kListed: each pair lists its own in check --json's `port_lists`).
json decision_members(const Topology* topo, const PairDecision& d, const Inventory& inv, const PairExplanation& why) {
  const PortNames names = topo ? PortNames::kAddresses : PortNames::kListed;
  // Built member by member in place: about 7 KB per pair, most of it hops, copied three times before.
  json out = object_for(21);
  if (topo) {
    out["gpu"] = d.walk.pair().gpu.str();
    out["nvme"] = d.walk.pair().nvme.str();
    out["nvme_name"] = nvme_name_json(d.walk, inv);
  }
  out["common_bridge"] = common_bridge_json(d.walk);
  if (topo) {
    out["distance"] = d.distance ? json(*d.distance) : json(nullptr);
    out["path_distance"] = d.walk.distance;
  }
  out["map_type"] = to_string(d.map_type);
  out["verdict"] = to_string(d.verdict);
  // The two levels: the PCI path under the kernel's rules, and what else stops the overall verdict.
  json path = object_for(2);
  path["map_type"] = to_string(d.path_map_type);
  path["verdict"] = to_string(d.path_verdict);
  out["path"] = std::move(path);
  out["blocked_by"] = blocked_by_json(why.blocked_by);
  out["rule"] = why.rule_text;
  out["rule_id"] = token(why.rule);
  out["fix"] = fix_json(why.fix, topo != nullptr);
  out["unknowns"] = unknown_texts(d);
  if (!d.moot.empty()) out["unknown_either_way"] = moot_texts(d);  // only where there is any
  // verify's names, the same across commands: to_device = storage -> GPU (a P2P write), to_storage =
  // GPU -> storage (a P2P read). explain --json (a pair in full, with its hops) keeps to_gpu/from_gpu,
  // the names before; check's decisions rows do not since version 3 (docs/json.md).
  json flows = object_for(4);
  flows["to_device"] = flow_json(d, d.to_gpu, names);
  flows["to_storage"] = flow_json(d, d.from_gpu, names);
  if (topo) {
    flows["to_gpu"] = flows["to_device"];
    flows["from_gpu"] = flows["to_storage"];
  }
  out["flows"] = std::move(flows);
  if (topo) {
    std::string acs_fix = why.acs_cmdline();
    out["acs_fix"] = acs_fix.empty() ? json(nullptr) : json(acs_fix);
  }
  std::string later = later_text(d);
  out["later"] = later.empty() ? json(nullptr) : json(later);
  out["host_check"] = d.host_checked ? host_check_json(d.host) : json(nullptr);
  if (topo) out["hops"] = hops_json(*topo, inv, d.walk);
  if (topo) out["acs_redirect"] = bdfs_json(d.walk.acs_redirect);
  out["acs_unknown"] = bdfs_json(d.walk.acs_unknown);
  if (topo) {
    std::optional<double> ceiling = path_ceiling(d.walk);
    out["bandwidth_ceiling_bytes_per_s"] = ceiling ? json(static_cast<std::uint64_t>(*ceiling)) : json(nullptr);
    out["kernel"] = d.kernel ? kernel_answer_json(d) : json(nullptr);
  }
  return out;
}

}  // namespace

json decision_row_json(const CheckReport& r, const PairDecision& d) {
  return decision_members(nullptr, d, r.inv, explain_pair(d, r.rules, r.machine, PortNames::kListed));
}

json pair_decision_json(const CheckReport& r, const PairDecision& d) {
  return decision_members(&r.topo, d, r.inv, explain_pair(d, r.rules, r.machine));
}

json counts_json(const ResultCounts& c) {
  json j = object_for(5);
  j["pairs"] = c.pairs;
  j["allowed"] = c.allowed;
  j["refused"] = c.refused;
  j["undecided"] = c.undecided;
  j["checks"] = {{"failing", c.failing}, {"unknown", c.unknown}, {"warn", c.warnings}};
  return j;
}

namespace {

json rows_json(const std::vector<KernelTableRow>& rows) {
  json out = json::array();
  for (const KernelTableRow& r : rows)
    out.push_back({{"ids", row_ids(r)}, {"req_same_host_bridge", (r.flags & kReqSameHostBridge) != 0}});
  return out;
}

// Where the allowlist rows came from, and how the kernel's own differ from upstream's.
json allowlist_json(const KernelRules& rules) {
  const KernelTable& t = rules.own_table;
  bool own = rules.allowlist.source != AllowlistSource::kUpstreamTable;
  auto text_or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return {{"source", allowlist_source_text(rules.allowlist.source, rules.version)},
          {"how", own ? text_or_null(t.how) : json(nullptr)},
          {"build_id", own ? text_or_null(t.build_id) : json(nullptr)},
          {"rows", own ? rows_json(t.rows) : json(nullptr)},
          {"added", own ? rows_json(rules.rows_added) : json(nullptr)},
          {"missing", own ? rows_json(rules.rows_missing) : json(nullptr)},
          {"distro_unread", rules.allowlist.distro_unread},
          {"not_read_why", own ? json(nullptr) : text_or_null(t.why_not)}};
}

// The kernel the rules were taken from, and what they say of its P2PDMA (a what-if names both kernels).
json kernel_rules_json(const KernelRules& rules) {
  return {{"release", rules.release},
          {"origin", to_string(rules.origin)},
          {"assumed", rules.what_if()},
          {"what_if",
           rules.what_if()
               ? json({{"release", rules.release},
                       {"input_release", rules.input_release.empty() ? json(nullptr) : json(rules.input_release)},
                       {"input_known_bad", rules.input_known_bad ? json(rules.input_known_bad->name) : json(nullptr)}})
               : json(nullptr)},
          {"vendor_kernel", rules.vendor_kernel},
          {"table", allowlist_table_note(rules)},
          {"allowlist", allowlist_json(rules)},
          {"p2pdma_config", tri_json(rules.p2pdma_enabled)},
          {"p2pdma_basis", to_string(rules.p2pdma_basis)},
          {"distro_row", rules.distro ? json(rules.distro->target) : json(nullptr)},
          {"known_bad", rules.known_bad ? json(rules.known_bad->name) : json(nullptr)}};
}

// Whose GPU-direct stack the verdicts speak for: hipFile (AMD), GDS in P2PDMA mode (NVIDIA).
json gpu_stacks_json(const CheckReport& r) {
  json stacks = json::array();
  for (const Bdf& b : r.inv.gpus)
    if (const Function* fn = r.topo.find(b)) {
      const char* stack = fn->vendor == kPciVendorAmd      ? "hipfile"
                          : fn->vendor == kPciVendorNvidia ? "gds_p2pdma"
                                                           : nullptr;
      if (stack && std::find(stacks.begin(), stacks.end(), stack) == stacks.end()) stacks.push_back(stack);
    }
  return stacks;
}

}  // namespace

json check_json(const CheckReport& r) {
  json findings = json::array();
  for (const auto& f : r.findings) findings.push_back(finding_json(f, concerns_selected_pairs(f, r)));
  json gpus = json::array();
  for (const Bdf& g : r.inv.gpus) gpus.push_back(g.str());
  json nvmes = json::array();
  for (const auto& c : r.inv.nvmes)
    nvmes.push_back({{"bdf", c.bdf.str()}, {"name", c.name.empty() ? json(nullptr) : json(c.name)}});
  json j = json_envelope("p2pcheck.check", r.source);
  j["schema_version"] = kCheckJsonSchemaVersion;  // the envelope's is every other document's
  j["result"] = to_string(r.result);
  j["counts"] = counts_json(r.counts);
  json fail_on = json::array();
  for (const std::string& word : fail_policy_words(r.fail_on)) fail_on.push_back(word);
  j["fail_on"] = std::move(fail_on);
  json supplied = json::array();
  for (const SuppliedUse& use : r.supplied)
    supplied.push_back({{"option", use.option},
                        {"value", use.value},
                        {"used", use.used},
                        {"why_not_used", use.used ? json(nullptr) : json(use.why_not_used)}});
  j["supplied"] = std::move(supplied);
  j["kernel"] = kernel_rules_json(r.rules);
  j["cpu"] = {{"vendor", r.machine.cpu.vendor_id},
              {"family", r.machine.cpu.family},
              {"model", r.machine.cpu.model},
              {"model_name", r.machine.cpu.model_name},
              {"hypervisor", r.machine.cpu.hypervisor},
              {"architecture", r.machine.cpu.architecture.empty() ? json(nullptr) : json(r.machine.cpu.architecture)}};
  j["identity"] = identity_json(r.machine.identity);
  j["gpu_stacks"] = gpu_stacks_json(r);
  j["config_space_complete"] = !r.topo.config_truncated;
  j["gpus"] = std::move(gpus);
  j["nvme"] = std::move(nvmes);
  j["findings"] = std::move(findings);
  j["host_fix"] = host_fix_json(host_fix(r));
  j["pairs"] = json::array();  // where write_check_json (compact_json.h) writes the tables and the pairs
  return j;
}

json explain_json(const CheckReport& r, const PairDecision& d) {
  json j = json_envelope("p2pcheck.explain", r.source);
  j["identity"] = identity_json(r.machine.identity);
  json pair = pair_decision_json(r, d);  // a named object: items() of a temporary would dangle
  for (auto& [key, value] : pair.items()) j[key] = std::move(value);
  j["locality"] = locality_json(walk_locality(r.topo, d.walk), true);
  return j;
}

}  // namespace p2pcheck
