// Reading JSON that came from outside (a capture's manifest.json and live/*.json): parsed with a
// nesting limit (nlohmann copies and prints values recursively, so a deep one overflows the
// stack), and every member read through a typed accessor that throws Error naming the file, the
// member and what was expected, never nlohmann's type_error (which escaped main: an abort).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace p2pcheck {

inline constexpr int kMaxJsonDepth = 64;
// Values (array elements and object members) in one document: a capture's manifest lists each
// captured file at most once, a few thousand; a million parsed values already take ~100 MB.
inline constexpr std::size_t kMaxJsonElements = 1 << 20;
// Members of one object. The parse appends members (nlohmann's own parser searches the keys before
// each new one: n^2/2 comparisons, a minute at 100,000); the limit stays as a bound on input. The
// largest object p2pcheck writes is a saved report's `functions`, one member per PCI function.
inline constexpr std::size_t kMaxJsonObjectMembers = 1 << 15;

// nullopt when `text` is not JSON at all (the caller decides whether that is an error); Error
// naming `file` when it nests deeper than kMaxJsonDepth, holds more than kMaxJsonElements values or
// an object of more than kMaxJsonObjectMembers members.
std::optional<nlohmann::ordered_json> parse_outside_json(std::string_view text, const std::string& file);

// The members of one JSON object of `file`, read by type. Absent and null members are nullopt
// (or nullptr); a member of another type throws Error("FILE", "MEMBER: expected ..., found ...").
// `where` names the object inside the file for messages: "" for the top, "module", "verdicts[2]".
class JsonFields {
 public:
  // Throws the same Error when `value` is not an object.
  JsonFields(const nlohmann::ordered_json& value, std::string file, std::string where = "");

  std::optional<std::string> text(const char* key) const;
  std::optional<bool> flag(const char* key) const;
  std::optional<std::int64_t> integer(const char* key, std::int64_t min, std::int64_t max) const;
  const nlohmann::ordered_json* array(const char* key) const;
  const nlohmann::ordered_json* object(const char* key) const;

  // "verdicts[2]" for the object at index 2 of the array member `key`, for a nested JsonFields.
  std::string member(const char* key) const;
  std::string member(const char* key, std::size_t index) const;
  const std::string& file() const { return file_; }
  // Throws Error naming the member `key` and what it should have been.
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

 private:
  const nlohmann::ordered_json* find(const char* key) const;
  const nlohmann::ordered_json& value_;
  std::string file_, where_;
};

// A short, printable rendering of a value for messages: `"3"`, `5`, `[...]` (at most 40 characters).
std::string json_brief(const nlohmann::ordered_json& value);

}  // namespace p2pcheck
