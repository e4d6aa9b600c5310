// check --json says all a pair's decision says: for every pair of every fixture (and under kernels
// that refuse, or cannot decide), its decisions row holds every member of the pair in full
// (pair_decision_json, explain --json's) but the pair's own, with the common bridge resolved and the
// pair's locality, its words naming the pair's listed ports where explain names them; its record's
// indexes name its devices and its ACS redirect ports (port_lists), and the hops rebuilt from the
// functions table (upstream links, up to the common bridge) equal the pair's hops.
#include "p2pcheck/report/compact_json.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "p2pcheck/explain/rule_text.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/model/machine_state.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/paths.h"
#include "p2pcheck/source/json_text.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

using json = nlohmann::ordered_json;

// A pair's hops from the document's tables: the GPU's chain up to the common bridge, the common
// bridge (or the host bridges), then the NVMe's chain down from below it.
json rebuilt_hops(const json& functions, const json& decision, const std::string& gpu, const std::string& nvme) {
  auto chain = [&](std::string at, const json& common) {
    std::vector<std::string> out;
    while (!at.empty() && (common.is_null() || at != common.get<std::string>())) {
      out.push_back(at);
      const json& up = functions.at(at).at("upstream");
      at = up.is_null() ? "" : up.get<std::string>();
    }
    return out;
  };
  auto hop = [&](const std::string& bdf, bool common) {
    const json& f = functions.at(bdf);
    return json{{"bdf", bdf},       {"host_bridge", nullptr}, {"role", f.at("role")},
                {"common", common}, {"acs", f.at("acs")},     {"link", f.at("link")}};
  };
  const json& common = decision.at("common_bridge");
  json hops = json::array();
  for (const std::string& bdf : chain(gpu, common)) hops.push_back(hop(bdf, false));
  if (!common.is_null()) {
    hops.push_back(hop(common.get<std::string>(), true));
  } else {
    std::string a = functions.at(gpu).at("host_bridge").get<std::string>();
    std::string b = functions.at(nvme).at("host_bridge").get<std::string>();
    for (const std::string& id : a == b ? std::vector<std::string>{a} : std::vector<std::string>{a, b})
      hops.push_back({{"bdf", nullptr}, {"host_bridge", id}, {"role", "host bridge"}, {"common", false}});
  }
  std::vector<std::string> down = chain(nvme, common);
  for (auto it = down.rbegin(); it != down.rend(); ++it) hops.push_back(hop(*it, false));
  return hops;
}

// What a pair has that its decisions row leaves out: the pair's own members (explain --json's), its
// ACS redirect ports and their parameter among them.
const std::vector<std::string> kPairOwn = {
    "gpu",  "nvme",   "nvme_name", "distance",     "path_distance",
    "hops", "kernel", "acs_fix",   "acs_redirect", "bandwidth_ceiling_bytes_per_s"};

// The pair's ACS redirect ports: its GPU side's list, then its NVMe side's.
json listed_ports(const json& doc, const json& record) {
  json ports = doc.at("port_lists").at(record[4].get<std::size_t>());
  for (const json& port : doc.at("port_lists").at(record[5].get<std::size_t>())) ports.push_back(port);
  return ports;
}

std::string join_ports(const json& ports) {
  std::string out;
  for (const json& port : ports) out += (out.empty() ? "" : ";") + port.get<std::string>();
  return out;
}

// A row's sentence as explain words it for the pair: the listed ports named.
json named(const json& sentence, const json& ports) {
  std::vector<Bdf> bdfs;
  for (const json& port : ports) bdfs.push_back(*Bdf::parse(port.get<std::string>()));
  return rule_naming_ports(sentence.get<std::string>(), bdfs);
}

