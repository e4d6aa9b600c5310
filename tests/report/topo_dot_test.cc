// topology_dot on a fixture whose CPU vendor string came from a hostile dump.
#include "p2pcheck/report/topo_dot.h"

#include <gtest/gtest.h>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

// Issue 33: a label cut at 200 bytes inside a multi-byte character made Graphviz read the whole
// graph as Latin-1; names with control characters wrote them into the file.
TEST(TopoDot, LabelsStayValidUtf8AndControlCharactersAreEscaped) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  auto report = run_check(*source, CheckOptions{});
  std::string vendor = "AuthenticAMD";
  ASSERT_EQ(report->machine.cpu.vendor_id, vendor);
  ASSERT_NE(topology_dot(*report).find("CPU fabric"), std::string::npos);  // the CPU node is drawn
  for (std::size_t pad = 0; pad < 4; ++pad) {
    // "é" (2 bytes) and "日" (3 bytes) straddling byte 200 in each alignment.
    report->machine.cpu.vendor_id = std::string(190 + pad, 'a') + "é日é日é日";
    std::string dot = topology_dot(*report);
    for (const std::string& line : split(dot, '\n')) EXPECT_TRUE(is_printable(line)) << pad << ": " << line;
  }
  report->machine.cpu.vendor_id = "Evil\"\n];\nx [label=\"\x1b[2K";
  std::string dot = topology_dot(*report);
  EXPECT_NE(dot.find("Evil\\\"\\\\n];\\\\nx [label=\\\"\\\\x1b[2K family"), std::string::npos) << dot;
  for (const std::string& line : split(dot, '\n')) EXPECT_TRUE(is_printable(line)) << line;
}

}  // namespace
}  // namespace p2pcheck
