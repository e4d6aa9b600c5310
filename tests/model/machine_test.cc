#include "p2pcheck/model/machine.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/memory_source.h"

namespace p2pcheck {
namespace {

std::unique_ptr<Source> machine_with(const std::string& release, const std::string& config) {
  auto tree = std::make_shared<MemoryTree>();
  tree->add_file("/proc/sys/kernel/osrelease", release + "\n");
  tree->add_file("/boot/config-" + release, config);
  return open_memory_source(tree, "machine test");
}

TEST(KernelConfig, LinesOfAnyLengthAndOnlyConfigNames) {
  // A 200 KB line made std::regex overflow the stack (issue 15); now it is one more option.
  std::string config = "# comment\nCONFIG_LONG=" + std::string(200000, 'y') + "\nCONFIG_" + std::string(200000, 'A') +
                       "=m\nCONFIG_PCI_P2PDMA=y\r\nCONFIG_=x\nCONFIG_BAD NAME=y\n" +
                       "# CONFIG_HSA_AMD_P2P is not set\nNOT_CONFIG_X=y\n";
  auto src = machine_with("6.8.0-45-generic", config);
  Machine m = read_machine(*src);
  EXPECT_EQ(m.config.file, "/boot/config-6.8.0-45-generic");
  EXPECT_EQ(m.config.get("CONFIG_PCI_P2PDMA"), "y");  // CRLF files too
  EXPECT_EQ(m.config.get("CONFIG_LONG")->size(), 200000u);
  EXPECT_EQ(m.config.get("CONFIG_" + std::string(200000, 'A')), "m");
  EXPECT_EQ(m.config.get("CONFIG_HSA_AMD_P2P"), "n");
  EXPECT_EQ(m.config.options.size(), 3u);
}

TEST(CpuInfo, AFlagsLineIsWhatMakesTheHypervisorFlagKnown) {
  auto tree = std::make_shared<MemoryTree>();
  tree->add_file("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel name\t: x\n\n");
  Machine assumed = read_machine(*open_memory_source(tree, "machine test"));
  EXPECT_EQ(assumed.cpu.evidence_file, "/proc/cpuinfo");
  EXPECT_FALSE(assumed.cpu.flags_read);  // --cpu's assumed CPU: no flags line, the flag is unknown
  tree->add_file("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu hypervisor\n\n");
  Machine guest = read_machine(*open_memory_source(tree, "machine test"));
  EXPECT_TRUE(guest.cpu.flags_read);
  EXPECT_TRUE(guest.cpu.hypervisor);
}

TEST(KernelVersion, NumbersTooLargeForAnIntAreNotAVersion) {
  EXPECT_EQ(parse_kernel_version("6.8.0-45-generic")->str(), "6.8");
  EXPECT_EQ(parse_kernel_version("6.12.7")->patch, 7);
  EXPECT_EQ(parse_kernel_version("5.14.0-427.el9")->minor, 14);
  EXPECT_FALSE(parse_kernel_version("99999999999999999999.1"));  // sscanf's %d was undefined here
  EXPECT_FALSE(parse_kernel_version("6.99999999999999999999"));
  EXPECT_EQ(parse_kernel_version("6.8.99999999999999999999")->patch, 0);
  EXPECT_FALSE(parse_kernel_version("linux"));
  EXPECT_FALSE(parse_kernel_version("6"));
}

}  // namespace
}  // namespace p2pcheck
