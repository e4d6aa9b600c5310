// What an input is, told once from its first bytes: every door that takes a machine's input
// (--dump, fleet's files and directories, a plan given without --plan) asks identify_input(), and no
// other code reads a head to decide. The kind is what the head shows; opening the input settles the
// rest (an archive's members say capture, root or sosreport; lspci's whole text says -xxxx or -vvv).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace p2pcheck {

enum class InputKind {
  kDirectory,        // a captured root, a sosreport or a bundle of loose files: its entries decide
  kArchive,          // compressed (gzip, xz, zstd, bzip2) or tar: a capture, a tar of a root, a sosreport
  kLspci,            // lspci output with device lines: -xxxx, -vvv or plain (the whole text decides which)
  kLspciTree,        // lspci -t alone
  kUdevDb,           // udevadm info --export-db
  kHwlocXml,         // lstopo --of xml
  kNvidiaBugReport,  // nvidia-bug-report.log
  kCpuinfo,          // /proc/cpuinfo
  kPlan,             // a planned server in TOML (docs/plan.md)
  kCheckJson,        // a saved check --json (fleet reads it back)
  kEmpty,            // zero bytes: a failed upload or copy
  kUnknown,          // binary, or text of none of these
};
const char* to_string(InputKind kind);  // "directory", "archive", "lspci output", ... "plan"

// The head identify_input() reads: enough for every kind's first lines.
inline constexpr std::size_t kInputHeadBytes = 16384;

// The kind of an input whose first bytes are `head` (a regular file's).
InputKind identify_head(std::string_view head);

struct IdentifiedInput {
  InputKind kind = InputKind::kUnknown;
  std::string head;  // the bytes read (at most kInputHeadBytes); empty for a directory
};
// `path` as the user named it: a directory, or a regular file's head read once. What cannot be
// opened, or is no regular file, is kUnknown with no head: the open that follows names why.
IdentifiedInput identify_input(const std::string& path);

}  // namespace p2pcheck
