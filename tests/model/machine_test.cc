#include "p2pcheck/model/machine.h"

#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/memory_source.h"
#include "p2pcheck/source/table_text.h"

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

TEST(KernelConfig, MoreLinesThanAnyKernelsIsRefusedNamingTheFile) {
  std::string config;
  for (std::size_t i = 0; i < kMaxTableLines; ++i) config += "# x\n";
  EXPECT_EQ(read_machine(*machine_with("6.8.0", config)).config.file, "/boot/config-6.8.0");
  try {
    read_machine(*machine_with("6.8.0", config + "CONFIG_PCI_P2PDMA=y\n"));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/boot/config-6.8.0");
    EXPECT_NE(std::string(e.what()).find("100001 lines"), std::string::npos) << e.what();
  }
}

// The kernel names a host nobody named "(none)" (UTS_NODENAME): no host name, said why.
TEST(Identity, TheKernelsDefaultHostNameIsNoName) {
  auto tree = std::make_shared<MemoryTree>();
  tree->add_file("/proc/sys/kernel/hostname", "(none)\n");
  MachineIdentity id = read_identity(*open_memory_source(tree, "machine test"));
  EXPECT_FALSE(id.hostname);
  EXPECT_EQ(id.why["hostname"], "the kernel's default \"(none)\": never set");
  tree->add_file("/proc/sys/kernel/hostname", "node7\n");
  EXPECT_EQ(read_identity(*open_memory_source(tree, "machine test")).hostname, "node7");
}

TEST(CpuInfo, OnlyCpu0IsReadAndTheOtherCpusAreNotParsed) {
  auto tree = std::make_shared<MemoryTree>();
  tree->add_file("/proc/cpuinfo",
                 "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\n"
                 "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nflags\t\t: hypervisor\n\n");
  Machine m = read_machine(*open_memory_source(tree, "machine test"));
  EXPECT_EQ(m.cpu.vendor_id, "AuthenticAMD");
  EXPECT_EQ(m.cpu.family, 25);
  EXPECT_EQ(m.cpu.model, 1);
  EXPECT_FALSE(m.cpu.flags_read);  // CPU 1's flags are not CPU 0's
  EXPECT_FALSE(m.cpu.hypervisor);
  // Nor is anything past CPU 0's block's room, in a file with no second CPU.
  tree->add_file("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\n" + std::string(kCpu0BlockBytes, '\n') +
                                      "flags\t\t: hypervisor\n");
  Machine one = read_machine(*open_memory_source(tree, "machine test"));
  EXPECT_EQ(one.cpu.vendor_id, "AuthenticAMD");
  EXPECT_FALSE(one.cpu.flags_read);
}

TEST(Cmdline, LongerThanAKernelsIsRefusedNamingTheFile) {
  auto tree = std::make_shared<MemoryTree>();
  tree->add_file("/proc/cmdline", std::string(kMaxCmdlineBytes, 'a'));
  EXPECT_EQ(read_machine(*open_memory_source(tree, "machine test")).cmdline.size(), kMaxCmdlineBytes);
  tree->add_file("/proc/cmdline", std::string(kMaxCmdlineBytes + 1, 'a'));
  try {
    read_machine(*open_memory_source(tree, "machine test"));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/proc/cmdline");
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxCmdlineBytes + 1) + " bytes"), std::string::npos)
        << e.what();
  }
}

TEST(KernelRelease, LongerThanUtsnameHoldsIsRefusedNamingWhereItCameFrom) {
  EXPECT_EQ(read_machine(*machine_with(std::string(kMaxReleaseBytes, '6'), "")).kernel_release.size(),
            kMaxReleaseBytes);
  auto error_of = [](const std::shared_ptr<MemoryTree>& tree) {
    try {
      read_machine(*open_memory_source(tree, "machine test"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  auto tree = std::make_shared<MemoryTree>();
  tree->add_file("/proc/sys/kernel/osrelease", std::string(65, '6') + "\n");
  EXPECT_EQ(error_of(tree), "/proc/sys/kernel/osrelease: kernel release of 65 bytes; a kernel's is at most 64");
  auto from_version = std::make_shared<MemoryTree>();
  from_version->add_file("/proc/version", "Linux version " + std::string(100, '6') + " (x@y) #1\n");
  EXPECT_EQ(error_of(from_version), "/proc/version: kernel release of 100 bytes; a kernel's is at most 64");
}

TEST(Tables, RowsKeepTheirLeadingFieldsAndShortRowsAreSkipped) {
  auto tree = std::make_shared<MemoryTree>();
  tree->add_file("/proc/modules", "nvme 61440 3 - Live 0x0\nshort 1 2 -\namdgpu 1 0 - Loading 0x0 (O)\n");
  tree->add_file("/proc/mounts", "/dev/nvme0n1p1 /data xfs rw,noatime 0 0\n/dev/x /y ext4\n  tmpfs\t/tmp tmpfs rw\n");
  tree->add_file("/etc/os-release", "ID=debian\nVERSION_ID=\"12\"\nPRETTY_NAME='Debian 12'\nnoequals\n");
  Machine m = read_machine(*open_memory_source(tree, "machine test"));
  EXPECT_EQ(m.modules, (std::map<std::string, std::string>{{"amdgpu", "Loading"}, {"nvme", "Live"}}));
  ASSERT_EQ(m.mounts.size(), 2u);
  EXPECT_EQ(m.mounts[0].options, "rw,noatime");
  EXPECT_EQ(m.mounts[1].device, "tmpfs");
  EXPECT_EQ(m.mounts[1].mountpoint, "/tmp");
  EXPECT_EQ(m.os.id, "debian");
  EXPECT_EQ(m.os.version_id, "12");
  EXPECT_EQ(m.os.pretty_name, "Debian 12");
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
