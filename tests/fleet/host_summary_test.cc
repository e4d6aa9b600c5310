#include "p2pcheck/fleet/host_summary.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <tuple>
#include <utility>

#include "p2pcheck/report/check.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/source.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

using nlohmann::ordered_json;

ordered_json pair_json(const char* verdict, const char* path, ordered_json blocked, bool acs_redirect, bool host_check,
                       bool acs_unknown = false) {
  return {{"gpu", "0000:03:00.0"},
          {"nvme", "0000:05:00.0"},
          {"nvme_name", "nvme0"},
          {"map_type", "NOT_SUPPORTED"},
          {"verdict", verdict},
          {"path", {{"map_type", "NOT_SUPPORTED"}, {"verdict", path}}},
          {"blocked_by", blocked},
          {"rule", "the rule"},
          {"flows", {{"to_gpu", {{"verdict", verdict}}}, {"from_gpu", {{"verdict", verdict}}}}},
          {"acs_fix", acs_redirect ? ordered_json("pci=disable_acs_redir=0000:02:00.0") : ordered_json(nullptr)},
          {"host_check", host_check ? ordered_json::object() : ordered_json(nullptr)},
          {"acs_redirect", acs_redirect ? ordered_json::array({"0000:02:00.0"}) : ordered_json::array()},
          {"acs_unknown", acs_unknown ? ordered_json::array({"0000:02:00.0"}) : ordered_json::array()}};
}

ordered_json check_doc() {
  return {{"schema", "p2pcheck.check"},
          {"schema_version", 1},
          {"tool_version", "0.1.0"},
          {"source", "archive x"},
          {"result", "FAIL"},
          {"kernel", {{"release", "6.8.0"}}},
          {"cpu", {{"model_name", "AMD EPYC"}}},
          {"gpus", {"0000:03:00.0"}},
          {"nvme", {{{"bdf", "0000:05:00.0"}, {"name", "nvme0"}}}},
          {"findings",
           {{{"id", "kernel.config_p2pdma"},
             {"level", "FAIL"},
             {"subject", ""},
             {"concerns_selected_pairs", true},
             {"message", "no P2PDMA"},
             {"fix", "rebuild"}}}},
          {"pairs", {pair_json("not_supported", "supported", {"kernel_without_p2pdma"}, false, true)}}};
}

// A version 1 pair's members give the causes the model gives (the reader and the model agree).
// The error summarize_check_json() gives for `doc`, or "no error".
std::string message(const ordered_json& doc) {
  try {
    summarize_check_json(doc, "bad.json");
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(FleetHostSummary, ReadsCausesFromSavedPairs) {
  auto cause = [](ordered_json pair) {
    ordered_json doc = check_doc();
    doc["pairs"] = ordered_json::array({std::move(pair)});
    return summarize_check_json(doc, "f.json").pairs.at(0).cause;
  };
  EXPECT_EQ(cause(pair_json("supported", "supported", ordered_json::array(), false, false)), Cause::kNone);
  EXPECT_EQ(cause(pair_json("not_supported", "supported", {"known_bad_kernel"}, false, false)), Cause::kKernelKnownBad);
  EXPECT_EQ(cause(pair_json("not_supported", "not_supported", ordered_json::array(), true, true)), Cause::kAcsRedirect);
  EXPECT_EQ(cause(pair_json("not_supported", "not_supported", ordered_json::array(), false, true)), Cause::kHostBridge);
  EXPECT_EQ(cause(pair_json("unknown", "unknown", ordered_json::array(), false, true, true)), Cause::kAcsUnknown);
  // A token this p2pcheck has no row for blocks nothing it knows: the path's cause stands.
  EXPECT_EQ(cause(pair_json("unknown", "unknown", {"newer_token"}, false, true)), Cause::kPathUnknown);
}

TEST(FleetHostSummary, ReadsASavedCheckJson) {
  HostSummary s = summarize_check_json(check_doc(), "racks/a/node-17.json");
  EXPECT_EQ(s.host, "node-17");
  EXPECT_EQ(s.format, "check --json");
  EXPECT_EQ(s.result, Result::kFail);
  EXPECT_EQ(s.kernel, "6.8.0");
  EXPECT_EQ(s.gpus, 1u);
  EXPECT_EQ(s.nvmes, 1u);
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].fix, "rebuild");
  ASSERT_EQ(s.pairs.size(), 1u);
  EXPECT_EQ(s.pairs[0].cause, Cause::kKernelConfigP2pdma);
  EXPECT_EQ(s.pairs[0].nvme_name, "nvme0");
  EXPECT_TRUE(s.topology.empty());  // a saved check --json has no PCI tree
}

