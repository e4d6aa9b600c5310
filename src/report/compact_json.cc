#include "p2pcheck/report/compact_json.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "p2pcheck/report/check.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/report/paths.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck {

using namespace report_detail;

namespace {

// `head` with its schema_version 2, and `tables` (name, value) inserted before its "pairs".
json with_tables(const json& head, std::vector<std::pair<std::string, json>> tables) {
  json out = object_for(head.size() + tables.size());
  for (auto it = head.begin(); it != head.end(); ++it) {
    if (it.key() == "pairs")
      for (auto& [name, value] : tables) out[name] = std::move(value);
    out[it.key()] = it.key() == "schema_version" ? json(kCompactJsonSchemaVersion) : it.value();
  }
  return out;
}

std::vector<Bdf> pair_devices(const std::vector<std::pair<Bdf, Bdf>>& pairs) {
  std::set<Bdf> seen;
  for (const auto& [gpu, nvme] : pairs) {
    seen.insert(gpu);
    seen.insert(nvme);
  }
  return {seen.begin(), seen.end()};
}

// What decides everything a decision prints besides its pair: the walk's common bridge and the ACS
// it found (the map type follows from them), and the host bridges the host check reads. CPU,
// kernel and allowlist are the same for every pair of a report.
using DecisionKey =
    std::tuple<const Function*, std::vector<const Function*>, std::vector<const Function*>, std::string, std::string>;

DecisionKey key_of(const Topology& topo, const PairDecision& d) {
  return {d.walk.common, d.walk.acs_redirect, d.walk.acs_unknown, topo.at(d.path.pair.gpu).host_bridge,
          topo.at(d.path.pair.nvme).host_bridge};
}

// A decision as version 1 prints it in each pair, less what belongs to the pair: its devices, the
// distance, the hops and their bandwidth, the kernel module's answer for it. A fix that moves the
// pair's own GPU and NVMe lists no devices here: they are the pair's.
json decision_entry(const CheckReport& r, const PairDecision& pair) {
  // Without its hops (dropped below anyway): their link and ACS objects are most of the cost.
  PairDecision d = pair;
  d.path.gpu_side.clear();
  d.path.nvme_side.clear();
  json v1 = decision_json(r, d);
  json out = object_for(16);
  for (auto it = v1.begin(); it != v1.end(); ++it) {
    const std::string& k = it.key();
    if (k == "gpu" || k == "nvme" || k == "nvme_name" || k == "distance" || k == "path_distance" || k == "hops" ||
        k == "bandwidth_ceiling_bytes_per_s" || k == "kernel")
      continue;
    out[k] = it.value();
  }
  if (out["fix"].is_object()) {
    const std::string kind = out["fix"]["kind"].get<std::string>();
    if (kind == "same_switch" || kind == "same_host_bridge") out["fix"]["devices"] = json::array();
  }
  return out;
}

json kernel_answer_json(const PairDecision& d) {
  return {{"distance", d.kernel->distance},
          {"map_type", d.kernel->map_type == MapType::kUnknown ? json(nullptr) : json(to_string(d.kernel->map_type))},
          {"map_note", d.kernel->map_note.empty() ? json(nullptr) : json(d.kernel->map_note)},
          {"agrees", d.kernel_agrees == Tri::kYes}};
}

// A top-level member whose array is written element by element.
struct Streamed {
  std::string key;
  std::size_t count;
  std::function<json(std::size_t)> element;
};

// write_json_streamed() (source/json_text.h) for several members, in the document's order: the
// decisions of a fabric are as big as its pairs, and neither is held whole.
void write_streamed(std::ostream& out, json doc, const std::vector<Streamed>& members, int indent) {
  std::vector<std::string> markers;
  for (std::size_t m = 0; m < members.size(); ++m) {
    markers.push_back(json_text(json("\x01p2pcheck-streamed-" + std::to_string(m) + "\x01"), -1));
    doc[members[m].key] = json::parse(markers.back());
  }
  const std::string text = json_text(doc, indent);
  const std::string inner = indent >= 0 ? std::string(static_cast<std::size_t>(2 * indent), ' ') : "";
  std::size_t from = 0;
  for (std::size_t m = 0; m < members.size(); ++m) {
    // An unescaped quote before the value cannot occur inside a string: found only as the member.
    std::string found = json_text(json(members[m].key), -1) + (indent >= 0 ? ": " : ":") + markers[m];
    std::size_t at = text.find(found, from);
    if (at == std::string::npos) continue;
    at += found.size() - markers[m].size();
    out.write(text.data() + from, static_cast<std::streamsize>(at - from));
    if (members[m].count == 0) out << "[]";
    if (members[m].count > 0) out << (indent >= 0 ? "[\n" : "[");
    for (std::size_t i = 0; i < members[m].count; ++i) {
      std::string one = json_text(members[m].element(i), indent);
      if (indent >= 0) {
        std::string shifted = inner;
        for (char c : one) {
          shifted += c;
          if (c == '\n') shifted += inner;
        }
        one.swap(shifted);
      }
      out << one << (i + 1 < members[m].count ? (indent >= 0 ? ",\n" : ",") : "");
    }
    if (members[m].count > 0)
      out << (indent >= 0 ? "\n" + std::string(static_cast<std::size_t>(indent), ' ') + "]" : "]");
    from = at + markers[m].size();
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

}  // namespace

json functions_json(const Topology& topo, const Inventory& inv, const std::vector<Bdf>& devices) {
  std::set<const Function*, bool (*)(const Function*, const Function*)> on_paths(
      [](const Function* a, const Function* b) { return a->bdf < b->bdf; });
  for (const Bdf& b : devices)
    if (const Function* fn = topo.find(b))
      for (const Function* up : topo.upstream_chain(*fn)) on_paths.insert(up);
  json out = json::object();
  for (const Function* fn : on_paths) {
    json f = object_for(5);
    f["role"] = role_of(*fn, inv);
    const Function* up = topo.upstream_bridge(*fn);
    f["upstream"] = up ? json(up->bdf.str()) : json(nullptr);
    f["host_bridge"] = fn->host_bridge;
    f["link"] = link_json(topo, *fn);
    f["acs"] = acs_json(fn->acs);
    out[fn->bdf.str()] = std::move(f);
  }
  return out;
}

void write_check_json_v2(std::ostream& out, const CheckReport& r, json head, int indent) {
  std::vector<std::pair<Bdf, Bdf>> devices;
  devices.reserve(r.pairs.size());
  std::map<DecisionKey, std::size_t> index;
  std::vector<std::size_t> decision_of(r.pairs.size());
  std::vector<std::size_t> first_pair;  // each decision's first pair: the decision is made from it
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const PairDecision& d = r.pairs[i];
    devices.emplace_back(d.path.pair.gpu, d.path.pair.nvme);
    auto [at, added] = index.try_emplace(key_of(r.topo, d), first_pair.size());
    if (added) first_pair.push_back(i);
    decision_of[i] = at->second;
  }
  json doc = with_tables(
      head, {{"functions", functions_json(r.topo, r.inv, pair_devices(devices))}, {"decisions", json::array()}});
  write_streamed(
      out, std::move(doc),
      {{"decisions", first_pair.size(), [&](std::size_t k) { return decision_entry(r, r.pairs[first_pair[k]]); }},
       {"pairs", r.pairs.size(),
        [&](std::size_t i) {
          const PairDecision& d = r.pairs[i];
          json p = object_for(5);
          p["gpu"] = d.path.pair.gpu.str();
          p["nvme"] = d.path.pair.nvme.str();
          p["decision"] = decision_of[i];
          p["distance"] = d.distance ? json(*d.distance) : json(nullptr);
          if (d.kernel) p["kernel"] = kernel_answer_json(d);
          return p;
        }}},
      indent);
}

void write_paths_json_v2(std::ostream& out, const Topology& topo, const Inventory& inv,
                         const std::vector<PairPath>& paths, json head, int indent) {
  std::vector<std::pair<Bdf, Bdf>> devices;
  devices.reserve(paths.size());
  for (const PairPath& p : paths) devices.emplace_back(p.pair.gpu, p.pair.nvme);
  json nvmes = json::array();
  for (const auto& c : inv.nvmes)
    nvmes.push_back({{"bdf", c.bdf.str()}, {"name", c.name.empty() ? json(nullptr) : json(c.name)}});
  json doc =
      with_tables(head, {{"nvme", std::move(nvmes)}, {"functions", functions_json(topo, inv, pair_devices(devices))}});
  write_json_streamed(
      out, std::move(doc), "pairs", paths.size(),
      [&](std::size_t i) {
        const PairPath& path = paths[i];
        json p = object_for(4);
        p["gpu"] = path.pair.gpu.str();
        p["nvme"] = path.pair.nvme.str();
        p["common_bridge"] = common_bridge_json(path);
        p["distance"] = path.distance;
        return p;
      },
      indent);
}

}  // namespace p2pcheck
