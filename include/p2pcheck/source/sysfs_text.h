// Parsers for the small text formats sysfs and procfs use, shared by every reader.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace p2pcheck {

std::string_view trim(std::string_view text);
// "0x1002\n" -> 0x1002; nullopt when the text is not one hex number.
std::optional<std::uint64_t> parse_hex(std::string_view text);
// "-1\n", "16\n" -> the integer; nullopt when not a decimal integer.
std::optional<std::int64_t> parse_dec(std::string_view text);
std::vector<std::string> split_lines(std::string_view text);
std::vector<std::string> split_words(std::string_view text);
// The same pieces as views, for parsers on a hot path: each returns the next piece of `rest`
// and advances `rest` past it. next_line: up to the next '\n'. next_word: the next run of
// characters other than ' ', '\t', '\n'; "" when none is left.
std::string_view next_line(std::string_view& rest);
std::string_view next_word(std::string_view& rest);
// The first words of `line` into `out` (next_word's words), as many as fit; returns how many
// there were, at most out.size(). For table rows, whose parsers want a few leading fields and
// should not pay for a string per word of hostile text.
std::size_t first_words(std::string_view line, std::span<std::string_view> out);
// Non-empty pieces between separators: split("a;;b", ';') -> {"a", "b"}.
std::vector<std::string> split(std::string_view text, char separator);
// Items separated by `sep`: join({"a", "b"}, ", ") -> "a, b".
std::string join(const std::vector<std::string>& items, const std::string& sep);
// Lower-case hex without prefix, at least `digits` wide: hex(0x1002, 4) -> "1002" (printf's "%0*llx").
std::string hex(std::uint64_t value, int digits = 0);
// The same appended to `out`, for text built in one string (Bdf::str).
void append_hex(std::string& out, std::uint64_t value, int digits = 0);
// Last component of a path or link target: "../../../bus/pci/drivers/nvme" -> "nvme".
std::string basename(std::string_view path);
// "DIR/NAME" in one allocation: `dir + "/name"` copies dir, then grows the copy (two, and a device's
// dozen attributes are asked so).
std::string path_in(std::string_view dir, std::string_view name);

// Character tests for the plain string parsers that replace std::regex on dump text (libstdc++'s
// regex recurses once per character and overflows the stack on a long line).
bool is_hex_digits(std::string_view text);  // non-empty, [0-9a-fA-F] only
bool is_dec_digits(std::string_view text);  // non-empty, [0-9] only

// The kernel's NVMe device names: controller "nvme0", namespace "nvme0n1", hidden per-path node
// of a native-multipath head "nvme0c1n1" (its head is "nvme0n1"), partition "nvme0n1p2".
struct NvmeName {
  enum class Kind { kController, kNamespace, kPathNode, kPartition };
  Kind kind = Kind::kController;
  std::string ns;  // the namespace (head) it belongs to; empty for a controller
};
std::optional<NvmeName> parse_nvme_name(std::string_view name);

}  // namespace p2pcheck
