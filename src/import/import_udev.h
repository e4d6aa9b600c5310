// The udev database (`udevadm info --export-db`), shared by the udev and sosreport imports.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "p2pcheck/import/sysfs_builder.h"

namespace p2pcheck {

struct UdevRecord {
  std::string devpath;                     // "/devices/pci0000:00/0000:00:01.0" (P:)
  std::map<std::string, std::string> env;  // E: lines
  int line = 0;                            // where the record starts, for messages
  // Its lines that are not "X: value", said only when the record is one the import reads: a HID or
  // MEI device's odd line is no concern of a PCI verdict.
  std::vector<SkippedRecord> odd_lines;
  std::size_t odd_more = 0;  // odd lines past the ones kept
};

// A large machine's database has some thousands of devices of a few dozen properties each; a
// dump's past these limits was not made by udevadm, and each record and property is held in memory.
inline constexpr std::size_t kMaxUdevRecords = 100000;
inline constexpr std::size_t kMaxUdevProperties = 1000000;

// Throws Error naming the line when the database is past the limits. A line that is not "X: value"
// is left out, with a note in its record's odd_lines (kMaxOddLinesKept in all, the rest counted in
// odd_more), or in `skipped` outside any record (kMaxSkippedLines, then one more that says so).
inline constexpr std::size_t kMaxSkippedLines = 20;
inline constexpr std::size_t kMaxOddLinesKept = 1000;
// Each such line's note is of the kind kOddLines, its subject "line N".
inline constexpr const char* kOddLines = "lines are not 'X: value' as udevadm info --export-db prints them";
std::vector<UdevRecord> parse_udev_db(const std::string& text, const std::string& name,
                                      std::vector<SkippedRecord>& skipped);

// Adds every PCI function, NVMe controller and namespace the records describe to `builder`, DMI
// from the dmi modalias and /proc/cpuinfo from CPU 0's modalias; a record it cannot read is left
// out with a note (SysfsBuilder::skipped), and so are the odd lines of the records it reads; other
// records (HID, MEI, sound, ...) are passed over without a word. Returns false when no CPU record was found.
bool add_udev_devices(const std::vector<UdevRecord>& records, const std::string& name, SysfsBuilder& builder);

}  // namespace p2pcheck
