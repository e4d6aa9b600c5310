// The importers' bounds: long lines are lines like any other, and counts past anything a real
// machine prints are refused naming the line, before the work they would cost.
#include <gtest/gtest.h>

#include "import_fixture.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/model/finding.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/topo.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

using testing::as_source;
using testing::ConfigSpace;
using testing::hex_dump;
using testing::input_notes;
using testing::small_lspci;

TEST(Sniff, LongLinesAreLinesLikeAnyOther) {
  std::string long_name = "00:00.0 Host bridge: " + std::string(200000, 'x') + "\n";
  EXPECT_EQ(sniff_text(long_name), TextFormat::kLspciNoHex);
  EXPECT_EQ(sniff_text(long_name + small_lspci()), TextFormat::kLspciDump);  // hex rows past the first 64 KB
  EXPECT_EQ(sniff_text(std::string(70000, 'a') + "\n"), TextFormat::kUnknown);
  EXPECT_EQ(sniff_text("P: /" + std::string(5000, 'a') + "\nE: X=1\n"), TextFormat::kUnknown);
  EXPECT_EQ(sniff_text("processor\t: 0\n" + std::string(3000, 'x') + "\nvendor_id\t: AuthenticAMD\n"),
            TextFormat::kCpuinfo);
  EXPECT_EQ(sniff_text("processor\t: 0"), TextFormat::kUnknown);  // no line after it
  EXPECT_EQ(sniff_text("00:20.0 Host bridge: odd\n"),
            TextFormat::kLspciNoHex);  // shaped like one: lspci's job to refuse
}

TEST(ImportLspci, LongNamesAndDriverLinesAreFineLongHexLinesAreNot) {
  std::string cfg = ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256);
  std::string dump = hex_dump("00:00.0 Host bridge: " + std::string(200000, 'n'), cfg) +
                     "\tKernel driver in use: " + std::string(200000, 'd') + "\n";
  auto src = as_source(import_lspci(dump, nullptr, "", "l.txt", ImportOptions{}));
  EXPECT_EQ(src->read("/sys/bus/pci/devices/0000:00:00.0/vendor").bytes, "0x1022\n");
  // The one device has a malformed row: left out, and with nothing left the dump is refused.
  try {
    import_lspci(hex_dump("00:00.0 Host bridge", cfg) + "00: " + std::string(3 * 70000, ' ') + "\n", nullptr, "",
                 "l.txt", ImportOptions{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "l.txt");
  }
  // Seventeen bytes on a row: lspci prints sixteen.
  std::string seventeen = "00:";
  for (int i = 0; i < 17; ++i) seventeen += " 00";
  EXPECT_THROW(import_lspci("00:00.0 Host bridge\n" + seventeen + "\n", nullptr, "", "l.txt", ImportOptions{}), Error);
  EXPECT_THROW(
      import_lspci("00:20.0 Host bridge\n" + hex_dump("", cfg).substr(1), nullptr, "", "l.txt", ImportOptions{}),
      Error);
}

TEST(ImportLspci, TreeDrawingWithAHugeLineAndDeviceNumbersAboveTheLimit) {
  std::string lspci = small_lspci();
  std::string tree = "-[0000:00]-+-00.0  " + std::string(200000, 'x') + "\n";
  EXPECT_NO_THROW(import_lspci(lspci, &tree, "", "l.txt", ImportOptions{}));
  std::string bad = "-[0000:00]-+-20.0\n";
  EXPECT_THROW(import_lspci(lspci, &bad, "", "l.txt", ImportOptions{}), Error);
}

TEST(ImportUdev, DevicePathsBeyondAnyKernelsAndDevicesAboveTheLimitAreNamed) {
  auto error_where = [](const std::string& db) {
    try {
      import_udev(db, "u.txt", ImportOptions{});
    } catch (const Error& e) {
      return e.where() + " " + e.what();
    }
    return std::string("(no error)");
  };
  std::string pci =
      "P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=10802\nE: PCI_ID=144D:A808\n\n";
  EXPECT_NE(error_where("P: /devices/" + std::string(80000, 'a') + "\nE: SUBSYSTEM=pci\n").find("u.txt: line 1"),
            std::string::npos);
  // The NVMe controller below a "device" 0x20: Bdf::parse says no, and nothing dereferences that;
  // that record is left out with a note, the machine's PCI device stays.
  auto odd = as_source(import_udev(pci + "P: /devices/pci0000:00/0000:00:20.0/nvme/nvme0\nE: SUBSYSTEM=nvme\n", "u.txt",
                                   ImportOptions{}));
  EXPECT_NE(input_notes(*odd).find("NVMe controller nvme0 below '0000:00:20.0', which is not a PCI address"),
            std::string::npos)
      << input_notes(*odd);
  EXPECT_FALSE(odd->exists("/sys/class/nvme/nvme0"));
  // A controller and its namespaces are still found by their paths.
  auto src = as_source(import_udev(pci + "P: /devices/pci0000:00/0000:00:00.0/nvme/nvme0\nE: SUBSYSTEM=nvme\n\n"
                                         "P: /devices/pci0000:00/0000:00:00.0/nvme/nvme0/nvme0n1\nE: SUBSYSTEM=block\n"
                                         "E: DEVTYPE=disk\nE: ID_MODEL=Disk\n\n",
                                   "u.txt", ImportOptions{}));
  EXPECT_EQ(src->resolve("/sys/class/nvme/nvme0/device"), "/sys/devices/pci0000:00/0000:00:00.0");
  EXPECT_TRUE(src->exists("/sys/block/nvme0n1"));
}

