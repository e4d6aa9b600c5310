#include "p2pcheck/report/compact_json.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "p2pcheck/report/check.h"
#include "p2pcheck/report/common.h"

namespace p2pcheck {

using namespace report_detail;

namespace {

// What a decision row is shared by: the pair's class (rules/pair_classes.h), the common bridge its
// texts name, whether ACS redirect sends the pair up (the row's words then speak of the pair's
// listed ports, not naming them), and how near the two sit (its locality).
struct DecisionKey {
  std::uint32_t cls = 0;
  const Function* common = nullptr;
  bool redirected = false;
  LocalityClass locality = LocalityClass::kUnknown;
  std::string_view nvidia_smi;
  std::string why;
  bool operator==(const DecisionKey&) const = default;
};

struct DecisionKeyHash {
  std::size_t operator()(const DecisionKey& k) const {
    std::size_t h = std::hash<std::uint32_t>()(k.cls) ^ (std::hash<const void*>()(k.common) << 1);
    h = h * 0x9e3779b97f4a7c15ull ^ (static_cast<std::size_t>(k.locality) << 1 | k.redirected);
    return h ^ std::hash<std::string_view>()(k.nvidia_smi) ^ (std::hash<std::string>()(k.why) << 2);
  }
};

// The `port_lists` table: each side's ACS redirect ports once. A pair's ports are its GPU side's
// (up to and including the common bridge) then its NVMe side's (below it), the kernel's order, so
// a side's list depends only on its device and the common bridge: a fabric's 892,416 pairs have a
// few thousand.
class PortLists {
 public:
  PortLists() : lists_{{}}, index_{{{}, 0}} {}
  // Pair i's [gpu side, nvme side] indexes into lists(); {0, 0} (the empty list) without ACS redirect.
  std::pair<std::uint32_t, std::uint32_t> of(const CheckReport& r, std::size_t i);
  const std::vector<std::vector<const Function*>>& lists() const { return lists_; }

 private:
  using Seen = std::vector<std::pair<const Function*, std::uint32_t>>;  // per end: (common bridge, list)
  static const std::uint32_t* find(const Seen& seen, const Function* common) {
    for (const auto& [at, list] : seen)
      if (at == common) return &list;
    return nullptr;
  }
  std::uint32_t number(std::vector<const Function*> ports);

  std::vector<std::vector<const Function*>> lists_;
  std::map<std::vector<const Function*>, std::uint32_t> index_;
  std::vector<Seen> gpu_side_, nvme_side_;  // by PairList end
};

std::uint32_t PortLists::number(std::vector<const Function*> ports) {
  auto [it, added] = index_.try_emplace(ports, static_cast<std::uint32_t>(lists_.size()));
  if (added) lists_.push_back(std::move(ports));
  return it->second;
}

std::pair<std::uint32_t, std::uint32_t> PortLists::of(const CheckReport& r, std::size_t i) {
  if (!r.pairs.acs_redirected(i)) return {0, 0};
  if (gpu_side_.empty()) {
    gpu_side_.resize(r.pairs.ends());
    nvme_side_.resize(r.pairs.ends());
  }
  const Function* common = r.pairs.common(i);
  Seen& gpu = gpu_side_[r.pairs.gpu_end(i)];
  Seen& nvme = nvme_side_[r.pairs.nvme_end(i)];
  const std::uint32_t* g = find(gpu, common);
  const std::uint32_t* n = find(nvme, common);
  if (g && n) return {*g, *n};
  // A side not met yet: the kernel's walk (once per side, not per pair) lists both sides' ports.
  const PairWalk walk = r.pairs.walk(i);
  std::vector<const Function*> gpu_ports, nvme_ports;
  for (const Function* port : walk.acs_redirect) {
    bool client = std::find(walk.client_side.begin(), walk.client_side.end(), port) != walk.client_side.end();
    (client ? nvme_ports : gpu_ports).push_back(port);
  }
  std::uint32_t gl = g ? *g : number(std::move(gpu_ports));
  std::uint32_t nl = n ? *n : number(std::move(nvme_ports));
  if (!g) gpu.emplace_back(common, gl);
  if (!n) nvme.emplace_back(common, nl);
  return {gl, nl};
}

// A check's pairs numbered for the document: each distinct decision, each device and each side's
// ACS redirect port list once, in the order the pairs meet them.
struct CheckTables {
  std::vector<std::uint32_t> decision_of;    // by pair
  std::vector<std::size_t> first_pair;       // by decision: the pair its row is made from
  std::vector<Locality> locality;            // by decision
  std::vector<std::uint32_t> device_of_end;  // PairList's end number -> `devices` index
  std::vector<const Function*> devices;
  PortLists ports;
};

std::uint32_t device_number(CheckTables& t, const CheckReport& r, std::uint32_t end) {
  if (t.device_of_end[end] == UINT32_MAX) {
    t.device_of_end[end] = static_cast<std::uint32_t>(t.devices.size());
    t.devices.push_back(&r.pairs.end(end));
  }
  return t.device_of_end[end];
}

CheckTables number_pairs(const CheckReport& r) {
  CheckTables t;
  t.decision_of.resize(r.pairs.size());
  t.device_of_end.assign(r.pairs.ends(), UINT32_MAX);
  std::unordered_map<DecisionKey, std::uint32_t, DecisionKeyHash> index;
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    device_number(t, r, r.pairs.gpu_end(i));
    device_number(t, r, r.pairs.nvme_end(i));
    t.ports.of(r, i);
    Locality l = pair_locality(r, i);
    DecisionKey key{r.pairs.class_index(i), r.pairs.common(i), r.pairs.acs_redirected(i), l.cls, l.nvidia_smi, l.why};
    auto [it, added] = index.try_emplace(std::move(key), static_cast<std::uint32_t>(t.first_pair.size()));
    if (added) {
      t.first_pair.push_back(i);
      t.locality.push_back(std::move(l));
    }
    t.decision_of[i] = it->second;
  }
  return t;
}

// A `decisions` row: the decision of its first pair without that pair's own members, and its locality.
void write_decision(JsonWriter& w, const CheckReport& r, std::size_t pair, const Locality& l) {
  json row = decision_row_json(r, r.pairs[pair]);
  row["locality"] = locality_json(l, false);
  w.value(row);
}

// The p2pprobe module's answers, for the few pairs it answered: {"pair": index into pairs, ...}.
void write_kernel_answers(JsonWriter& w, const CheckReport& r) {
  w.key("kernel_answers");
  w.begin_array();
  for (std::size_t i = 0; i < r.pairs.size(); ++i)
    if (r.pairs.kernel(i)) {
      w.begin_object();
      w.member("pair", i);
      const json answer = kernel_answer_json(r.pairs[i]);
      for (auto it = answer.begin(); it != answer.end(); ++it) w.member(it.key(), it.value());
      w.end_object();
    }
  w.end_array();
}

// Each pair `[gpu, nvme, decision, distance, gpu_ports, nvme_ports]`: indexes into `devices` and
// `decisions`, the kernel's distance (null when unknown), and its two sides' ACS redirect ports as
// indexes into `port_lists`.
void write_pairs(JsonWriter& w, const CheckReport& r, CheckTables& t) {
  w.key("pairs");
  w.begin_array();
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const auto [gpu_ports, nvme_ports] = t.ports.of(r, i);  // numbered by number_pairs(): a lookup
    w.begin_array();
    w.value(t.device_of_end[r.pairs.gpu_end(i)]);
    w.value(t.device_of_end[r.pairs.nvme_end(i)]);
    w.value(t.decision_of[i]);
    w.value(r.pairs.distance(i));
    w.value(gpu_ports);
    w.value(nvme_ports);
    w.end_array();
  }
  w.end_array();
}

