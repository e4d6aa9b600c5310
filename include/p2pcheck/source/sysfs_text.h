// Parsers for the small text formats sysfs and procfs use, shared by every reader.
#pragma once

#include <cstdint>
#include <optional>
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
// Non-empty pieces between separators: split("a;;b", ';') -> {"a", "b"}.
std::vector<std::string> split(std::string_view text, char separator);
// Items separated by `sep`: join({"a", "b"}, ", ") -> "a, b".
std::string join(const std::vector<std::string>& items, const std::string& sep);
// Lower-case hex without prefix, at least `digits` wide: hex(0x1002, 4) -> "1002".
std::string hex(std::uint64_t value, int digits = 0);
// Last component of a path or link target: "../../../bus/pci/drivers/nvme" -> "nvme".
std::string basename(std::string_view path);

}  // namespace p2pcheck
