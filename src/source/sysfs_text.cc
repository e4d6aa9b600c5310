#include "p2pcheck/source/sysfs_text.h"

#include <algorithm>
#include <charconv>

namespace p2pcheck {

std::string_view trim(std::string_view text) {
  // A character test, not find_first_not_of: that searches the set once per character, and trim
  // runs on every attribute and every procfs row.
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<std::uint64_t> parse_hex(std::string_view text) {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_dec(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string_view next_line(std::string_view& rest) {
  size_t newline = std::min(rest.find('\n'), rest.size());
  std::string_view line = rest.substr(0, newline);
  rest.remove_prefix(std::min(newline + 1, rest.size()));
  return line;
}

std::string_view next_word(std::string_view& rest) {
  auto separator = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
  size_t begin = 0;
  while (begin < rest.size() && separator(rest[begin])) ++begin;
  size_t end = begin;
  while (end < rest.size() && !separator(rest[end])) ++end;
  std::string_view word = rest.substr(begin, end - begin);
  rest.remove_prefix(end);
  return word;
}

std::size_t first_words(std::string_view line, std::span<std::string_view> out) {
  std::size_t count = 0;
  while (count < out.size()) {
    std::string_view word = next_word(line);
    if (word.empty()) break;
    out[count++] = word;
  }
  return count;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) lines.emplace_back(next_line(text));
  return lines;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  for (std::string_view word = next_word(text); !word.empty(); word = next_word(text)) words.emplace_back(word);
  return words;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(separator, i);
    if (j == std::string_view::npos) j = text.size();
    if (j > i) parts.emplace_back(text.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

std::string basename(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string path_in(std::string_view dir, std::string_view name) {
  std::string path;
  path.reserve(dir.size() + 1 + name.size());
  path.append(dir).append(1, '/').append(name);
  return path;
}

bool is_hex_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

bool is_dec_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

namespace {

// Consumes `letter` and the decimal number after it: "n12..." -> "12", text advanced past it.
std::optional<std::string_view> numbered(std::string_view& text, char letter) {
  if (text.empty() || text.front() != letter) return std::nullopt;
  size_t n = 1;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
  if (n == 1) return std::nullopt;
  std::string_view digits = text.substr(1, n - 1);
  text.remove_prefix(n);
  return digits;
}

}  // namespace

std::optional<NvmeName> parse_nvme_name(std::string_view name) {
  if (name.substr(0, 4) != "nvme") return std::nullopt;
  std::string_view rest = name.substr(3);  // starts at the 'e', so "e<digits>" is the controller
  auto ctrl = numbered(rest, 'e');
  if (!ctrl) return std::nullopt;
  std::string head = "nvme" + std::string(*ctrl);
  if (rest.empty()) return NvmeName{NvmeName::Kind::kController, ""};
  if (auto path = numbered(rest, 'c')) {
    auto ns = numbered(rest, 'n');
    if (!ns || !rest.empty()) return std::nullopt;
    return NvmeName{NvmeName::Kind::kPathNode, head + "n" + std::string(*ns)};
  }
  auto ns = numbered(rest, 'n');
  if (!ns) return std::nullopt;
  std::string ns_name = head + "n" + std::string(*ns);
  if (rest.empty()) return NvmeName{NvmeName::Kind::kNamespace, ns_name};
  if (numbered(rest, 'p') && rest.empty()) return NvmeName{NvmeName::Kind::kPartition, ns_name};
  return std::nullopt;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

void append_hex(std::string& out, std::uint64_t value, int digits) {
  // By hand: snprintf cost ~2,000 instructions a call, and a fabric's JSON prints thousands of BDFs.
  char reversed[16];
  int n = 0;
  do {
    reversed[n++] = "0123456789abcdef"[value & 15];
    value >>= 4;
  } while (value != 0);
  for (int pad = digits - n; pad > 0; --pad) out += '0';
  while (n > 0) out += reversed[--n];
}

std::string hex(std::uint64_t value, int digits) {
  std::string out;
  append_hex(out, value, digits);
  return out;
}

}  // namespace p2pcheck
