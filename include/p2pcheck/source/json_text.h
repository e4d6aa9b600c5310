// JSON text as p2pcheck writes it everywhere: sysfs strings are not guaranteed UTF-8 (a vendor's
// model field), so bad bytes become U+FFFD instead of nlohmann's exception (an abort in the CLI).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace p2pcheck {

// Byte for byte what j.dump(indent, ' ', false, error_handler_t::replace) writes (json_text.cc
// says why it is not that call).
std::string json_text(const nlohmann::json& j, int indent = 2);
std::string json_text(const nlohmann::ordered_json& j, int indent = 2);

// Writes `doc` exactly as json_text(doc, indent) would, except that the value of its top-level member
// `key` is the array of `count` elements made one at a time by `element(i)`: each is written and
// dropped, so a fabric's pairs never sit in memory as one document or one string.
template <typename Json, typename Element>
void write_json_streamed(std::ostream& out, Json doc, const std::string& key, std::size_t count, Element element,
                         int indent = 2) {
  // A control character cannot reach the text unescaped, and an unescaped quote before the value
  // cannot occur inside a string, so the marker is found only where the member is.
  const std::string marker = "\x01p2pcheck-streamed\x01";
  doc[key] = marker;
  std::string text = json_text(doc, indent);
  std::string found = json_text(Json(key), -1) + (indent >= 0 ? ": " : ":") + json_text(Json(marker), -1);
  std::size_t at = text.find(found);
  if (at == std::string::npos) {  // no such member: nothing to stream
    out << text;
    return;
  }
  at += found.size() - json_text(Json(marker), -1).size();
  out.write(text.data(), static_cast<std::streamsize>(at));
  if (count == 0) {
    out << "[]";
  } else {
    // nlohmann's layout: elements of a top-level member's array one level deeper than the member.
    const std::string inner = indent >= 0 ? std::string(static_cast<std::size_t>(2 * indent), ' ') : "";
    out << (indent >= 0 ? "[\n" : "[");
    for (std::size_t i = 0; i < count; ++i) {
      std::string one = json_text(element(i), indent);
      if (indent >= 0) {
        std::string shifted = inner;
        shifted.reserve(one.size() + one.size() / 8);
        for (char c : one) {
          shifted += c;
          if (c == '\n') shifted += inner;
        }
        one.swap(shifted);
      }
      out << one;
      if (i + 1 < count) out << (indent >= 0 ? ",\n" : ",");
    }
    out << (indent >= 0 ? "\n" + std::string(static_cast<std::size_t>(indent), ' ') + "]" : "]");
  }
  std::size_t rest = at + json_text(Json(marker), -1).size();
  out.write(text.data() + rest, static_cast<std::streamsize>(text.size() - rest));
}

}  // namespace p2pcheck
