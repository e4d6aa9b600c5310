#include "p2pcheck/report/common.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

// The text header's machine line: each value, or unknown with why, or redacted.
// Matrix columns in the order a person reads names: nvme2 before nvme10, leading zeros ignored.
TEST(NaturalLess, ComparesDigitRunsAsNumbers) {
  using report_detail::natural_less;
  EXPECT_TRUE(natural_less("nvme2", "nvme10"));
  EXPECT_FALSE(natural_less("nvme10", "nvme2"));
  EXPECT_TRUE(natural_less("nvme0", "nvme1"));
  EXPECT_FALSE(natural_less("nvme1", "nvme1"));
  EXPECT_TRUE(natural_less("nvme1", "nvme1n1"));
  EXPECT_TRUE(natural_less("d07", "d8"));
  EXPECT_TRUE(natural_less("0000:03:00.0", "0000:41:00.0"));
  EXPECT_TRUE(natural_less("", "a"));
  EXPECT_FALSE(natural_less("a", ""));
}

TEST(IdentityLine, NamesTheMachineAndSaysWhyAValueIsMissingOrRedacted) {
  MachineIdentity id;
  id.dmi_vendor = "Dell Inc.";
  id.dmi_product = "PowerEdge R740";
  id.hostname = "r740-07";
  EXPECT_EQ(identity_line(id), "machine: Dell Inc. PowerEdge R740, host r740-07\n");
  id.redacted = true;
  id.hostname = "host-0001";
  EXPECT_EQ(identity_line(id), "machine: Dell Inc. PowerEdge R740, host host-0001 (redacted)\n");
  MachineIdentity none;
  for (const char* key : {"hostname", "dmi_vendor", "dmi_product"}) none.why[key] = "not in this lspci output";
  EXPECT_EQ(identity_line(none),
            "machine: DMI unknown (not in this lspci output), host unknown (not in this lspci output)\n");
  none.dmi_vendor = "Supermicro";
  EXPECT_EQ(identity_line(none),
            "machine: Supermicro, product unknown (not in this lspci output), host unknown (not in this lspci "
            "output)\n");
}

// A plan's names go beside the address, escaped as every name from input.
TEST(FunctionLabel, ShowsTheNameTheInputGivesEscaped) {
  Function fn;
  fn.bdf = *Bdf::parse("0000:05:00.0");
  fn.vendor = 0x1234;
  fn.device = 0x5678;
  fn.name = "gpu1";
  EXPECT_EQ(function_label(fn).rfind("0000:05:00.0 (gpu1) [1234:5678]", 0), 0u) << function_label(fn);
  EXPECT_EQ(name_prefix(fn), "gpu1 ");
  fn.name = "a\nRESULT: PASS";
  EXPECT_EQ(name_prefix(fn), "a\\nRESULT: PASS ");
}

TEST(LocalityJson, GivesClassNvidiaSmiWordAndWhyAndNodesWhenAsked) {
  Locality l;
  l.cls = LocalityClass::kAcrossNumaNodes;
  l.nvidia_smi = "SYS";
  l.gpu_node = 0;
  l.nvme_node = 1;
  EXPECT_EQ(locality_json(l, false).dump(), R"({"class":"across_numa_nodes","nvidia_smi":"SYS","why":null})");
  EXPECT_EQ(locality_json(l, true).dump(),
            R"({"class":"across_numa_nodes","nvidia_smi":"SYS","gpu_numa_node":0,"nvme_numa_node":1,"why":null})");
  Locality unknown;
  unknown.why = "NUMA node not in a plan";
  EXPECT_EQ(locality_json(unknown, false).dump(),
            R"({"class":"unknown","nvidia_smi":null,"why":"NUMA node not in a plan"})");
}

}  // namespace
}  // namespace p2pcheck