// The `functions` table's rows: every function on the upstream chain of each given device, in BDF order.
std::vector<const Function*> functions_on_paths(const Topology& topo, const std::vector<Bdf>& devices) {
  std::set<const Function*, bool (*)(const Function*, const Function*)> on_paths(
      [](const Function* a, const Function* b) { return a->bdf < b->bdf; });
  for (const Bdf& b : devices)
    if (const Function* fn = topo.find(b))
      for (const Function* up : topo.upstream_chain(*fn)) on_paths.insert(up);
  return {on_paths.begin(), on_paths.end()};
}

json function_row(const Topology& topo, const Inventory& inv, const Function& fn) {
  json f = object_for(5);
  f["role"] = role_of(fn, inv);
  const Function* up = topo.upstream_bridge(fn);
  f["upstream"] = up ? json(up->bdf.str()) : json(nullptr);
  f["host_bridge"] = fn.host_bridge;
  f["link"] = link_json(topo, fn);
  f["acs"] = acs_json(fn.acs);
  return f;
}

}  // namespace

namespace report_detail {

void write_around_pairs(JsonWriter& w, const json& head, const std::function<void()>& tables_and_pairs) {
  w.begin_object();
  bool written = false;
  for (auto it = head.begin(); it != head.end(); ++it) {
    if (it.key() == "pairs") {
      tables_and_pairs();
      written = true;
    } else {
      w.member(it.key(), it.value());
    }
  }
  if (!written) tables_and_pairs();  // a head without its place still gets its pairs, last
  w.end_object();
}

void write_functions(JsonWriter& w, const Topology& topo, const Inventory& inv, const std::vector<Bdf>& devices) {
  w.key("functions");
  w.begin_object();
  for (const Function* fn : functions_on_paths(topo, devices)) w.member(fn->bdf.str(), function_row(topo, inv, *fn));
  w.end_object();
}

}  // namespace report_detail

json check_document(const CheckReport& r) {
  std::ostringstream text;
  write_check_json(text, r, check_json(r), -1);
  return json::parse(text.str());
}

// A row per distinct decision: pairs of one class (rules/pair_classes.h: the walk's map type, the
// ports whose ACS could not be read, the host bridges when the path reaches the root complex) with
// the same common bridge (which the row names) and locality. CPU, kernel and allowlist are the same
// for every pair of a report. Each pair's ACS redirect ports are its own, in `port_lists`.
void write_check_json(std::ostream& out, const CheckReport& r, const json& head, int indent) {
  CheckTables t = number_pairs(r);
  JsonWriter w(out, indent);
  write_around_pairs(w, head, [&] {
    write_functions(w, r.topo, r.inv, {r.selected_devices.begin(), r.selected_devices.end()});
    w.key("decisions");
    w.begin_array();
    for (std::size_t k = 0; k < t.first_pair.size(); ++k) write_decision(w, r, t.first_pair[k], t.locality[k]);
    w.end_array();
    w.key("devices");
    w.begin_array();
    for (const Function* fn : t.devices) w.value(fn->bdf.str());
    w.end_array();
    w.key("port_lists");
    w.begin_array();
    for (const std::vector<const Function*>& ports : t.ports.lists()) {
      w.begin_array();
      for (const Function* port : ports) w.value(port->bdf.str());
      w.end_array();
    }
    w.end_array();
    write_kernel_answers(w, r);
    write_pairs(w, r, t);
  });
}

}  // namespace p2pcheck
