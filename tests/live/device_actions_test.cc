#include "p2pcheck/live/device_actions.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

namespace p2pcheck {
namespace {

TEST(NvmeCmb, DecodesSizeLocationAndFlags) {
  // 64 MiB in 1 MiB units at offset 0 of BAR2, with WDS and RDS: what QEMU's cmb_size_mb=64 shows.
  NvmeCmb cmb = decode_cmb(0x00000002, 64u << 12 | 2u << 8 | 0x18);
  EXPECT_EQ(cmb.size, 64ull << 20);
  EXPECT_EQ(cmb.bar, 2);
  EXPECT_EQ(cmb.offset, 0u);
  EXPECT_TRUE(cmb.wds);
  EXPECT_TRUE(cmb.rds);
  EXPECT_FALSE(cmb.sqs);
  // Offset counts in size units: 3 x 4 KiB.
  EXPECT_EQ(decode_cmb(0x3000 | 4, 1u << 12).offset, 3u * 4096);
  EXPECT_EQ(decode_cmb(0, 0).size, 0u);
}

TEST(NvmeIdentify, DecodesTheFieldsThatMatter) {
  unsigned char id[4096] = {};
  id[0] = 0x4d;  // vid 0x144d
  id[1] = 0x14;
  std::memcpy(id + 4, "S4EWNX0R123456      ", 20);
  std::memcpy(id + 24, "SAMSUNG MZWLR7T6HALA-00007              ", 40);
  std::memcpy(id + 64, "MPK7525Q", 8);
  id[76] = 0x01;  // cmic: multiple ports
  id[80] = 0x00;  // ver 1.4.0
  id[81] = 0x04;
  id[82] = 0x01;
  NvmeIdentity out;
  decode_identify(id, out);
  EXPECT_EQ(out.vid, 0x144d);
  EXPECT_EQ(out.serial, "S4EWNX0R123456");
  EXPECT_EQ(out.model, "SAMSUNG MZWLR7T6HALA-00007");
  EXPECT_EQ(out.firmware, "MPK7525Q");
  EXPECT_EQ(out.cmic, 1);
  EXPECT_EQ(out.version, 0x10400u);
}

TEST(LiveDeviceActions, UnavailableIsReportedWithTheReason) {
  auto actions = open_live_device_actions();
  NvmeIdentity bad = actions->nvme_identity("../../etc/passwd", Bdf{});
  EXPECT_FALSE(bad.identify_ok);
  EXPECT_EQ(bad.identify_error, "not an NVMe controller name");
  struct stat st;
  if (stat("/dev/nvme97", &st) != 0) {
    NvmeIdentity none = actions->nvme_identity("nvme97", Bdf{0, 0x97, 0, 0});
    EXPECT_FALSE(none.identify_ok);
    EXPECT_NE(none.identify_error.find("no /dev/nvme97"), std::string::npos);
    EXPECT_FALSE(none.registers_ok);
    EXPECT_FALSE(none.registers_error.empty());
  }
  EXPECT_FALSE(actions->hostname().empty());
}

TEST(LiveDeviceActions, OnlyACharacterDeviceIsOpenedAsAnNvmeController) {
  int fd = open_nvme_controller("/dev/null");  // a character device, as /dev/nvmeX is
  EXPECT_GE(fd, 0) << std::strerror(errno);
  if (fd >= 0) close(fd);
  errno = 0;
  const std::string file = testing::TempDir() + "/not-a-controller";
  std::ofstream(file) << "nvme\n";
  EXPECT_EQ(open_nvme_controller(file), -1);  // a regular file: refused as nvme_open() refuses it
  EXPECT_EQ(errno, EINVAL);
  std::remove(file.c_str());
  EXPECT_EQ(open_nvme_controller("/dev/nvme-that-is-not-there"), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST(LiveDeviceActions, HipProbeAnswersWhetherOrNotTheRuntimeIsThere) {
  HipProbe p = open_live_device_actions()->hip_probe();
  EXPECT_EQ(p.hip_runtime.library.rfind("libamdhip64.so", 0), 0u);
  if (!p.hip_runtime.loaded) {
    EXPECT_FALSE(p.hip_runtime.error.empty());
  } else {
    EXPECT_FALSE(p.hip_runtime.path.empty());
  }
  EXPECT_TRUE(p.hip_runtime.symbols.count("hipAmdFileRead"));
}

}  // namespace
}  // namespace p2pcheck
