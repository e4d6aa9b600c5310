#include "p2pcheck/report/compact_json.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "p2pcheck/report/check.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/report/pair_route.h"
#include "p2pcheck/report/paths.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck {

using namespace report_detail;

namespace {

// `head` given its schema_version (2) and `tables` (name, value) before its "pairs" (none when it has
// no "pairs"), in place: the caller's document is the one written and kept.
void add_tables(json& head, std::vector<std::pair<std::string, json>> tables) {
  json out = object_for(head.size() + tables.size());
  for (auto it = head.begin(); it != head.end(); ++it) {
    if (it.key() == "pairs")
      for (auto& [name, value] : tables) out[name] = std::move(value);
    out[it.key()] = it.key() == "schema_version" ? json(kCheckJsonSchemaVersion) : std::move(it.value());
  }
  head = std::move(out);
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// What a decision row is shared by: the pair's class (rules/pair_classes.h) and the common bridge
// and ACS redirect ports its texts name.
struct DecisionKey {
  std::uint32_t cls = 0;
  const Function* common = nullptr;
  std::vector<const Function*> redirect;
  bool operator==(const DecisionKey&) const = default;
};

struct DecisionKeyHash {
  std::size_t operator()(const DecisionKey& k) const {
    std::size_t h = std::hash<std::uint32_t>()(k.cls) ^ (std::hash<const void*>()(k.common) << 1);
    for (const Function* f : k.redirect) h = h * 0x9e3779b97f4a7c15ull ^ std::hash<const void*>()(f);
    return h;
  }
};

// The constant text of a compact pair record, made once per device: a fabric has millions of
// pairs and a few thousand devices, so a record is a few appends. Devices are numbered densely by
// the caller (`slot`: PairList's end numbers, or the routes' own), so a piece is an index away.
// `gpu_head(gpu)` is `{"gpu": "<bdf>", "nvme": ` and `nvme_head(nvme)` is `"<bdf>", "<third>": `,
// laid out as nlohmann would at `indent`, each line after the first preceded by `inner`.
class RecordText {
 public:
  RecordText(int indent, const std::string& inner, const char* third) {
    const std::string next = indent >= 0 ? ",\n" + inner + std::string(static_cast<std::size_t>(indent), ' ') : ",";
    const char* colon = indent >= 0 ? "\": " : "\":";
    gpu_key_ =
        (indent >= 0 ? "{\n" + inner + std::string(static_cast<std::size_t>(indent), ' ') : "{") + "\"gpu" + colon;
    nvme_key_ = next + "\"nvme" + colon;
    third_key_ = next + "\"" + third + colon;
    distance_key_ = next + "\"distance" + colon;
    locality_key_ = next + "\"locality" + colon;
    kernel_key_ = next + "\"kernel" + colon;
    close_ = indent >= 0 ? "\n" + inner + "}" : "}";
  }
  const std::string& gpu_head(const Function& gpu, std::uint32_t slot) {
    return piece(gpu_, gpu, slot, gpu_key_, nvme_key_);
  }
  const std::string& nvme_head(const Function& nvme, std::uint32_t slot) {
    return piece(nvme_, nvme, slot, "", third_key_);
  }
  const std::string& quoted(const Function& fn, std::uint32_t slot) { return piece(quoted_, fn, slot, "", ""); }
  const std::string& distance_key() const { return distance_key_; }
  const std::string& kernel_key() const { return kernel_key_; }
  const std::string& locality_key() const { return locality_key_; }
  const std::string& close() const { return close_; }

 private:
  static const std::string& piece(std::vector<std::string>& pieces, const Function& fn, std::uint32_t slot,
                                  const std::string& before, const std::string& after) {
    if (slot >= pieces.size()) pieces.resize(slot + 1);
    std::string& text = pieces[slot];
    if (text.empty()) text = before + json_text(json(fn.bdf.str()), -1) + after;  // never empty once made
    return text;
  }

  std::string gpu_key_, nvme_key_, third_key_, distance_key_, locality_key_, kernel_key_, close_;
  std::vector<std::string> gpu_, nvme_, quoted_;  // by slot
};

void append_number(std::string& out, long long value) {
  char digits[24];
  auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

// A record's `"locality": {...}` text, made once per distinct locality (a fabric's pairs share a few).
class LocalityTexts {
 public:
  LocalityTexts(const RecordText& record, int indent, const std::string& inner)
      : record_(record), indent_(indent), inner_(inner) {}
  const std::string& of(const Locality& l) {
    auto [it, made] = texts_.try_emplace(std::make_tuple(l.cls, std::string(l.nvidia_smi), l.why));
    if (!made) return it->second;
    std::string object = json_text(locality_json(l, false), indent_);
    if (indent_ >= 0)  // its lines one level deeper than the record's
      replace_all(object, "\n", "\n" + inner_ + std::string(static_cast<std::size_t>(indent_), ' '));
    it->second = record_.locality_key() + object;
    return it->second;
  }

 private:
  const RecordText& record_;
  int indent_;
  std::string inner_;
  std::map<std::tuple<LocalityClass, std::string, std::string>, std::string> texts_;
};

// A check record's text from its "decision" value to its distance: `<decision>, "distance": <d>`,
// made once for each decision and distance met (a fabric has a few dozen of each, and millions of pairs).
class DecisionTexts {
 public:
  explicit DecisionTexts(const RecordText& record) : record_(record) {}
  const std::string& of(std::uint32_t decision, std::optional<int> distance) {
    auto [it, made] = texts_.try_emplace(Key{decision, distance});
    if (!made) return it->second;
    std::string& text = it->second;
    append_number(text, decision);
    text += record_.distance_key();
    if (distance)
      append_number(text, *distance);
    else
      text += "null";
    return text;
  }

 private:
  struct Key {
    std::uint32_t decision;
    std::optional<int> distance;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::size_t{k.decision} * 0x9e3779b97f4a7c15ull ^
             (k.distance ? std::size_t{1} << 40 | static_cast<std::uint32_t>(*k.distance) : 0);
    }
  };
  const RecordText& record_;
  std::unordered_map<Key, std::string, KeyHash> texts_;
};

// A top-level member whose array (or, with `object`, whose object) is written element by element:
// `element` appends element i (an object's `"key": value`), each line after its first preceded by
// the given indentation.
struct Streamed {
  std::string key;
  std::size_t count;
  std::function<void(std::string& out, std::size_t i, const std::string& inner)> element;
  bool object = false;
};

// `value` as an element of a streamed array: nlohmann's text, each line after the first shifted.
void append_shifted(std::string& out, const json& value, int indent, const std::string& inner) {
  const std::string one = json_text(value, indent);
  for (char c : one) {
    out += c;
    if (c == '\n') out += inner;
  }
}

// `"key": value` as a member of a streamed object, laid out as append_shifted() lays out an element.
void append_member(std::string& out, const std::string& key, const json& value, int indent, const std::string& inner) {
  out += json_text(json(key), -1);
  out += indent >= 0 ? ": " : ":";
  append_shifted(out, value, indent, inner);
}

// write_json_streamed() (source/json_text.h) for several members, in the document's order: the
// functions, decisions and pairs of a fabric are each written as they are made, none held whole
// (the functions table was most of the memory a check --json touched beyond the check's).
void write_streamed(std::ostream& out, json& doc, const std::vector<Streamed>& members, int indent) {
  std::vector<std::string> markers;
  for (std::size_t m = 0; m < members.size(); ++m) {
    markers.push_back(json_text(json("\x01p2pcheck-streamed-" + std::to_string(m) + "\x01"), -1));
    doc[members[m].key] = json::parse(markers.back());
  }
  const std::string text = json_text(doc, indent);
  const std::string inner = indent >= 0 ? std::string(static_cast<std::size_t>(2 * indent), ' ') : "";
  std::size_t from = 0;
  constexpr std::size_t kChunk = std::size_t{1} << 18;
  std::string chunk;
  chunk.reserve(kChunk + 4096);
  for (std::size_t m = 0; m < members.size(); ++m) {
    // An unescaped quote before the value cannot occur inside a string: found only as the member.
    std::string found = json_text(json(members[m].key), -1) + (indent >= 0 ? ": " : ":") + markers[m];
    std::size_t at = text.find(found, from);
    if (at == std::string::npos) continue;
    at += found.size() - markers[m].size();
    out.write(text.data() + from, static_cast<std::streamsize>(at - from));
    const char* open = members[m].object ? "{" : "[";
    const char* close = members[m].object ? "}" : "]";
    if (members[m].count == 0) out << open << close;
    if (members[m].count > 0) out << open << (indent >= 0 ? "\n" : "");
    for (std::size_t i = 0; i < members[m].count; ++i) {
      chunk += inner;
      members[m].element(chunk, i, inner);
      if (i + 1 < members[m].count) chunk += indent >= 0 ? ",\n" : ",";
      if (chunk.size() >= kChunk) {  // written in big blocks, not one << per element
        out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        chunk.clear();
      }
    }
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    chunk.clear();
    if (members[m].count > 0)
      out << (indent >= 0 ? "\n" + std::string(static_cast<std::size_t>(indent), ' ') : "") << close;
    from = at + markers[m].size();
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
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

// `functions` as a streamed member: each row made, written and freed in turn.
Streamed functions_streamed(const Topology& topo, const Inventory& inv, const std::vector<const Function*>& rows,
                            int indent) {
  return {"functions", rows.size(),
          [&topo, &inv, &rows, indent](std::string& text, std::size_t k, const std::string& shift) {
            append_member(text, rows[k]->bdf.str(), function_row(topo, inv, *rows[k]), indent, shift);
          },
          true};
}

}  // namespace

json functions_json(const Topology& topo, const Inventory& inv, const std::vector<Bdf>& devices) {
  std::vector<const Function*> rows = functions_on_paths(topo, devices);
  // Appended, not looked up: the rows' BDFs are distinct, and a lookup per key made it quadratic.
  json out = object_for(rows.size());
  auto& members = out.get_ref<json::object_t&>();
  for (const Function* fn : rows) members.emplace_back(fn->bdf.str(), function_row(topo, inv, *fn));
  return out;
}

json check_document(const CheckReport& r) {
  json head = check_json(r);
  std::ostringstream text;
  write_check_json(text, r, head, -1);
  return json::parse(text.str());
}

void write_check_json(std::ostream& out, const CheckReport& r, json& head, int indent) {
  // A row per distinct decision: pairs of one class (rules/pair_classes.h: the walk's map type, the
  // ports whose ACS could not be read, the host bridges when the path reaches the root complex) with
  // the same common bridge and ACS redirect ports, which the texts name. CPU, kernel and allowlist
  // are the same for every pair of a report.
  std::unordered_map<DecisionKey, std::uint32_t, DecisionKeyHash> index;
  std::vector<std::uint32_t> decision_of(r.pairs.size());
  std::vector<std::size_t> first_pair;  // each decision's first pair: the decision is made from it
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    DecisionKey key{r.pairs.class_index(i), r.pairs.common(i), {}};
    if (r.pairs.acs_redirected(i)) key.redirect = r.pairs.walk(i).acs_redirect;
    auto [it, added] = index.try_emplace(std::move(key), static_cast<std::uint32_t>(first_pair.size()));
    if (added) first_pair.push_back(i);
    decision_of[i] = it->second;
  }
  add_tables(head, {{"functions", json::object()}, {"decisions", json::array()}});
  const std::vector<const Function*> rows =
      functions_on_paths(r.topo, {r.selected_devices.begin(), r.selected_devices.end()});
  const std::string inner = indent >= 0 ? std::string(static_cast<std::size_t>(2 * indent), ' ') : "";
  RecordText record(indent, inner, "decision");
  DecisionTexts decisions(record);
  LocalityTexts localities(record, indent, inner);
  write_streamed(out, head,
                 {functions_streamed(r.topo, r.inv, rows, indent),
                  {"decisions", first_pair.size(),
                   [&](std::string& text, std::size_t k, const std::string& shift) {
                     append_shifted(text, decision_row_json(r, r.pairs[first_pair[k]]), indent, shift);
                   }},
                  {"pairs", r.pairs.size(),
                   [&](std::string& text, std::size_t i, const std::string&) {
                     text += record.gpu_head(r.pairs.gpu(i), r.pairs.gpu_end(i));
                     text += record.nvme_head(r.pairs.nvme(i), r.pairs.nvme_end(i));
                     text += decisions.of(decision_of[i], r.pairs.distance(i));
                     text += localities.of(pair_locality(r, i));
                     if (r.pairs.kernel(i)) {  // the few pairs the kernel module answered
                       std::string kernel = json_text(kernel_answer_json(r.pairs[i]), indent);
                       if (indent >= 0)  // its lines one level deeper than the record's
                         replace_all(kernel, "\n", "\n" + inner + std::string(static_cast<std::size_t>(indent), ' '));
                       text += record.kernel_key();
                       text += kernel;
                     }
                     text += record.close();
                   }}},
                 indent);
}

namespace {

// A paths document's routes, their devices numbered: a fabric's millions of routes share a few
// thousand devices, so a record's pieces are found by its devices' numbers.
struct Routes {
  std::vector<const Function*> devices;  // by number: each route's GPU, NVMe and common bridge
  std::unordered_map<const Function*, std::uint32_t> numbers;
  std::uint32_t number(const Function& fn) {
    auto [it, added] = numbers.try_emplace(&fn, static_cast<std::uint32_t>(devices.size()));
    if (added) devices.push_back(&fn);
    return it->second;
  }
};

// How the pair's traffic goes, from its walk alone, in pair_route()'s kinds (pair_route.h): it turns
// at the common bridge, ACS redirect sends it up to the host bridge and back, it has no common
// bridge and goes through the host bridge(s), or (ACS unread) either of the first two. The host
// bridges are the functions' own strings, so a pair's route is a key without copying them.
struct PathsRoute {
  RouteKind kind = RouteKind::kBelowCommonBridge;
  const std::string* host_bridges[2] = {nullptr, nullptr};
  auto key(std::uint32_t cls) const { return std::make_tuple(cls, kind, host_bridges[0], host_bridges[1]); }
};

PathsRoute paths_route(const CheckReport& r, std::size_t i) {
  PathsRoute route;
  const Function* common = r.pairs.common(i);
  if (!common) {
    route.kind = RouteKind::kRootComplex;
    route.host_bridges[0] = &r.pairs.gpu_chain(i).back()->host_bridge;
    const std::string* nvme = &r.pairs.nvme_chain(i).back()->host_bridge;
    if (*nvme != *route.host_bridges[0]) route.host_bridges[1] = nvme;
  } else if (r.pairs.acs_redirected(i) || !r.pairs.shared(i).walk.acs_unknown.empty()) {
    route.kind = r.pairs.acs_redirected(i) ? RouteKind::kRedirected : RouteKind::kRedirectUnknown;
    route.host_bridges[0] = &common->host_bridge;
  }
  return route;
}

json route_json(const PathsRoute& route) {
  json hbs = json::array();
  for (const std::string* hb : route.host_bridges)
    if (hb) hbs.push_back(*hb);
  json out = object_for(2);
  out["kind"] = route_kind_token(route.kind);
  out["host_bridges"] = std::move(hbs);
  return out;
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

void write_paths_json(std::ostream& out, const CheckReport& r, json& head, int indent) {
  Routes routes;
  std::vector<Bdf> devices;
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    routes.number(r.pairs.gpu(i));
    routes.number(r.pairs.nvme(i));
    if (r.pairs.common(i)) routes.number(*r.pairs.common(i));
  }
  for (const Function* fn : routes.devices) devices.push_back(fn->bdf);
  json nvmes = json::array();
  for (const auto& c : r.inv.nvmes)
    nvmes.push_back({{"bdf", c.bdf.str()}, {"name", c.name.empty() ? json(nullptr) : json(c.name)}});
  add_tables(head, {{"nvme", std::move(nvmes)}, {"functions", json::object()}});
  // functions_json() puts them in BDF order with their upstream chains; a common bridge is on its
  // GPU's chain already, so it adds nothing there.
  const std::vector<const Function*> rows = functions_on_paths(r.topo, devices);
  const std::string inner = indent >= 0 ? std::string(static_cast<std::size_t>(2 * indent), ' ') : "";
  const std::string next = indent >= 0 ? ",\n" + inner + std::string(static_cast<std::size_t>(indent), ' ') : ",";
  RecordText record(indent, inner, "common_bridge");
  LocalityTexts localities(record, indent, inner);
  // The verdict and route members, made once per class and route (a fabric's pairs share a few).
  std::map<std::tuple<std::uint32_t, RouteKind, const std::string*, const std::string*>, std::string> tails;
  write_streamed(out, head,
                 {functions_streamed(r.topo, r.inv, rows, indent),
                  {"pairs", r.pairs.size(),
                   [&](std::string& text, std::size_t i, const std::string&) {
                     const std::vector<const Function*>& gpu = r.pairs.gpu_chain(i);
                     const std::vector<const Function*>& nvme = r.pairs.nvme_chain(i);
                     const ChainMeet at = meet_in_chains(gpu, nvme);
                     text += record.gpu_head(r.pairs.gpu(i), routes.number(r.pairs.gpu(i)));
                     text += record.nvme_head(r.pairs.nvme(i), routes.number(r.pairs.nvme(i)));
                     if (at.met)
                       text += record.quoted(*gpu[at.a], routes.number(*gpu[at.a]));
                     else
                       text += "null";
                     text += record.distance_key();
                     append_number(text, static_cast<long long>(at.met ? at.a + at.b : gpu.size() + nvme.size()));
                     text += localities.of(pair_locality(r, i));
                     const PathsRoute route = paths_route(r, i);
                     auto [tail, made] = tails.try_emplace(route.key(r.pairs.class_index(i)));
                     if (made) {
                       const PairDecision& d = r.pairs.shared(i);
                       std::string object = json_text(route_json(route), indent);
                       if (indent >= 0)  // its lines one level deeper than the record's
                         replace_all(object, "\n", "\n" + inner + std::string(static_cast<std::size_t>(indent), ' '));
                       const char* colon = indent >= 0 ? "\": " : "\":";
                       tail->second = next + "\"verdict" + colon + json_text(json(to_string(d.verdict)), -1) + next +
                                      "\"map_type" + colon + json_text(json(to_string(d.map_type)), -1) + next +
                                      "\"route" + colon + object;
                     }
                     text += tail->second;
                     text += record.close();
                   }}},
                 indent);
}

}  // namespace p2pcheck
