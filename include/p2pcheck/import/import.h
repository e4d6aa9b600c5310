// Imports: whatever a customer sent, recognised by its content, turned into the sysfs/proc tree
// the analysis reads, so `--dump FILE` needs no format flag and the analysis code never knows.
//
//   lspci -xxxx (or -x/-xxx) output   config space via libpci's dump access method; hierarchy from
//                                     bridge bus numbers (or `lspci -tv` beside it in a directory)
//   lspci -nnvvv text (no hex dump)   config space rebuilt from what the text states, then as above
//   udevadm info --export-db          sysfs paths, IDs, classes, drivers, CPU from the cpu modalias
//   hwloc XML (lstopo --of xml)       PCI tree, IDs, classes, CPU, kernel release
//   sosreport (directory or tarball)  udev db + /proc/bus/pci config space + the files sos copies
//
// What a format cannot tell stays unknown, never absent: no config file at all means config space
// unknown (ACS "unknown"), files the format lacks read as failed, and the synthesised
// /manifest.json (the capture manifest's schema, with "format") lists in "notes" which questions
// stayed open. A directory of loose files (lspci -xxxx + lspci -tv + cpuinfo ...) is a bundle.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "p2pcheck/source/memory_source.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

struct ImportOptions {
  // --cpu: amd-zen, amd-pre-zen, intel, hygon, or the path of a /proc/cpuinfo file. Only for
  // formats that do not say which CPU the machine has; empty when not given.
  std::string cpu;
};

// kLspciText: lspci -v/-vv/-vvv detail lines, no hex dump; kLspciNoHex: device lines alone (plain lspci).
enum class TextFormat {
  kUnknown,
  kLspciDump,
  kLspciText,
  kLspciNoHex,
  kLspciTree,
  kUdevDb,
  kHwlocXml,
  kCpuinfo,
  kNvidiaBugReport
};
TextFormat sniff_text(std::string_view text);
const char* to_string(TextFormat format);

// Each returns the synthesised root. `name` is the input's name for messages ("lspci.txt").
// Throw Error naming the input (and line) when it is not what it claims to be.
MemoryTree import_lspci(const std::string& dump, const std::string* tree, const std::string& cpuinfo,
                        const std::string& name, const ImportOptions& options);
// lspci -vvv text (best -nnDvvvk, as root): each function's config space rebuilt from what it states.
MemoryTree import_lspci_text(const std::string& text, const std::string* tree, const std::string& cpuinfo,
                             const std::string& name, const ImportOptions& options);
MemoryTree import_udev(const std::string& db, const std::string& name, const ImportOptions& options);
MemoryTree import_hwloc(const std::string& xml, const std::string& name, const ImportOptions& options);
// nvidia-bug-report.log (uncompressed): its lspci, cpuinfo, uname, dmidecode and /proc sections.
MemoryTree import_nvidia_bug_report(const std::string& text, const std::string& name, const ImportOptions& options);
// `sos` holds the sosreport's files with the report's top folder at "/".
MemoryTree import_sosreport(const MemoryTree& sos, const std::string& name, const ImportOptions& options);

// What a /proc/cpuinfo shows, for a refusal that says what the input held: "CPU GenuineIntel family
// 6 model 79 (Intel(R) Xeon(R) CPU E5-2680 v4), 56 processors"; input text escaped.
std::string cpuinfo_shown(std::string_view text);

// /proc/cpuinfo text for --cpu (a keyword, or a file to read); throws UsageError for anything else.
std::string cpuinfo_for_option(const std::string& cpu);

}  // namespace p2pcheck
