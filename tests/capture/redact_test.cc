#include "p2pcheck/capture/redact.h"

#include <filesystem>
#include <gtest/gtest.h>

#include "p2pcheck/capture/capture.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/report/report.h"
#include "test_paths.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::TempDir;  // the redacted capture is written as an archive file and replayed from it

TEST(Redactor, SameValueSamePlaceholderEverywhere) {
  Redactor r;
  r.learn("/sys/class/nvme/nvme0/serial", "S4EWNX0R123456      \n");
  r.learn("/proc/cmdline", "root=UUID=3f2a8c1e-1b2c-4d5e-8f90-123456789abc ro\n");
  EXPECT_EQ(r.file("/sys/class/nvme/nvme0/serial", "S4EWNX0R123456      \n"), "SERIAL-0001      \n");
  EXPECT_EQ(r.text("nqn.2014.08.org.nvmexpress:144d144dS4EWNX0R123456"),
            "nqn.2014.08.org.nvmexpress:144d144dSERIAL-0001");
  EXPECT_EQ(r.text("root=UUID=3F2A8C1E-1B2C-4D5E-8F90-123456789ABC"), "root=UUID=00000000-0000-4000-8000-000000000001");
  EXPECT_EQ(r.text("other 11111111-2222-3333-4444-555555555555"), "other 00000000-0000-4000-8000-000000000002");
  EXPECT_TRUE(contains_placeholder("SERIAL-0001"));
  EXPECT_FALSE(contains_placeholder("S4EWNX0R123456"));
}

TEST(Redactor, MacAddressesButNotPciAddressesOrIpv6) {
  Redactor r;
  EXPECT_EQ(r.text("link/ether 3c:ec:ef:12:34:56 brd ff:ff:ff:ff:ff:ff"),
            "link/ether 02:00:00:00:00:01 brd 02:00:00:00:00:02");
  EXPECT_EQ(r.text("0000:41:00.0 fe80::1:2:3:4"), "0000:41:00.0 fe80::1:2:3:4");
}

TEST(Redactor, HostNamesOnlyAsWholeTokens) {
  Redactor r;
  r.learn("/proc/sys/kernel/hostname", "vm\n");
  EXPECT_EQ(r.text("root@vm kvm_amd vm.swappiness vm"), "root@host-0001 kvm_amd vm.swappiness host-0001");
  Redactor f;
  f.add_hostname("gpu-node-17.example.com");
  EXPECT_EQ(f.text("gpu-node-17.example.com gpu-node-17"), "host-0001 host-0002");
}

TEST(Redactor, LeavesWhatVerdictsReadAlone) {
  Redactor r;
  // dm/uuid prefixes say which tool made a mapping (storage reads them); short serials would hit numbers.
  r.learn("/sys/block/dm-0/dm/uuid", "LVM-abcdefABCDEF0123456789abcdefABCDEF0123456789abcdef\n");
  r.learn("/sys/class/dmi/id/product_serial", "1234\n");
  EXPECT_EQ(r.file("/sys/block/dm-0/dm/uuid", "LVM-abcdefABCDEF0123456789abcdefABCDEF0123456789abcdef\n"),
            "LVM-abcdefABCDEF0123456789abcdefABCDEF0123456789abcdef\n");
  EXPECT_EQ(r.file("/sys/class/dmi/id/product_serial", "1234\n"), "SERIAL-0001\n");
  EXPECT_EQ(r.text("0x1234 size 1234"), "0x1234 size 1234");
}

TEST(Redactor, DeviceSerialNumberCapabilityInConfigSpace) {
  std::string config(4096, '\0');
  config[0x06] = 0x10;  // capability list
  config[0x34] = 0x40;
  config[0x40] = 0x10;  // PCIe capability, end of list
  // Extended capabilities: DSN (id 3) at 0x100, end of list.
  config[0x100] = 0x03;
  config[0x102] = 0x01;
  for (int i = 0; i < 8; ++i) config[0x104 + i] = static_cast<char>(0xa0 + i);
  Redactor r;
  r.learn("/sys/devices/pci0000:00/0000:00:01.0/config", config);
  std::string out = r.file("/sys/devices/pci0000:00/0000:00:01.0/config", config);
  EXPECT_EQ(out.size(), config.size());
  EXPECT_EQ(out.substr(0, 0x104), config.substr(0, 0x104));
  EXPECT_EQ(static_cast<unsigned char>(out[0x104]), 1);  // placeholder number 1, little-endian
  for (int i = 1; i < 8; ++i) EXPECT_EQ(out[0x104 + i], 0);
  EXPECT_EQ(out.substr(0x10c), config.substr(0x10c));
}

// Every fixture: a redacted capture analyses identically, apart from the strings redaction replaced.
void expect_same_modulo_placeholders(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b,
                                     const std::string& where) {
  if (a.is_string() && b.is_string()) {
    if (a != b) {
      EXPECT_TRUE(contains_placeholder(b.get<std::string>())) << where << ": " << a << " vs " << b;
    }
    return;
  }
  ASSERT_EQ(a.type(), b.type()) << where;
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (auto it = a.begin(); it != a.end(); ++it) {
      ASSERT_TRUE(b.contains(it.key())) << where << "/" << it.key();
      expect_same_modulo_placeholders(it.value(), b[it.key()], where + "/" + it.key());
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (size_t i = 0; i < a.size(); ++i) expect_same_modulo_placeholders(a[i], b[i], where + "/" + std::to_string(i));
  } else {
    EXPECT_EQ(a, b) << where;
  }
}

TEST(Redaction, NoFixtureVerdictChanges) {
  int fixtures = 0, serials = 0;
  for (const auto& fixture : std::filesystem::directory_iterator(P2PCHECK_FIXTURES)) {
    std::string root = (fixture.path() / "root").string();
    if (!std::filesystem::exists(root + "/sys")) continue;
    ++fixtures;
    TempDir out;
    auto plain = open_tree_source(root);
    auto expected = check_document(*run_check(*plain, CheckOptions{}));
    expected.erase("source");
    auto recording = open_tree_source(root);
    CaptureSet set = collect_capture(*recording, nullptr, true);
    EXPECT_EQ(set.manifest["redacted"], true);
    std::string file = out.path() + "/cap.tar.zst";
    write_capture(set, {file, false});
    auto replay = open_dump_source(file);
    auto got = check_document(*run_check(*replay, CheckOptions{}));
    got.erase("source");
    expect_same_modulo_placeholders(expected, got, fixture.path().filename().string());
    // And the serials are gone from every stored byte.
    for (const auto& e : set.entries)
      if (e.path.size() > 7 && e.path.compare(e.path.size() - 7, 7, "/serial") == 0 && !e.data.empty()) {
        ++serials;
        EXPECT_TRUE(contains_placeholder(e.data)) << e.path << ": " << e.data;
      }
  }
  EXPECT_GE(fixtures, 5);
  EXPECT_GT(serials, 0);  // the serial check above looked at something
}

}  // namespace
}  // namespace p2pcheck
