// One JSON document written in order, piece by piece, to a stream or a string: every JSON output of
// p2pcheck goes through it. The text is byte for byte what nlohmann's
// dump(indent, ' ', false, error_handler_t::replace) writes for the same value (its escapes, its
// number digits, its layout for --json and --json=pretty), so a document too big to hold (a fabric's
// million pairs) is written as it is made, and a piece still built as an nlohmann value is embedded.
#pragma once

#include <concepts>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace p2pcheck {

class JsonWriter {
 public:
  // `indent` < 0: one line (--json); otherwise that many spaces a level (--json=pretty: 2).
  JsonWriter(std::ostream& out, int indent);
  JsonWriter(std::string& out, int indent);  // appended to `out`
  ~JsonWriter();                             // flush()
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The next value is this member's (inside an object).
  void key(std::string_view name);

  void value(std::nullptr_t);
  void value(bool b);
  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(const std::string& text) { value(std::string_view(text)); }
  template <std::integral Integer>
  requires(!std::same_as<Integer, bool>) void value(Integer n) {
    if constexpr (std::is_signed_v<Integer>)
      signed_integer(n);
    else
      unsigned_integer(n);
  }
  void value(double x);
  void value(const nlohmann::json& j);
  void value(const nlohmann::ordered_json& j);
  template <typename T>
  void value(const std::optional<T>& v) {
    if (v)
      value(*v);
    else
      value(nullptr);
  }

  // key(name) then value(v).
  template <typename T>
  void member(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

  // Hands what is buffered to the stream (a string target holds it already).
  void flush();

 private:
  void before_value();
  void line_break(std::size_t depth);
  void string(std::string_view text);
  void signed_integer(std::int64_t n);
  void unsigned_integer(std::uint64_t n);
  template <typename Json>
  void embed(const Json& j);

  std::ostream* stream_ = nullptr;
  std::string own_;  // the stream's buffer
  std::string& out_;
  int indent_;
  struct Level {
    bool object;
    bool empty;
  };
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace p2pcheck