// The row's member as explain --json has it for the pair: the pair's own fix devices and ACS
// command line filled in, the rule and the flows' reasons with its ports named.
json as_the_pairs(const std::string& key, json row, const json& one, const json& ports) {
  if (key == "fix" && row.is_object()) {
    // A fix that moves the pair's own GPU and NVMe, or acts on its ACS ports, names them in the pair.
    if (row["devices"].empty()) row["devices"] = one["devices"];
    if (row["kind"] == "disable_acs_redir") {
      EXPECT_TRUE(row["kernel_cmdline"].is_null());
      row["kernel_cmdline"] = one["kernel_cmdline"];
      for (const json& port : ports)
        EXPECT_EQ(row["text"].get<std::string>().find(port.get<std::string>()), std::string::npos);
      row["text"] = one["text"];
    }
  }
  if (key == "rule") row = named(row, ports);
  if (key == "flows")
    for (const char* flow : {"to_device", "to_storage"}) row[flow]["reason"] = named(row[flow]["reason"], ports);
  return row;
}

// The module's answers by pair index, as `kernel_answers` lists them.
std::map<std::size_t, json> kernel_answers(const json& doc) {
  std::map<std::size_t, json> out;
  for (json answer : doc.at("kernel_answers")) {
    const std::size_t pair = answer.at("pair").get<std::size_t>();
    answer.erase("pair");
    EXPECT_TRUE(out.emplace(pair, std::move(answer)).second) << "pair " << pair << " answered twice";
  }
  return out;
}

void expect_same_content(const CheckReport& report, const std::string& what) {
  SCOPED_TRACE(what);
  json doc = check_document(report);
  EXPECT_EQ(doc["schema_version"], 4);
  ASSERT_FALSE(doc.at("port_lists").empty());
  EXPECT_EQ(doc["port_lists"][0], json::array());  // a pair without ACS redirect ports: [.., 0, 0]
  ASSERT_EQ(doc["pairs"].size(), report.pairs.size());
  EXPECT_LE(doc["decisions"].size(), report.pairs.size());
  const json& devices = doc.at("devices");
  const std::map<std::size_t, json> kernel = kernel_answers(doc);
  for (std::size_t i = 0; i < report.pairs.size(); ++i) {
    json one = pair_decision_json(report, report.pairs[i]);
    one["flows"].erase("to_gpu");  // version 1's names, gone from version 3
    one["flows"].erase("from_gpu");
    const json& record = doc["pairs"][i];  // [gpu, nvme, decision, distance, gpu_ports, nvme_ports]
    ASSERT_TRUE(record.is_array() && record.size() == 6) << "pair " << i << ": " << record;
    const json& decision = doc["decisions"].at(record[2].get<std::size_t>());
    const json ports = listed_ports(doc, record);
    EXPECT_EQ(ports, one["acs_redirect"]) << "pair " << i;
    EXPECT_EQ(ports.empty() ? json(nullptr) : json("pci=disable_acs_redir=" + join_ports(ports)), one["acs_fix"])
        << "pair " << i;
    // The row is the one this pair alone would make: the pairs sharing it share all of it.
    json own_row = decision_row_json(report, report.pairs[i]);
    own_row["locality"] = decision["locality"];
    EXPECT_EQ(own_row, decision) << "pair " << i;
    // Every member of the pair in full is in its row, or is the pair's own (in its record or tables).
    for (auto it = one.begin(); it != one.end(); ++it) {
      if (std::find(kPairOwn.begin(), kPairOwn.end(), it.key()) != kPairOwn.end()) continue;
      ASSERT_TRUE(decision.contains(it.key())) << "pair " << i << ": " << it.key();
      EXPECT_EQ(as_the_pairs(it.key(), decision.at(it.key()), it.value(), ports), it.value())
          << "pair " << i << ": " << it.key();
    }
    std::size_t own = 0;
    for (const std::string& key : kPairOwn) own += one.contains(key);
    EXPECT_EQ(decision.size(), one.size() - own + 1)
        << "pair " << i << ": a row member beside the pair's and its locality";
    EXPECT_EQ(decision["locality"], locality_json(pair_locality(report, i), false)) << "pair " << i;
    // No text holds a placeholder to fill, and the rule names no ACS redirect port: pairs crossing
    // other ports share it.
    EXPECT_EQ(decision.dump().find("{acs_redirect}"), std::string::npos) << "pair " << i;
    for (const json& port : ports)
      for (const json& sentence :
           {decision["rule"], decision["flows"]["to_device"]["reason"], decision["flows"]["to_storage"]["reason"]})
        EXPECT_EQ(sentence.get<std::string>().find(port.get<std::string>()), std::string::npos) << "pair " << i;
    if (one["fix"].is_object() && one["fix"]["kind"] == "disable_acs_redir") {
      EXPECT_EQ(one["fix"]["devices"], ports) << "pair " << i;
    }
    EXPECT_EQ(devices.at(record[0].get<std::size_t>()), one["gpu"]);
    EXPECT_EQ(devices.at(record[1].get<std::size_t>()), one["nvme"]);
    EXPECT_EQ(record[3], one["distance"]);
    auto answer = kernel.find(i);
    EXPECT_EQ(answer == kernel.end() ? json(nullptr) : answer->second, one["kernel"]) << "pair " << i;
    const json hops =
        rebuilt_hops(doc["functions"], decision, one["gpu"].get<std::string>(), one["nvme"].get<std::string>());
    EXPECT_EQ(hops, one["hops"]) << "pair " << i;
  }
}

