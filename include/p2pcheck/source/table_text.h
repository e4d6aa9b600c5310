// Line-per-row tables from a machine (/proc/mounts, /proc/modules, /proc/swaps, mountinfo,
// os-release), split with their row count bounded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace p2pcheck {

// No such table on a real machine comes near this many lines (a large Kubernetes node mounts a
// few thousand file systems); a dump's that does was not made by a machine, and its rows (a few
// dozen bytes of text each, a few hundred as strings and structs) once took a 5 KB archive past
// 512 MiB.
inline constexpr std::size_t kMaxTableLines = 100000;

// The lines of `text` as views into it (next_line's lines), or Error naming `file` when it has
// more than kMaxTableLines lines. Views: a table at the limit is 100,000 rows, and a string per
// row was most of the cost of reading one.
std::vector<std::string_view> split_table_lines(std::string_view text, const std::string& file);

}  // namespace p2pcheck
