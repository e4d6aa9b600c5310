#include "p2pcheck/model/kernel_image.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "kernel_elf.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

namespace fs = std::filesystem;

const std::vector<KernelTableRow> kRows = {{0x8086, 0x2020, 0}, {0x8086, 0x09a2, 0}, {0x8086, 0x29c0, 0}};
constexpr std::uint64_t kText = 0xffffffff81000000ull;
constexpr std::uint64_t kRodata = 0xffffffff82000000ull;
const std::string kBanner = "Linux version 6.12.118 (lab@build) (gcc 12) #1 SMP\n";

// A vmlinux: .text, then .rodata with the banner at 0x100 and the table at 0x200; a build-id note.
std::string vmlinux(const std::string& table) {
  std::string rodata(0x200, '\0');
  rodata.replace(0x100, kBanner.size(), kBanner);
  rodata += table + std::string(64, '\0');
  std::string ikconfig =
      "IKCFG_ST" + test::compress("CONFIG_PCI_P2PDMA=y\nCONFIG_KALLSYMS_ALL=y\n", ARCHIVE_FILTER_GZIP) + "IKCFG_ED";
  return test::make_elf({{kText, std::string(512, '\x90') + ikconfig},
                         {kRodata, rodata},
                         {0, test::build_id_notes("\xde\xad\xbe\xef"), PT_NOTE}},
                        ET_EXEC);
}

std::string system_map() {
  return "ffffffff81000000 T _text\nffffffff82000100 R linux_banner\nffffffff82000200 r pci_p2pdma_whitelist\n";
}

class KernelImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("p2pcheck-kimage-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string put(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string bzimage(int filter = ARCHIVE_FILTER_GZIP) {
    return test::make_bzimage(test::compress(vmlinux(test::table_bytes(kRows)), filter), "6.12.118 (lab@build) #1 SMP");
  }
  fs::path dir_;
};

TEST_F(KernelImageTest, BzImageWithSystemMapBesideIt) {
  for (int filter : {ARCHIVE_FILTER_GZIP, ARCHIVE_FILTER_XZ, ARCHIVE_FILTER_ZSTD}) {
    std::string image = put("bzImage", bzimage(filter));
    put("System.map", system_map());
    KernelImage k = read_kernel_image(image);
    EXPECT_EQ(k.release, "6.12.118");
    ASSERT_EQ(k.table.origin, KernelTableOrigin::kKernelImage) << k.table.why_not;
    EXPECT_EQ(k.table.rows, kRows);
    EXPECT_EQ(k.table.build_id, "deadbeef");
    EXPECT_EQ(k.table.how, image + ": pci_p2pdma_whitelist at 0xffffffff82000200 (System.map)");
    // No config file beside it: the one built in (IKCONFIG).
    EXPECT_EQ(k.config.get("CONFIG_KALLSYMS_ALL"), "y");
    EXPECT_EQ(k.config.file, image + " (IKCONFIG)");
  }
}

TEST_F(KernelImageTest, BootDirectoryAndVmlinux) {
  put("boot/vmlinuz-6.12.118-lab", bzimage());
  put("boot/System.map-6.12.118-lab", system_map());
  put("boot/config-6.12.118-lab", "CONFIG_PCI_P2PDMA=y\n");
  KernelImage k = read_kernel_image((dir_ / "boot").string());
  EXPECT_EQ(k.table.rows, kRows);
  EXPECT_EQ(k.config.file, (dir_ / "boot/config-6.12.118-lab").string());
  put("boot/vmlinuz-6.1.0", bzimage());
  put("boot/System.map-6.1.0", system_map());
  try {
    read_kernel_image((dir_ / "boot").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("several kernels here (6.1.0, 6.12.118-lab)"), std::string::npos) << e.what();
  }
  // A vmlinux (any 64-bit little-endian architecture) with its System.map.
  std::string elf = put("build/vmlinux", vmlinux(test::table_bytes(kRows)));
  put("build/System.map", system_map());
  EXPECT_EQ(read_kernel_image(elf).table.rows, kRows);
}