// Schema 2: pairs refer to a row of `decisions`, the NVMe's name is in the top-level table.
TEST(FleetHostSummary, ReadsASavedCheckJsonOfSchemaTwo) {
  ordered_json v2 = check_doc();
  v2["schema_version"] = 2;
  ordered_json decision = v2["pairs"][0];
  for (const char* key : {"gpu", "nvme", "nvme_name"}) decision.erase(key);
  decision["common_bridge"] = nullptr;
  v2["decisions"] = ordered_json::array({decision});  // {decision} alone is a copy under clang (CWG 1467)
  v2["pairs"] = {{{"gpu", "0000:03:00.0"}, {"nvme", "0000:05:00.0"}, {"decision", 0}, {"distance", -1}}};
  HostSummary s = summarize_check_json(v2, "racks/a/node-17.json");
  HostSummary s1 = summarize_check_json(check_doc(), "racks/a/node-17.json");
  ASSERT_EQ(s.pairs.size(), 1u);
  EXPECT_EQ(s.pairs[0].gpu, "0000:03:00.0");
  EXPECT_EQ(s.pairs[0].nvme_name, "nvme0");
  EXPECT_EQ(s.pairs[0].cause, s1.pairs[0].cause);
  EXPECT_EQ(s.pairs[0].verdict, s1.pairs[0].verdict);
  EXPECT_EQ(s.pairs[0].rule, s1.pairs[0].rule);
  EXPECT_EQ(s.result, s1.result);
  // An older p2pcheck's rows had {acs_redirect} placeholders and no common_bridge: refused, not misread.
  v2["decisions"][0].erase("common_bridge");
  EXPECT_THROW(summarize_check_json(v2, "old.json"), Error);
  v2["decisions"][0]["common_bridge"] = nullptr;
  v2["pairs"][0]["decision"] = 1;
  EXPECT_THROW(summarize_check_json(v2, "bad.json"), Error);
  v2.erase("decisions");
  EXPECT_THROW(summarize_check_json(v2, "bad.json"), Error);
}