TEST(ImportUdev, MoreRecordsOrPropertiesThanAnyMachinesAreRefusedNamingTheLine) {
  auto error_of = [](const std::string& db) {
    try {
      import_udev(db, "u.txt", ImportOptions{});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  std::string records;
  for (std::size_t i = 0; i <= 100000; ++i) records += "P: /devices/virtual/x\n";
  EXPECT_EQ(error_of(records), "u.txt: line 100001: more than 100000 device records; no machine has that many");
  std::string properties = "P: /devices/virtual/x\n";
  for (std::size_t i = 0; i <= 1000000; ++i) properties += "E: A=b\n";
  EXPECT_EQ(error_of(properties), "u.txt: line 1000002: more than 1000000 device properties; no machine has that many");
}

TEST(ImportLspci, MoreFunctionsOrConfigLinesThanLspciPrintsAreRefusedNamingTheLine) {
  auto error_of = [](const std::string& dump) {
    try {
      import_lspci(dump, nullptr, "", "l.txt", ImportOptions{});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  std::string cfg = ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256);
  std::string device = hex_dump("00:00.0 Host bridge", cfg);
  std::string row = device.substr(device.find('\n') + 1, device.find('\n', device.find('\n') + 1) - device.find('\n'));
  ASSERT_EQ(row.substr(0, 4), "00: ");
  std::string long_device = "00:00.0 Host bridge\n";
  for (int i = 0; i <= 256; ++i) long_device += row;
  EXPECT_EQ(error_of(long_device),
            "l.txt: line 258: more than 256 config space lines for 0000:00:00.0; lspci -xxxx prints 256");
  std::string many;
  for (int i = 0; i <= 65536; ++i) many += "00:00.0 x\n";
  EXPECT_EQ(error_of(many), "l.txt: line 65537: more than 65536 PCI functions; no machine has that many");
}

TEST(ImportUdev, OddLinesAreSaidOnlyForRecordsTheImportReads) {
  // A bare line in a HID and in an MEI record (a property value udev wrote with a newline in it)
  // is no concern of the PCI verdict; the same in the PCI function's record is said, with its line.
  std::string db =
      "P: /devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/0003:046D:C52B.0001\nE: SUBSYSTEM=hid\n"
      "a bare HID line\nE: MODALIAS=hid:b0003g0001v0000046Dp0000C52B\n\n"
      "P: /devices/pci0000:00/0000:00:16.0/0000:00:16.0-8c2cf\na bare MEI line\nE: SUBSYSTEM=mei\n\n"
      "P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=10802\nsplit PCI line\n"
      "E: PCI_ID=144D:A808\n\n";
  auto src = as_source(import_udev(db, "u.txt", ImportOptions{}));
  std::string notes = input_notes(*src);
  EXPECT_EQ(notes.find("HID line"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("MEI line"), std::string::npos) << notes;
  EXPECT_NE(notes.find("u.txt: line 13: 'split PCI line' is not 'X: value'"), std::string::npos) << notes;
  EXPECT_TRUE(src->exists("/sys/bus/pci/devices/0000:00:00.0"));
}

TEST(ImportUdev, ADriverNameFromInputIsEscapedInEveryTextView) {
  // Two NVMe functions bound to a driver named with a terminal escape: left out of the pairs, and
  // named in check's left-out line and topo's annotations and unusable list, escaped in each.
  std::string nvme = "E: SUBSYSTEM=pci\nE: PCI_CLASS=10802\nE: PCI_ID=144D:A808\nE: DRIVER=ev\x1b[31mil\n\n";
  std::string db =
      "P: /devices/pci0000:00/0000:00:01.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=1022:14AB\n\n"
      "P: /devices/pci0000:00/0000:00:01.0/0000:01:00.0\n" +
      nvme + "P: /devices/pci0000:00/0000:00:01.0/0000:01:00.1\n" + nvme;
  auto src = as_source(import_udev(db, "u.txt", ImportOptions{}));
  auto report = run_check(*src, CheckOptions{});
  ASSERT_EQ(report->inv.unusable.size(), 2u);
  make_printable(report->findings);  // as the CLI does before any text (findings escape as a whole)
  std::string check = check_text(*report, TextStyle{}, true);
  std::string topo = topology_text(report->topo, report->inv, TextStyle{});
  EXPECT_NE(check.find("left out: 2 NVMe functions (0000:01:00.0 0000:01:00.1)"), std::string::npos) << check;
  EXPECT_EQ(check.find('\x1b'), std::string::npos) << check;
  EXPECT_EQ(topo.find('\x1b'), std::string::npos) << topo;
}

}  // namespace
}  // namespace p2pcheck
