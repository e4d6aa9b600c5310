// JSON text as nlohmann's dump() writes it, written here: dump() runs every byte of every string
// through its UTF-8 decoder, which was most of the time `check --json` spent on its functions and
// findings (34 instructions a byte). Plain strings are copied as they are, floats get dump()'s own
// digits; a string with anything else (an escape, a byte outside printable ASCII) is handed to
// dump() itself, so the text stays byte-identical to it, bad UTF-8 replaced as before.
#include "p2pcheck/source/json_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string_view>

namespace p2pcheck {
namespace {

// The bytes dump() copies as they are: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> kPlainBytes = [] {
  std::array<bool, 256> plain{};
  for (int byte = 0x20; byte <= 0x7e; ++byte) plain[static_cast<std::size_t>(byte)] = byte != '"' && byte != '\\';
  return plain;
}();

bool plain(std::string_view text) {
  for (char c : text)
    if (!kPlainBytes[static_cast<unsigned char>(c)]) return false;
  return true;
}

template <typename Json>
class Writer {
 public:
  Writer(std::string& out, int indent) : out_(out), indent_(indent) {}

  void value(const Json& v, int depth) {
    switch (v.type()) {
      case nlohmann::json::value_t::object: return object(v, depth);
      case nlohmann::json::value_t::array: return array(v, depth);
      case nlohmann::json::value_t::string: return string(v.template get_ref<const std::string&>());
      case nlohmann::json::value_t::boolean: out_ += v.template get<bool>() ? "true" : "false"; return;
      case nlohmann::json::value_t::null: out_ += "null"; return;
      case nlohmann::json::value_t::number_integer: return number(v.template get<std::int64_t>());
      case nlohmann::json::value_t::number_unsigned: return number(v.template get<std::uint64_t>());
      case nlohmann::json::value_t::number_float: return real(v.template get<double>());
      default: out_ += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // binary, discarded
    }
  }

 private:
  void object(const Json& v, int depth) {
    if (v.empty()) {
      out_ += "{}";
      return;
    }
    out_ += '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out_ += ',';
      first = false;
      line_break(depth + 1);
      const std::string& key = it.key();
      if (plain(key)) {
        out_ += '"';
        out_ += key;
        out_ += indent_ >= 0 ? "\": " : "\":";
      } else {
        string(key);
        out_ += indent_ >= 0 ? ": " : ":";
      }
      value(it.value(), depth + 1);
    }
    line_break(depth);
    out_ += '}';
  }

  void array(const Json& v, int depth) {
    if (v.empty()) {
      out_ += "[]";
      return;
    }
    out_ += '[';
    bool first = true;
    for (const Json& element : v) {
      if (!first) out_ += ',';
      first = false;
      line_break(depth + 1);
      value(element, depth + 1);
    }
    line_break(depth);
    out_ += ']';
  }

  // dump()'s pretty layout: each member on its own line, `indent` spaces a level.
  void line_break(int depth) {
    if (indent_ < 0) return;
    out_ += '\n';
    out_.append(static_cast<std::size_t>(depth) * static_cast<std::size_t>(indent_), ' ');
  }

  void string(const std::string& text) {
    if (!plain(text)) {
      out_ += Json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
    out_ += '"';
    out_ += text;
    out_ += '"';
  }

  // dump()'s own float text: its shortest round-trip digits (nlohmann::detail::to_chars, what its
  // serializer calls), and null for what JSON cannot hold.
  void real(double x) {
    if (!std::isfinite(x)) {
      out_ += "null";
      return;
    }
    char digits[64];
    char* end = nlohmann::detail::to_chars(digits, digits + sizeof digits, x);
    out_.append(digits, end);
  }

  template <typename Integer>
  void number(Integer n) {
    char digits[24];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, n);
    out_.append(digits, end);
  }

  std::string& out_;
  int indent_;
};

template <typename Json>
std::string text_of(const Json& j, int indent) {
  std::string out;
  Writer<Json>(out, indent).value(j, 0);
  return out;
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) { return text_of(j, indent); }
std::string json_text(const nlohmann::ordered_json& j, int indent) { return text_of(j, indent); }

}  // namespace p2pcheck