TEST_F(KernelImageTest, WithoutSystemMapTheTableIsNotRead) {
  KernelImage k = read_kernel_image(put("vmlinuz-6.12.118", bzimage()));
  EXPECT_EQ(k.release, "6.12.118");  // from the boot header
  EXPECT_FALSE(k.table.read());
  EXPECT_NE(k.table.why_not.find("no System.map beside"), std::string::npos);
}

// A kernel .deb as Debian lays it out, made by dpkg-deb: boot/vmlinuz-REL, System.map-REL, config-REL.
TEST_F(KernelImageTest, KernelDebPackage) {
  put("debroot/DEBIAN/control",
      "Package: linux-image-6.12.118-lab\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n");
  put("debroot/lib/modules/6.12.118-lab/kernel/x.ko", "module");
  put("debroot/boot/vmlinuz-6.12.118-lab", bzimage());
  put("debroot/boot/System.map-6.12.118-lab", system_map());
  put("debroot/boot/config-6.12.118-lab", "CONFIG_PCI_P2PDMA=y\n# CONFIG_KALLSYMS_ALL is not set\n");
  std::string deb = (dir_ / "linux-image-6.12.118-lab_1_amd64.deb").string();
  std::string cmd =
      "dpkg-deb --root-owner-group -Zxz --build " + (dir_ / "debroot").string() + " " + deb + " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  KernelImage k = read_kernel_image(deb);
  EXPECT_EQ(k.release, "6.12.118");
  EXPECT_EQ(k.table.rows, kRows);
  EXPECT_EQ(k.config.get("CONFIG_KALLSYMS_ALL"), "n");  // the package's config, not IKCONFIG
  EXPECT_EQ(k.config.file, deb + ":data.tar.xz:boot/config-6.12.118-lab");
  fs::remove_all(dir_ / "debroot/boot");
  std::string empty = (dir_ / "other.deb").string();
  ASSERT_EQ(
      std::system(
          ("dpkg-deb --root-owner-group --build " + (dir_ / "debroot").string() + " " + empty + " >/dev/null").c_str()),
      0);
  EXPECT_THROW(read_kernel_image(empty), Error);
}

TEST_F(KernelImageTest, HostileImages) {
  std::string good = bzimage();
  auto refused = [&](const std::string& bytes, const std::string& expect) {
    std::string file = put("vmlinuz-bad", bytes);
    try {
      read_kernel_image(file);
      ADD_FAILURE() << "accepted: " << expect;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  };
  refused(good.substr(0, good.size() - 40), "outside the file: truncated?");
  refused(good.substr(0, 0x300), "outside the file");
  refused(std::string(4096, 'z'), "not a kernel image or package");
  std::string not_compressed = test::make_bzimage(std::string(4096, 'q'), "6.12.118 x");
  refused(not_compressed, "not compressed");
  std::string not_elf = test::make_bzimage(test::compress(std::string(4096, 'q'), ARCHIVE_FILTER_GZIP), "6.12.118 x");
  refused(not_elf, "not an ELF vmlinux");
  // A bomb: 4 MiB of zeros from a few KiB, against a 1 MiB cap (the image cap is 512 MiB).
  std::string bomb = test::compress(std::string(4u << 20, '\0'), ARCHIVE_FILTER_GZIP);
  EXPECT_LT(bomb.size(), 16384u);
  try {
    decompress_bounded(bomb, 1u << 20, "bomb.gz");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("decompresses to more than 1 MiB"), std::string::npos) << e.what();
  }
  // A System.map of another build: the table's address lands on other bytes.
  std::string image = put("bzImage", good);
  put("System.map", "ffffffff82000100 R linux_banner\nffffffff82000180 r pci_p2pdma_whitelist\n");
  KernelImage k = read_kernel_image(image);
  EXPECT_FALSE(k.table.read());
  EXPECT_NE(k.table.why_not.find("not pci_p2pdma_whitelist[]"), std::string::npos) << k.table.why_not;
}

}  // namespace
}  // namespace p2pcheck