TEST(CompactJson, CarriesEveryPairsDecisionOnEveryFixture) {
  int fixtures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    if (!std::filesystem::is_directory(entry.path() / "root")) continue;
    ++fixtures;
    for (std::optional<std::string> kernel : {std::optional<std::string>(), std::optional<std::string>("5.4.0")}) {
      auto source = open_tree_source((entry.path() / "root").string());
      CheckOptions options;
      options.what_if_kernel = kernel;
      auto report = run_check(*source, options);
      expect_same_content(*report, entry.path().filename().string() + " " + kernel.value_or("own kernel"));
    }
  }
  EXPECT_GE(fixtures, 10);
}

// The lab's captures: real kernels' ACS redirect, and the p2pprobe module's recorded answers
// (each pair's `kernel`), judged with the scenario's --gpu and --nvme.
TEST(CompactJson, CarriesEveryPairsDecisionOnTheLabCaptures) {
  const std::filesystem::path lab = std::filesystem::path(P2PCHECK_SOURCE_DIR) / "fixtures/lab";
  int captures = 0, kernel_answers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(lab)) {
    const std::string name = entry.path().filename().string();
    const std::filesystem::path capture = entry.path() / (name + ".tar.zst");
    if (!std::filesystem::is_regular_file(capture)) continue;
    ++captures;
    CheckOptions options;
    std::ifstream args(entry.path() / "args");
    for (std::string flag, values; args >> flag >> values;) {
      std::vector<std::string>& side = flag == "--gpu" ? options.selection.gpu : options.selection.nvme;
      for (std::size_t from = 0, comma; from <= values.size(); from = comma + 1) {
        comma = std::min(values.find(',', from), values.size());
        side.push_back(values.substr(from, comma - from));
      }
    }
    auto source = open_dump_source(capture.string());
    auto report = run_check(*source, options);
    for (const PairDecision& d : report->pairs) kernel_answers += d.kernel.has_value();
    expect_same_content(*report, name);
  }
  EXPECT_GE(captures, 10);
  EXPECT_GT(kernel_answers, 0);
}

