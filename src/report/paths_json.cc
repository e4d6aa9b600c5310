// `paths --json` (compact_json.h; docs/json.md): a check's pairs with the routes their traffic takes,
// written record by record.
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "p2pcheck/report/check.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/pair_route.h"
#include "p2pcheck/report/paths.h"

namespace p2pcheck {

using namespace report_detail;

namespace {

// A record's members after its locality: the check's verdict and map type, and the route.
json route_tail_json(const PairDecision& d, RouteKind kind, const std::vector<std::string>& host_bridges) {
  json out = object_for(3);
  out["verdict"] = to_string(d.verdict);
  out["map_type"] = to_string(d.map_type);
  out["route"] = {{"kind", route_kind_token(kind)}, {"host_bridges", host_bridges}};
  return out;
}

// The pieces a fabric's millions of records share, made once: each device's address, each
// locality's object, each class and route's tail.
struct RecordPieces {
  std::unordered_map<const Function*, std::string> addresses;
  std::map<std::tuple<LocalityClass, std::string, std::string>, json> localities;
  std::map<std::tuple<std::uint32_t, RouteKind, std::vector<std::string>>, json> tails;

  const std::string& address(const Function& fn) {
    auto [it, made] = addresses.try_emplace(&fn);
    if (made) it->second = fn.bdf.str();
    return it->second;
  }
  const json& locality(const Locality& l) {
    auto [it, made] = localities.try_emplace(std::make_tuple(l.cls, std::string(l.nvidia_smi), l.why));
    if (made) it->second = locality_json(l, false);
    return it->second;
  }
};

// `{"gpu", "nvme", "common_bridge", "distance", "locality", "verdict", "map_type", "route"}`.
void write_record(JsonWriter& w, const CheckReport& r, std::size_t i, RecordPieces& pieces) {
  // The pair's walk as its record keeps it (PairList): a fabric's pairs are not walked again here.
  const Function* common = r.pairs.common(i);
  w.begin_object();
  w.member("gpu", pieces.address(r.pairs.gpu(i)));
  w.member("nvme", pieces.address(r.pairs.nvme(i)));
  w.key("common_bridge");
  if (common)
    w.value(pieces.address(*common));
  else
    w.value(nullptr);
  w.member("distance", r.pairs.meet(i).distance());
  w.member("locality", pieces.locality(pair_locality(r, i)));
  const RouteKind kind = r.pairs.route(i);
  auto [tail, made] = pieces.tails.try_emplace(std::make_tuple(r.pairs.class_index(i), kind, r.pairs.host_bridges(i)));
  if (made) tail->second = route_tail_json(r.pairs.shared(i), kind, std::get<2>(tail->first));
  for (auto it = tail->second.begin(); it != tail->second.end(); ++it) w.member(it.key(), it.value());
  w.end_object();
}

}  // namespace

json paths_head_json(const CheckReport& r) {
  json head = paths_json(r.topo);
  json out = object_for(head.size() + 1);
  for (auto it = head.begin(); it != head.end(); ++it) {
    if (it.key() == "pairs") out["result"] = to_string(r.result);  // check's, for the same selection
    out[it.key()] = std::move(it.value());
  }
  return out;
}

void write_paths_json(std::ostream& out, const CheckReport& r, const json& head, int indent) {
  // The pairs' GPUs, NVMe and common bridges: the functions table holds their upstream chains (a
  // common bridge is on its GPU's chain already, so it adds nothing there).
  const std::vector<Bdf> devices(r.selected_devices.begin(), r.selected_devices.end());
  JsonWriter w(out, indent);
  RecordPieces pieces;
  write_around_pairs(w, head, [&] {
    w.key("nvme");
    w.begin_array();
    for (const auto& c : r.inv.nvmes) {
      w.begin_object();
      w.member("bdf", c.bdf.str());
      w.key("name");
      if (c.name.empty())
        w.value(nullptr);
      else
        w.value(c.name);
      w.end_object();
    }
    w.end_array();
    write_functions(w, r.topo, r.inv, devices);
    w.key("pairs");
    w.begin_array();
    for (std::size_t i = 0; i < r.pairs.size(); ++i) write_record(w, r, i, pieces);
    w.end_array();
  });
}

}  // namespace p2pcheck
