// Escaping for the XML and HTML outputs (markup.h).
#include "p2pcheck/fleet/markup.h"

#include <cstdint>

namespace p2pcheck {

namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at `at` (1-4), or 0 when it is not one: overlong forms,
// surrogates and code points past U+10FFFF are invalid too.
std::size_t utf8_sequence(std::string_view s, std::size_t at, std::uint32_t& code) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = byte(at);
  if (c < 0x80) {
    code = c;
    return 1;
  }
  std::size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || at + len > s.size()) return 0;
  code = c & (0x7F >> len);
  for (std::size_t i = 1; i < len; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    code = code << 6 | (byte(at + i) & 0x3F);
  }
  static const std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kMin[len] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t code = 0;
    std::size_t len = utf8_sequence(text, i, code);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    // XML 1.0 Char: tab, newline, carriage return, and nothing else below U+0020; no U+FFFE/U+FFFF.
    bool allowed = code >= 0x20 ? code != 0xFFFE && code != 0xFFFF : (code == 0x9 || code == 0xA || code == 0xD);
    if (!allowed) {
      out += kReplacement;
    } else if (len > 1) {
      out.append(text.substr(i, len));
    } else {
      switch (text[i]) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += text[i];
      }
    }
    i += len;
  }
  return out;
}

}  // namespace p2pcheck
