// topology_dot: names from a hostile dump stay escaped; NUMA boxes only where the node is known;
// verdicts on the devices, none as text on an edge.
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

std::unique_ptr<CheckReport> epyc(Load load) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  CheckOptions options;
  options.load = load;
  return run_check(*source, options);
}

TEST(TopoDot, NumaBoxesOnlyWhereTheNodeIsKnown) {
  auto report = epyc(Load::kEverything);
  std::string dot = topology_dot(*report);
  EXPECT_NE(dot.find("subgraph cluster_numa_0 {"), std::string::npos);
  EXPECT_NE(dot.find("subgraph cluster_numa_1 {"), std::string::npos);
  // GPU 0000:03:00.0 sits on socket 0: after box 0 opens, before box 1 does.
  std::size_t gpu = dot.find("  f_0000_03_00_0 [");
  EXPECT_LT(dot.find("cluster_numa_0"), gpu);
  EXPECT_LT(gpu, dot.find("cluster_numa_1"));
  // -1 is "no NUMA affinity" or not read: no box, never a guessed one.
  for (auto& [bdf, fn] : report->topo.functions) fn.numa_node = -1;
  EXPECT_EQ(topology_dot(*report).find("cluster_numa"), std::string::npos);
  // The check alone reads the NUMA node of its pairs' ends only (locality): their boxes, known.
  std::string check_only = topology_dot(*epyc(Load::kForCheck));
  EXPECT_NE(check_only.find("subgraph cluster_numa_1 {"), std::string::npos);
  EXPECT_LT(check_only.find("cluster_numa_0"), check_only.find("  f_0000_03_00_0 ["));
}

TEST(TopoDot, VerdictsSitOnTheDevicesNotOnTheEdges) {
  auto report = epyc(Load::kForCheck);
  std::string dot = topology_dot(*report);
  for (const std::string& line : split(dot, '\n')) {
    if (line.find(" -- ") != std::string::npos) {
      EXPECT_EQ(line.find("label="), std::string::npos) << line;
    }
  }
  // 72 pairs, all allowed (Zen): each GPU's two switch peers redirected to the host, the others via it.
  EXPECT_NE(dot.find("GPU 0000:03:00.0\\n1002:74a1\\n32 GT/s x16\\nallowed redirected to host: nvme0, nvme1\\n"
                     "allowed via host bridge: nvme2, nvme3 +5\""),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("72 pair(s)"), std::string::npos);
}

}  // namespace
}  // namespace p2pcheck
