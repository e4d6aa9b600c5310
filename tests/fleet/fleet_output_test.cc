// The fleet outputs read back: JSON fields, CSV quoting, and the JUnit and HTML parsed with
// libxml2 (with bytes from a hostile dump in them).
#include <gtest/gtest.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <memory>

#include "p2pcheck/fleet/fleet_csv.h"
#include "p2pcheck/fleet/fleet_html.h"
#include "p2pcheck/fleet/fleet_json.h"
#include "p2pcheck/fleet/fleet_junit.h"
#include "p2pcheck/fleet/fleet_text.h"

namespace p2pcheck {
namespace {

HostPair pair(const char* gpu, const char* nvme, Verdict v, Cause cause) {
  HostPair p;
  p.gpu = gpu;
  p.nvme = nvme;
  p.nvme_name = "nvme0";
  p.verdict = p.to_gpu = p.from_gpu = v;
  p.map_type = v == Verdict::kSupported ? "BUS_ADDR" : "NOT_SUPPORTED";
  p.cause = cause;
  p.rule = cause != Cause::kNone ? "refused <because> & so on" : "";
  return p;
}

FleetReport sample() {
  HostSummary a;
  a.host = "node-a";
  a.input = "caps/node-a.tar.zst";
  a.format = "capture";
  a.result = Result::kFail;
  a.gpus = 2;
  a.nvmes = 1;
  a.topology = "0123456789abcdef";
  a.findings = {{"kernel.config_p2pdma", Level::kFail, "", "built without CONFIG_PCI_P2PDMA", "rebuild it", true},
                {"gpu.ais", Level::kPass, "", "AIS present", "", true},
                {"storage.unknown", Level::kUnknown, "nvme0n1", "cannot see", "", true}};
  a.pairs = {pair("0000:03:00.0", "0000:05:00.0", Verdict::kNotSupported, Cause::kKernelConfigP2pdma),
             pair("0000:04:00.0", "0000:05:00.0", Verdict::kSupported, Cause::kNone)};
  HostSummary b = a;
  b.host = "=cmd|' /C calc'!A0, \"quoted\" \xff\x01";  // a hostile name: formula, comma, quote, bad bytes
  b.input = "caps/b.tar.zst";
  b.result = Result::kPass;
  b.findings = {{"gpu.ais", Level::kPass, "", "AIS present", "", true}};
  b.pairs = {pair("0000:03:00.0", "0000:05:00.0", Verdict::kSupported, Cause::kNone)};
  return build_fleet_report({a, b}, {{"caps/junk.bin", "not a recognised dump <x>"}}, 3);
}

struct XmlDoc {
  xmlDocPtr doc = nullptr;
  ~XmlDoc() {
    if (doc) xmlFreeDoc(doc);
  }
  long count(const char* xpath) const {
    std::unique_ptr<xmlXPathContext, decltype(&xmlXPathFreeContext)> ctx(xmlXPathNewContext(doc), xmlXPathFreeContext);
    std::unique_ptr<xmlXPathObject, decltype(&xmlXPathFreeObject)> r(
        xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(xpath), ctx.get()), xmlXPathFreeObject);
    return r && r->type == XPATH_NUMBER ? static_cast<long>(r->floatval) : -1;
  }
};

TEST(FleetOutput, JsonEnvelopeAndGroups) {
  auto j = fleet_json(sample());
  EXPECT_EQ(j["schema"], "p2pcheck.fleet");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_TRUE(j.contains("tool_version"));
  EXPECT_EQ(j["result"], "FAIL");
  EXPECT_EQ(j["summary"]["hosts"], 2);
  EXPECT_EQ(j["summary"]["unreadable"], 1);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0]["cause"], "kernel.config_p2pdma");
  EXPECT_EQ(j["failures"][0]["kind"], "finding");
  EXPECT_EQ(j["failures"][0]["fix"], "rebuild it");
  EXPECT_EQ(j["failures"][0]["pairs"], 1);
  EXPECT_EQ(j["topologies"][0]["host_count"], 2);
  EXPECT_EQ(j["hosts"][1]["host"], "node-a");
  EXPECT_EQ(j["hosts"][1]["pair_counts"]["not_supported"], 1);
  EXPECT_EQ(j["hosts"][1]["pair_counts"]["by_cause"]["kernel.config_p2pdma"], 1);
  EXPECT_EQ(j["hosts"][1]["topology"], "T1");
  EXPECT_EQ(j["unreadable"][0]["input"], "caps/junk.bin");
}

