// Sosreport and udev imports: records left out are grouped by kind (one line each in the replay),
// config space copied from proc/bus/pci counts as config space, and every refusal says what the
// input did show and what to ask for.
#include <gtest/gtest.h>

#include "import_fixture.h"
#include "p2pcheck/import/dump.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

using testing::as_source;
using testing::bridge;
using testing::ConfigSpace;

const std::string kPciRecords =
    "P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60000\nE: PCI_ID=1022:14A4\nE: "
    "PCI_SLOT_NAME=0000:00:00.0\n\n"
    "P: /devices/pci0000:00/0000:00:01.1\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=1022:14AB\nE: "
    "PCI_SLOT_NAME=0000:00:01.1\n\n";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();  // "WHERE: message"
  }
  return "(no error)";
}

// The odd lines of a PCI record are one group, each line a subject; a record left out is another.
TEST(ImportUdev, RecordsLeftOutAreGroupedByKind) {
  std::string db =
      "P: /devices/pci0000:00/0000:00:00.0\nE: SUBSYSTEM=pci\nodd one\nE: PCI_CLASS=60000\nodd two\n"
      "E: PCI_ID=1022:14A4\nodd three\n\n"
      "P: /devices/pci0000:00/0000:00:01.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=zz\n\n"
      "P: /devices/pci0000:00/0000:00:02.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=60400\nE: PCI_ID=yy\n\n";
  auto src = as_source(import_udev(db, "u.txt", ImportOptions{}));
  auto info = read_capture_info(*src);
  ASSERT_EQ(info->input_note_groups.size(), 2u);
  const InputNoteGroup& odd = info->input_note_groups[0];
  EXPECT_EQ(odd.kind, "lines are not 'X: value' as udevadm info --export-db prints them");
  EXPECT_EQ(odd.count, 3u);
  EXPECT_EQ(odd.subjects, (std::vector<std::string>{"line 3", "line 5", "line 7"}));
  EXPECT_NE(odd.first.find("u.txt: line 3: 'odd one'"), std::string::npos) << odd.first;
  const InputNoteGroup& bad = info->input_note_groups[1];
  EXPECT_EQ(bad.kind, "device records could not be read");
  EXPECT_EQ(bad.subjects, (std::vector<std::string>{"line 9", "line 14"}));
}

// sos copies config space into proc/bus/pci: those functions have it, and the note counts only
// those without; copies of a length no kernel gives are one group.
TEST(ImportSosreport, ConfigCopiesCountAsConfigSpaceAndBadCopiesAreGrouped) {
  MemoryTree sos;
  sos.add_file(
      "/sos_commands/devices/udevadm_info_--export-db",
      kPciRecords +
          "P: /devices/pci0000:00/0000:00:02.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=20000\nE: PCI_ID=8086:1521\n\n"
          "P: /devices/pci0000:00/0000:00:03.0\nE: SUBSYSTEM=pci\nE: PCI_CLASS=20000\nE: PCI_ID=8086:1521\n\n");
  sos.add_file("/proc/bus/pci/00/00.0", ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256));
  sos.add_file("/proc/bus/pci/00/01.1", bridge(0, 1, 1, 4, 0x1d));
  sos.add_file("/proc/bus/pci/00/02.0", std::string(100, 'x'));
  sos.add_file("/proc/bus/pci/00/03.0", std::string(30, 'x'));
  auto src = as_source(import_sosreport(sos, "sos.tar.xz", ImportOptions{}));
  auto info = read_capture_info(*src);
  std::string notes = nlohmann::json(info->notes).dump();
  EXPECT_NE(notes.find("2 of 4 PCI functions have no config space in this sosreport input"), std::string::npos)
      << notes;
  ASSERT_EQ(info->input_note_groups.size(), 1u);
  EXPECT_EQ(info->input_note_groups[0].count, 2u);
  EXPECT_EQ(info->input_note_groups[0].subjects,
            (std::vector<std::string>{"proc/bus/pci/00/02.0", "proc/bus/pci/00/03.0"}));
}

// Without the udev database: what the sosreport holds of the rest, and which plugins to ask for.
TEST(ImportSosreport, RefusalsSayWhatTheReportShowsAndWhatToAskFor) {
  MemoryTree sos;
  sos.add_file("/sos_commands/pci/lspci_-nnvv",
               "00:00.0 Host bridge [0600]: AMD [1022:14a4]\n\tSubsystem: x\n00:01.1 PCI bridge [0604]: AMD "
               "[1022:14ab]\n");
  sos.add_file("/sos_commands/kernel/uname_-a", "Linux node7 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux\n");
  sos.add_file("/proc/cpuinfo",
               "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD "
               "EPYC 9654\n\nprocessor\t: 1\n\n");
  sos.add_file("/proc/bus/pci/00/00.0", ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256));
  std::string no_db = error_of([&] { import_sosreport(sos, "sos.tar.xz", ImportOptions{}); });
  EXPECT_EQ(no_db,
            "sos.tar.xz: sosreport without sos_commands/devices/udevadm_info_--export-db (its devices plugin did not "
            "run): the PCI hierarchy is not in it; it shows kernel 6.8.0-45-generic (uname -a), CPU AuthenticAMD "
            "family 25 model 17 (AMD EPYC 9654), 2 processors (proc/cpuinfo), lspci -nnvv of 2 PCI functions "
            "(sos_commands/pci), 1 files in proc/bus/pci; ask for `sos report -o devices,pci,kernel,processor,block` "
            "(or `udevadm info --export-db` from the machine)");
  sos.add_file("/sos_commands/devices/udevadm_info_--export-db",
               "P: /devices/virtual/input/input0\nE: SUBSYSTEM=input\n\n");
  std::string no_pci = error_of([&] { import_sosreport(sos, "sos.tar.xz", ImportOptions{}); });
  EXPECT_NE(no_pci.find("sos.tar.xz: its sos_commands/devices/udevadm_info_--export-db holds 1 records and no PCI "
                        "device that could be read; it shows kernel 6.8.0-45-generic (uname -a)"),
            std::string::npos)
      << no_pci;
  EXPECT_NE(no_pci.find("; ask for `sos report -o devices,pci,kernel,processor,block` run as root"), std::string::npos)
      << no_pci;
  MemoryTree empty;
  EXPECT_NE(error_of([&] {
              import_sosreport(empty, "s", ImportOptions{});
            }).find("it shows none of the kernel, CPU or PCI outputs p2pcheck reads; ask for `sos report"),
            std::string::npos);
}

TEST(ImportDump, CpuinfoAloneSaysWhichCpuAndWhatToAskFor) {
  std::string cpuinfo =
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 79\nmodel name\t: Intel(R) Xeon(R) "
      "CPU E5-2680 v4\n\n";
  EXPECT_EQ(error_of([&] { open_dump_bytes(cpuinfo, "cpuinfo.txt", ImportOptions{}); }),
            "cpuinfo.txt: /proc/cpuinfo alone describes no PCI devices (it shows CPU GenuineIntel family 6 model "
            "79 (Intel(R) Xeon(R) CPU E5-2680 v4), 1 processor): ask for `sudo lspci -xxxx` and `lspci -tv` from the "
            "same machine and put them in a directory beside it, or pass it with --cpu to an lspci dump (or ask for "
            "a `p2pcheck capture`)");
}

}  // namespace
}  // namespace p2pcheck