// Schema 3: pairs are [gpu, nvme, decision, distance], indexes into `devices` and `decisions`; a
// record of another shape or an index out of range names the record.
TEST(FleetHostSummary, ReadsASavedCheckJsonOfSchemaThree) {
  ordered_json v3 = check_doc();
  v3["schema_version"] = 3;
  ordered_json decision = v3["pairs"][0];
  for (const char* key : {"gpu", "nvme", "nvme_name"}) decision.erase(key);
  decision["common_bridge"] = nullptr;
  decision["locality"] = {{"class", "same_numa_node"}, {"nvidia_smi", "NODE"}, {"why", nullptr}};
  v3["decisions"] = ordered_json::array({decision});
  v3["devices"] = {"0000:03:00.0", "0000:05:00.0"};
  v3["kernel_answers"] = ordered_json::array();
  v3["pairs"] = ordered_json::array({ordered_json::array({0, 1, 0, -1})});
  HostSummary s = summarize_check_json(v3, "racks/a/node-17.json");
  HostSummary s1 = summarize_check_json(check_doc(), "racks/a/node-17.json");
  ASSERT_EQ(s.pairs.size(), 1u);
  EXPECT_EQ(s.pairs[0].gpu, "0000:03:00.0");
  EXPECT_EQ(s.pairs[0].nvme, "0000:05:00.0");
  EXPECT_EQ(s.pairs[0].nvme_name, "nvme0");
  EXPECT_EQ(s.pairs[0].locality, "same_numa_node");
  EXPECT_EQ(s.pairs[0].cause, s1.pairs[0].cause);
  EXPECT_EQ(s.pairs[0].verdict, s1.pairs[0].verdict);
  ordered_json bad = v3;
  bad["pairs"][0] = {{"gpu", "0000:03:00.0"}};  // a version 2 record
  EXPECT_EQ(message(bad), "bad.json: pairs[0]: expected [gpu, nvme, decision, distance]");
  bad = v3;
  bad["pairs"][0][1] = 2;
  EXPECT_EQ(message(bad), "bad.json: pairs[0][1]: expected an index into devices");
  bad = v3;
  bad["pairs"][0][2] = -1;
  EXPECT_EQ(message(bad), "bad.json: pairs[0][2]: expected an index into decisions");
  bad = v3;
  bad["devices"][0] = "";  // a device no pair could be named by, as version 2's empty `gpu` is refused
  EXPECT_EQ(message(bad).rfind("bad.json: devices: expected an array of PCI addresses", 0), 0u) << message(bad);
}

// Schema 4: pairs are [gpu, nvme, decision, distance, gpu_ports, nvme_ports], the last two indexes
// into `port_lists`; the row's words speak of the pair's listed ports and are read with them named,
// as the model words the pair (and as version 3's row named them).
TEST(FleetHostSummary, ReadsASavedCheckJsonOfSchemaFour) {
  ordered_json v4 = check_doc();
  v4["schema_version"] = 4;
  ordered_json decision = pair_json("not_supported", "not_supported", ordered_json::array(), false, true);
  for (const char* key : {"gpu", "nvme", "nvme_name", "acs_fix", "acs_redirect"}) decision.erase(key);
  decision["rule"] = "ACS redirect on the pair's listed ports sends the traffic up through the root complex; refused";
  decision["common_bridge"] = "0000:01:00.0";
  decision["locality"] = {{"class", "same_switch"}, {"nvidia_smi", "PIX"}, {"why", nullptr}};
  v4["decisions"] = ordered_json::array({decision});
  v4["devices"] = {"0000:03:00.0", "0000:05:00.0", "0000:06:00.0"};
  v4["port_lists"] = {ordered_json::array(), {"0000:02:00.0"}, {"0000:02:02.0", "0000:02:03.0"}};
  v4["kernel_answers"] = ordered_json::array();
  // Two pairs of one row crossing different ports, and one crossing none (its row, unnamed, alike).
  v4["pairs"] = {{0, 1, 0, -1, 1, 2}, {0, 2, 0, -1, 0, 1}, {0, 2, 0, -1, 0, 0}};
  HostSummary s = summarize_check_json(v4, "racks/a/node-17.json");
  ASSERT_EQ(s.pairs.size(), 3u);
  EXPECT_EQ(s.pairs[0].nvme, "0000:05:00.0");
  EXPECT_EQ(s.pairs[0].nvme_name, "nvme0");
  EXPECT_EQ(s.pairs[0].locality, "same_switch");
  EXPECT_EQ(s.pairs[0].cause, Cause::kAcsRedirect);
  EXPECT_EQ(s.pairs[0].acs_ports,
            (std::vector<Bdf>{*Bdf::parse("0000:02:00.0"), *Bdf::parse("0000:02:02.0"), *Bdf::parse("0000:02:03.0")}));
  EXPECT_EQ(s.pairs[0].rule,
            "ACS redirect on 0000:02:00.0, 0000:02:02.0, 0000:02:03.0 sends the traffic up through the root complex; "
            "refused");
  EXPECT_EQ(s.pairs[1].nvme, "0000:06:00.0");
  EXPECT_EQ(s.pairs[1].acs_ports, std::vector<Bdf>{*Bdf::parse("0000:02:00.0")});
  EXPECT_EQ(s.pairs[1].rule, "ACS redirect on 0000:02:00.0 sends the traffic up through the root complex; refused");
  // No ports: the host check refused it, not ACS redirect.
  EXPECT_EQ(s.pairs[2].cause, Cause::kHostBridge);
  EXPECT_TRUE(s.pairs[2].acs_ports.empty());
  ordered_json bad = v4;
  bad["pairs"][0] = {0, 1, 0, -1};  // a version 3 record
  EXPECT_EQ(message(bad), "bad.json: pairs[0]: expected [gpu, nvme, decision, distance, gpu_ports, nvme_ports]");
  bad = v4;
  bad["pairs"][1][5] = 3;
  EXPECT_EQ(message(bad), "bad.json: pairs[1][5]: expected an index into port_lists");
  bad = v4;
  bad["port_lists"][1] = {"02:00.0x"};
  EXPECT_EQ(message(bad).rfind("bad.json: port_lists: expected an array of arrays of PCI addresses", 0), 0u)
      << message(bad);
  bad.erase("port_lists");
  EXPECT_EQ(message(bad).rfind("bad.json: port_lists: expected an array (schema_version 4)", 0), 0u) << message(bad);
}