TEST(CompactJson, PrettyAndCompactParseAlike) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  auto report = run_check(*source, {});
  std::ostringstream compact, pretty;
  const json head = check_json(*report);
  write_check_json(compact, *report, head, -1);
  write_check_json(pretty, *report, head, 2);
  json written = json::parse(compact.str());
  EXPECT_EQ(head["result"], written["result"]);
  EXPECT_EQ(head["findings"], written["findings"]);
  EXPECT_FALSE(written["functions"].empty());
  // The tables go where the head's `pairs` is, before the pairs that refer to them.
  std::vector<std::string> keys;
  for (auto it = written.begin(); it != written.end(); ++it) keys.push_back(it.key());
  const std::vector<std::string> tables = {"functions",  "decisions",      "devices",
                                           "port_lists", "kernel_answers", "pairs"};
  EXPECT_TRUE(std::search(keys.begin(), keys.end(), tables.begin(), tables.end()) != keys.end());
  EXPECT_EQ(keys[std::find(keys.begin(), keys.end(), "functions") - keys.begin() - 1], "host_fix");
  EXPECT_EQ(compact.str().find('\n'), std::string::npos);
  EXPECT_EQ(json::parse(compact.str()), json::parse(pretty.str()));
  // pretty and compact are nlohmann's own layouts of the document
  EXPECT_EQ(pretty.str(), json_text(json::parse(pretty.str()), 2));
  EXPECT_EQ(compact.str(), json_text(written, -1));
}

// paths --json is a view of the check: on every fixture each pair's verdict and map type are its
// check decision's, the route kind follows the walk (redirected where ACS sends it up), the result
// is the check's, and the text is nlohmann's own layout, compact and pretty.
TEST(CompactJson, PathsCarryTheChecksVerdicts) {
  for (const auto& entry : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    const std::string root = entry.path().string() + "/root";
    if (!std::filesystem::exists(root + "/sys")) continue;
    SCOPED_TRACE(entry.path().filename().string());
    auto source = open_tree_source(root);
    auto report = run_check(*source, CheckOptions{});
    json check = check_document(*report);
    for (int indent : {-1, 2}) {
      std::ostringstream text;
      const json head = paths_head_json(*report);
      write_paths_json(text, *report, head, indent);
      json doc = json::parse(text.str());
      EXPECT_EQ(text.str(), json_text(doc, indent));
      EXPECT_EQ(doc["result"], check["result"]);
      ASSERT_EQ(doc["pairs"].size(), check["pairs"].size());
      for (std::size_t i = 0; i < report->pairs.size(); ++i) {
        const json& path = doc["pairs"][i];
        const json& record = check["pairs"][i];
        const json& decision = check["decisions"][record[2].get<std::size_t>()];
        EXPECT_EQ(path["gpu"], check["devices"][record[0].get<std::size_t>()]);
        EXPECT_EQ(path["nvme"], check["devices"][record[1].get<std::size_t>()]);
        EXPECT_EQ(path["locality"], decision["locality"]);
        EXPECT_EQ(path["verdict"], decision["verdict"]) << path;
        EXPECT_EQ(path["map_type"], decision["map_type"]) << path;
        const std::string kind = path["route"]["kind"];
        EXPECT_EQ(kind == "redirected", report->pairs.acs_redirected(i)) << path;
        EXPECT_EQ(kind == "root_complex", report->pairs.common(i) == nullptr) << path;
        EXPECT_EQ(path["route"]["host_bridges"].empty(), kind == "below_common_bridge") << path;
      }
    }
  }
}

// The tables and pairs are written where the head holds `pairs`, and last when it holds none:
// a document is never written without them.
TEST(CompactJson, TablesAndPairsAreNeverLeftOut) {
  auto written = [](const nlohmann::ordered_json& head) {
    std::string text;
    {
      JsonWriter w(text, -1);
      report_detail::write_around_pairs(w, head, [&] {
        w.key("pairs");
        w.begin_array();
        w.end_array();
      });
    }
    return text;
  };
  EXPECT_EQ(written({{"a", 1}, {"pairs", nullptr}, {"b", 2}}), R"({"a":1,"pairs":[],"b":2})");
  EXPECT_EQ(written({{"a", 1}}), R"({"a":1,"pairs":[]})");
}

}  // namespace
}  // namespace p2pcheck
