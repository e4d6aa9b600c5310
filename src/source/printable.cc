// Escaping names from input for output (printable.h).
#include "p2pcheck/source/printable.h"

#include <utility>

namespace p2pcheck {

namespace {

// The length of the valid UTF-8 character at `text[at]` (1 to 4), or 0 when the bytes there are
// not one: overlong forms, surrogates and code points past U+10FFFF count as invalid.
std::size_t utf8_length(std::string_view text, std::size_t at, char32_t& code) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char b = byte(at);
  std::size_t n;
  char32_t min;
  if (b < 0x80) {
    code = b;
    return 1;
  } else if ((b & 0xe0) == 0xc0) {
    n = 2, code = b & 0x1f, min = 0x80;
  } else if ((b & 0xf0) == 0xe0) {
    n = 3, code = b & 0x0f, min = 0x800;
  } else if ((b & 0xf8) == 0xf0) {
    n = 4, code = b & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (at + n > text.size()) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(at + i) & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return n;
}

// Unicode's format characters (general category Cf, Unicode 15): the bidi embeddings, overrides,
// isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C) reorder what a terminal
// shows, so "SSAP :TLUSER" can display as "RESULT: PASS"; the others are invisible. Each is a
// control character here. Sorted ranges, first and last included.
constexpr std::pair<char32_t, char32_t> kFormatControls[] = {
    {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},   {0x070f, 0x070f},
    {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},   {0x200b, 0x200f},   {0x2028, 0x202e},
    {0x2060, 0x2064},   {0x2066, 0x206f},   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd},
    {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
    {0xe0020, 0xe007f},
};

bool is_control(char32_t code) {
  if (code < 0x20 || code == 0x7f || (code >= 0x80 && code <= 0x9f)) return true;
  if (code < 0xad) return false;
  for (const auto& [first, last] : kFormatControls)
    if (code >= first && code <= last) return true;
  return false;
}

}  // namespace

bool is_printable(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    char32_t code;
    std::size_t n = utf8_length(text, at, code);
    if (n == 0 || is_control(code)) return false;
    at += n;
  }
  return true;
}

std::string printable(std::string_view text) {
  if (is_printable(text)) return std::string(text);
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t at = 0; at < text.size();) {
    char32_t code;
    std::size_t n = utf8_length(text, at, code);
    if (n != 0 && !is_control(code)) {
      out.append(text.substr(at, n));
      at += n;
      continue;
    }
    if (n == 1 && code == '\n') {
      out += "\\n";
    } else if (n == 1 && code == '\r') {
      out += "\\r";
    } else if (n == 1 && code == '\t') {
      out += "\\t";
    } else {
      // An invalid byte alone; a control character of several bytes, each of them.
      for (std::size_t i = 0; i < (n ? n : 1); ++i) {
        auto b = static_cast<unsigned char>(text[at + i]);
        out += "\\x";
        out += kHex[b >> 4];
        out += kHex[b & 0xf];
      }
    }
    at += n ? n : 1;
  }
  return out;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  // The byte after the cut is a continuation byte when the cut falls inside a character: cut
  // before that character's first byte instead (at most 3 back; invalid runs are escaped later).
  std::size_t cut = max_bytes;
  while (cut > 0 && max_bytes - cut < 3 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return text.substr(0, cut);
}

}  // namespace p2pcheck