void expect_same_summary(const HostSummary& model, const HostSummary& saved) {
  EXPECT_EQ(saved.result, model.result);
  EXPECT_EQ(std::tie(saved.fail_on.refused, saved.fail_on.stack, saved.fail_on.unknown, saved.fail_on.warn),
            std::tie(model.fail_on.refused, model.fail_on.stack, model.fail_on.unknown, model.fail_on.warn));
  EXPECT_EQ(saved.kernel, model.kernel);
  EXPECT_EQ(saved.cpu, model.cpu);
  EXPECT_EQ(saved.gpus, model.gpus);
  EXPECT_EQ(saved.nvmes, model.nvmes);
  EXPECT_EQ(saved.host, model.host);
  ASSERT_EQ(saved.findings.size(), model.findings.size());
  for (std::size_t i = 0; i < model.findings.size(); ++i) {
    const HostFinding &a = model.findings[i], &b = saved.findings[i];
    EXPECT_EQ(std::tie(b.id, b.level, b.subject, b.message, b.fix, b.concerns),
              std::tie(a.id, a.level, a.subject, a.message, a.fix, a.concerns))
        << a.id;
  }
  ASSERT_EQ(saved.pairs.size(), model.pairs.size());
  for (std::size_t i = 0; i < model.pairs.size(); ++i) {
    const HostPair &a = model.pairs[i], &b = saved.pairs[i];
    SCOPED_TRACE("pair " + std::to_string(i));
    EXPECT_EQ(std::tie(b.gpu, b.nvme, b.nvme_name, b.verdict, b.to_gpu, b.from_gpu, b.map_type),
              std::tie(a.gpu, a.nvme, a.nvme_name, a.verdict, a.to_gpu, a.from_gpu, a.map_type));
    EXPECT_EQ(std::tie(b.cause, b.rule, b.acs_ports, b.locality), std::tie(a.cause, a.rule, a.acs_ports, a.locality));
  }
  ASSERT_TRUE(saved.fix && model.fix);
  EXPECT_EQ(acs_param(*saved.fix), acs_param(*model.fix));
  EXPECT_EQ(saved.fix->acs_ports, model.fix->acs_ports);
  EXPECT_EQ(saved.fix->acs_ids, model.fix->acs_ids);
  ASSERT_EQ(saved.fix->steps.size(), model.fix->steps.size());
  for (std::size_t i = 0; i < model.fix->steps.size(); ++i)
    EXPECT_EQ(saved.fix->steps[i].kind, model.fix->steps[i].kind);
}