TEST(FleetOutput, JunitParsesWithASuitePerHostAndACasePerCheckAndPair) {
  std::string xml = fleet_junit(sample());
  XmlDoc d;
  d.doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "fleet.xml", nullptr, XML_PARSE_NONET);
  ASSERT_NE(d.doc, nullptr) << xml;
  EXPECT_EQ(d.count("count(/testsuites/testsuite)"), 3);                 // two hosts and the unreadable inputs
  EXPECT_EQ(d.count("count(//testsuite[@name='node-a']/testcase)"), 5);  // 3 checks + 2 pairs
  EXPECT_EQ(d.count("count(//testsuite[@name='node-a']/testcase/failure)"), 2);
  EXPECT_EQ(d.count("count(//testsuite[@name='node-a']/testcase/skipped)"), 1);
  EXPECT_EQ(d.count("number(//testsuite[@name='node-a']/@failures)"), 2);
  EXPECT_EQ(d.count("count(//testsuite[@name='unreadable inputs']/testcase/error)"), 1);
  EXPECT_EQ(d.count("number(/testsuites/@tests)"), 5 + 2 + 1);
  EXPECT_EQ(d.count("number(/testsuites/@errors)"), 1);
}

TEST(FleetOutput, HtmlIsOneStaticPageThatParses) {
  std::string html = fleet_html(sample());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/1999/xhtml"));  // only the namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
  XmlDoc h;
  h.doc = htmlReadMemory(html.data(), static_cast<int>(html.size()), "fleet.html", "UTF-8",
                         HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
  ASSERT_NE(h.doc, nullptr);
  EXPECT_EQ(h.count("count(//div[@class='host'])"), 2);
  EXPECT_EQ(h.count("count(//table[@class='matrix'])"), 2);
  EXPECT_EQ(h.count("count(//table[@class='matrix']//td[contains(@class,'not_supported')])"), 1);
  EXPECT_EQ(h.count("count(//div[contains(@class,'cause')])"), 2);  // the failure and the unknown
  EXPECT_EQ(h.count("count(//table[@id='hosts']/tr)"), 3);
  EXPECT_EQ(h.count("count(//ul[@id='unreadable']/li)"), 1);
  // Well-formed as XML too (XHTML), so strict tools read it.
  XmlDoc x;
  x.doc = xmlReadMemory(html.data(), static_cast<int>(html.size()), "fleet.html", nullptr, XML_PARSE_NONET);
  ASSERT_NE(x.doc, nullptr) << html;
}

TEST(FleetOutput, CsvQuotesAndDisarmsFormulas) {
  std::string csv = fleet_csv(sample());
  EXPECT_EQ(csv.rfind("host,input,format,result,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\"'=cmd|' /C calc'!A0, \"\"quoted\"\" "), std::string::npos) << csv;
  EXPECT_NE(csv.find("node-a,caps/node-a.tar.zst,capture,FAIL,2,1,2,1,1,0,kernel.config_p2pdma,storage.unknown,T1,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",caps/junk.bin,,UNREADABLE,"), std::string::npos) << csv;
}

TEST(FleetOutput, TextNamesCausesHostsAndFixOnce) {
  TextStyle plain;
  plain.color = false;
  std::string text = fleet_text(sample(), plain);
  EXPECT_NE(text.find("  1 host: kernel.config_p2pdma — built without CONFIG_PCI_P2PDMA (1 pair)\n    hosts  node-a\n"
                      "    fix    rebuild it\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("T1   2 hosts like "), std::string::npos) << text;
  EXPECT_NE(text.find("  caps/junk.bin: not a recognised dump <x>\n"), std::string::npos) << text;
  EXPECT_NE(text.find("RESULT: FAIL — 1 of 2 hosts fail; 1 input unreadable\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("(without pairs:"), std::string::npos) << text;  // every host has pairs
}

TEST(FleetOutput, HostsWithoutPairsSayHowToNameOtherFunctions) {
  HostSummary lab;
  lab.host = "sw-epyc";
  lab.input = "fixtures/lab/sw-epyc/sw-epyc.tar.zst";
  lab.format = "capture";
  lab.result = Result::kNoPairs;
  lab.nvmes = 2;
  TextStyle plain;
  plain.color = false;
  std::string text = fleet_text(build_fleet_report({lab}, {}, 1), plain);
  EXPECT_NE(text.find("hosts: 0 pass, 0 fail, 0 unknown, 1 without GPU–NVMe pairs\n  (without pairs: no AMD or NVIDIA "
                      "GPU, or no NVMe, in that machine; other functions are judged when its capture is taken with "
                      "--gpu/--nvme, which the capture records)\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace p2pcheck
