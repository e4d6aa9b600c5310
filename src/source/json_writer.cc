// JsonWriter (json_writer.h): dump()'s text, written here. dump() runs every byte of every string
// through its UTF-8 decoder (34 instructions a byte, most of what `check --json` once spent on its
// tables), so plain strings are copied as they are; a string with anything else (an escape, a byte
// outside printable ASCII) is handed to dump() itself, so its escapes and its U+FFFD for bytes that
// are not UTF-8 stay nlohmann's.
#include "p2pcheck/source/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>

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

// What is buffered before it goes to the stream: big blocks, not a write per value.
constexpr std::size_t kFlushAt = std::size_t{1} << 18;

}  // namespace

JsonWriter::JsonWriter(std::ostream& out, int indent) : stream_(&out), out_(own_), indent_(indent) {
  own_.reserve(kFlushAt + 4096);
}

JsonWriter::JsonWriter(std::string& out, int indent) : out_(out), indent_(indent) {}

JsonWriter::~JsonWriter() { flush(); }

void JsonWriter::flush() {
  if (!stream_ || own_.empty()) return;
  stream_->write(own_.data(), static_cast<std::streamsize>(own_.size()));
  own_.clear();
}

// dump()'s pretty layout: each member and element on its own line, `indent` spaces a level.
void JsonWriter::line_break(std::size_t depth) {
  if (indent_ < 0) return;
  out_ += '\n';
  out_.append(depth * static_cast<std::size_t>(indent_), ' ');
}

// The comma and line break before an array's element (a member's come with its key).
void JsonWriter::before_value() {
  if (stream_ && own_.size() >= kFlushAt) flush();
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (!level.empty) out_ += ',';
  level.empty = false;
  line_break(levels_.size());
}

void JsonWriter::key(std::string_view name) {
  if (stream_ && own_.size() >= kFlushAt) flush();
  Level& level = levels_.back();
  if (!level.empty) out_ += ',';
  level.empty = false;
  line_break(levels_.size());
  string(name);
  out_ += indent_ >= 0 ? ": " : ":";
  after_key_ = true;
}

void JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  levels_.push_back({true, true});
}

void JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  levels_.push_back({false, true});
}

void JsonWriter::end_object() {
  const bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) line_break(levels_.size());
  out_ += '}';
}

void JsonWriter::end_array() {
  const bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) line_break(levels_.size());
  out_ += ']';
}

void JsonWriter::value(std::nullptr_t) {
  before_value();
  out_ += "null";
}

void JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
}

void JsonWriter::value(std::string_view text) {
  before_value();
  string(text);
}

void JsonWriter::string(std::string_view text) {
  if (!plain(text)) {
    out_ += nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out_ += '"';
  out_ += text;
  out_ += '"';
}

void JsonWriter::signed_integer(std::int64_t n) {
  before_value();
  char digits[24];
  auto [end, error] = std::to_chars(digits, digits + sizeof digits, n);
  out_.append(digits, end);
}

void JsonWriter::unsigned_integer(std::uint64_t n) {
  before_value();
  char digits[24];
  auto [end, error] = std::to_chars(digits, digits + sizeof digits, n);
  out_.append(digits, end);
}

// dump()'s own float text: its shortest round-trip digits (nlohmann::detail::to_chars, what its
// serializer calls), and null for what JSON cannot hold.
void JsonWriter::value(double x) {
  before_value();
  if (!std::isfinite(x)) {
    out_ += "null";
    return;
  }
  char digits[64];
  char* end = nlohmann::detail::to_chars(digits, digits + sizeof digits, x);
  out_.append(digits, end);
}

// An nlohmann value, laid out at the depth it is written at. Recursive as deep as the value: a
// value parsed from input was bounded by its reader (json_read.h).
template <typename Json>
void JsonWriter::embed(const Json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      begin_object();
      for (auto it = j.begin(); it != j.end(); ++it) {
        key(it.key());
        embed(it.value());
      }
      return end_object();
    case nlohmann::json::value_t::array:
      begin_array();
      for (const Json& element : j) embed(element);
      return end_array();
    case nlohmann::json::value_t::string: return value(j.template get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean: return value(j.template get<bool>());
    case nlohmann::json::value_t::null: return value(nullptr);
    case nlohmann::json::value_t::number_integer: return signed_integer(j.template get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return unsigned_integer(j.template get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return value(j.template get<double>());
    default:  // binary or discarded: nlohmann's own text
      before_value();
      out_ += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

void JsonWriter::value(const nlohmann::json& j) { embed(j); }
void JsonWriter::value(const nlohmann::ordered_json& j) { embed(j); }

}  // namespace p2pcheck