// A host summarised from its report (captures, imports) and from its check --json saved (support
// desks' files) are the same summary, on every fixture and under a kernel that refuses.
TEST(FleetHostSummary, ModelAndSavedCheckJsonAgreeOnEveryFixture) {
  int acs_redirect_pairs = 0, fixtures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    if (!std::filesystem::is_directory(entry.path() / "root")) continue;
    ++fixtures;
    for (const char* kernel : {"", "5.4.0"}) {
      SCOPED_TRACE(entry.path().filename().string() + " " + kernel);
      auto source = open_tree_source((entry.path() / "root").string());
      CheckOptions options;
      if (*kernel) options.what_if_kernel = kernel;
      auto report = run_check(*source, options);
      HostSummary model = summarize_report(*report, nullptr, "saved.json");
      HostSummary saved = summarize_check_json(check_document(*report), "saved.json");
      expect_same_summary(model, saved);
      for (const HostPair& p : model.pairs)
        acs_redirect_pairs += p.cause == Cause::kAcsRedirect && !p.acs_ports.empty();
    }
  }
  EXPECT_GE(fixtures, 10);
  EXPECT_GT(acs_redirect_pairs, 0);  // the ports really were filled in somewhere
}

// schema_version 1, 2 and 3, as older p2pchecks saved them (tests/fleet/saved/), read as this
// p2pcheck judges the same machine: the devices, verdicts, flows and causes of their pairs (and
// version 2's and 3's localities, version 3's rules and ACS redirect ports: its rows name them).
TEST(FleetHostSummary, ReadsSavedFilesOfRetiredVersions) {
  int acs_redirect_pairs = 0;
  for (const auto& [fixture, version] :
       {std::pair("rhel98-epyc", 1), std::pair("rhel98-epyc", 2), std::pair("xeon-broadwell-switch-acs", 3)}) {
    auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/" + fixture + "/root");
    HostSummary model = summarize_report(*run_check(*source, {}), nullptr, "x");
    const std::string name = std::string(fixture) + "-schema" + std::to_string(version) + ".json";
    SCOPED_TRACE(name);
    std::ifstream in(std::string(P2PCHECK_SOURCE_DIR) + "/tests/fleet/saved/" + name);
    ordered_json doc = ordered_json::parse(in);
    ASSERT_EQ(doc["schema_version"], version);
    HostSummary saved = summarize_check_json(doc, name);
    ASSERT_EQ(saved.pairs.size(), model.pairs.size());
    ASSERT_FALSE(saved.pairs.empty());
    for (std::size_t i = 0; i < model.pairs.size(); ++i) {
      const HostPair &a = model.pairs[i], &b = saved.pairs[i];
      EXPECT_EQ(std::tie(b.gpu, b.nvme, b.nvme_name, b.verdict, b.to_gpu, b.from_gpu, b.map_type, b.cause),
                std::tie(a.gpu, a.nvme, a.nvme_name, a.verdict, a.to_gpu, a.from_gpu, a.map_type, a.cause));
      if (version >= 2) {
        EXPECT_EQ(b.locality, a.locality);
      }
      if (version == 3) {
        EXPECT_EQ(std::tie(b.rule, b.acs_ports), std::tie(a.rule, a.acs_ports));
        acs_redirect_pairs += !b.acs_ports.empty();
      }
      EXPECT_FALSE(b.cause == Cause::kNone && b.verdict != Verdict::kSupported);
    }
    EXPECT_EQ(saved.result, model.result);
  }
  EXPECT_GT(acs_redirect_pairs, 0);
}

TEST(FleetHostSummary, HostileDocumentsNameTheMember) {
  auto message = [](ordered_json doc) {
    try {
      summarize_check_json(doc, "bad.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ordered_json d = check_doc();
  d["schema"] = "p2pcheck.topo";
  EXPECT_NE(message(d).find("bad.json: schema: expected \"p2pcheck.check\""), std::string::npos) << message(d);
  d = check_doc();
  d["schema_version"] = 99;
  EXPECT_NE(message(d).find("newer than this p2pcheck reads"), std::string::npos) << message(d);
  d = check_doc();
  d["result"] = "MAYBE";
  EXPECT_NE(message(d).find("result: expected PASS, FAIL, UNKNOWN or NO PAIRS"), std::string::npos) << message(d);
  d = check_doc();
  d["pairs"][0]["verdict"] = 3;
  EXPECT_NE(message(d).find("pairs[0].verdict: expected a string"), std::string::npos) << message(d);
  d = check_doc();
  d["findings"][0]["level"] = "LOUD";
  EXPECT_NE(message(d).find("findings[0].level"), std::string::npos) << message(d);
  d = check_doc();
  d["pairs"] = "many";
  EXPECT_NE(message(d).find("pairs: expected an array"), std::string::npos) << message(d);
  d = check_doc();
  d["pairs"][0].erase("gpu");
  EXPECT_NE(message(d).find("pairs[0].gpu: expected a PCI address"), std::string::npos) << message(d);
  EXPECT_NE(message(ordered_json::array()).find("expected an object"), std::string::npos);
}

TEST(FleetHostSummary, HostNames) {
  ordered_json manifest = {{"hostname", "gpu-node-7"}, {"redacted", false}};
  EXPECT_EQ(host_name_for(&manifest, nullptr, "x/y.tar.zst"), "gpu-node-7");
  manifest["redacted"] = true;  // "host-0001" in every redacted capture: the file name says more
  manifest["hostname"] = "host-0001";
  EXPECT_EQ(host_name_for(&manifest, nullptr, "fetched/rack2-n04.tar.zst"), "rack2-n04");
  manifest = {{"hostname", "(none)"}};  // the kernel's default: no name was set
  EXPECT_EQ(host_name_for(&manifest, nullptr, "lab/sw-epyc.tar.zst"), "sw-epyc");
  manifest = {{"hostname", nullptr}};
  EXPECT_EQ(host_name_for(&manifest, nullptr, "a/b/lspci-n1.txt"), "lspci-n1");
  ordered_json identity = {{"hostname", "n9"}, {"redacted", false}};
  EXPECT_EQ(host_name_for(nullptr, &identity, "saved/x.json"), "n9");
  // A capture or import: the machine's own name first, the manifest's where it has none.
  manifest = {{"hostname", "gpu-node-7"}, {"redacted", false}};
  EXPECT_EQ(host_name_for(&manifest, &identity, "x/y.tar.zst"), "n9");
  identity["hostname"] = "(none)";
  EXPECT_EQ(host_name_for(&manifest, &identity, "x/y.tar.zst"), "gpu-node-7");
  identity["hostname"] = nullptr;  // not read (an lspci import)
  EXPECT_EQ(host_name_for(&manifest, &identity, "x/y.tar.zst"), "gpu-node-7");
  // Redacted: both names are the shared placeholder; the file, named by the collector, tells.
  identity = {{"hostname", "host-0001"}, {"redacted", true}};
  manifest = {{"hostname", "host-0001"}, {"redacted", true}};
  EXPECT_EQ(host_name_for(&manifest, &identity, "fetched/rack2-n05.tar.zst"), "rack2-n05");
  EXPECT_EQ(host_name_for(nullptr, nullptr, "dir/unpacked/"), "unpacked");
  EXPECT_EQ(host_name_for(nullptr, nullptr, "h.tar.gz"), "h");
  EXPECT_EQ(host_name_for(nullptr, nullptr, "dumps/n7/root"), "n7");
  EXPECT_EQ(host_name_for(nullptr, nullptr, "n8/p2pcheck-capture/"), "n8");
  EXPECT_EQ(host_name_for(nullptr, nullptr, "root"), "root");
}

}  // namespace
}  // namespace p2pcheck
