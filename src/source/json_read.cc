// Typed reads of outside JSON (json_read.h).
#include "p2pcheck/source/json_read.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/json_text.h"

namespace p2pcheck {

using nlohmann::ordered_json;

namespace {

struct Shape {
  int deepest = 0;                // the deepest nesting of arrays and objects
  std::size_t elements = 0;       // array elements and object members, about (commas + 1 per container)
  std::size_t widest_object = 0;  // the most members of one object, about (its commas + 1)
};

// The shape of `text`, counted outside strings; stops counting once the nesting is past `limit`.
Shape shape_of(std::string_view text, int limit) {
  int depth = 0;
  Shape shape;
  // For each open container: its members so far when it is an object (0 for an array: not counted).
  std::vector<std::size_t> members;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      shape.deepest = std::max(shape.deepest, ++depth);
      ++shape.elements;
      if (shape.deepest > limit) return shape;
      members.push_back(c == '{' ? 1 : 0);
    } else if (c == ']' || c == '}') {
      --depth;
      if (!members.empty()) members.pop_back();
    } else if (c == ',') {
      ++shape.elements;
      if (!members.empty() && members.back() > 0) shape.widest_object = std::max(shape.widest_object, ++members.back());
    }
  }
  return shape;
}

const char* type_name(const ordered_json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "true/false";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

// Builds the document as nlohmann's own DOM parser does, with one difference: a new member of an
// object is appended, not looked up among the members before it (ordered_json's operator[] is a
// linear search, so a 32,768-member object cost 0.6 s, 11 s in the fuzz build). A set of each open
// object's keys finds a repeated key, which then takes the first one's place and the last value,
// as with nlohmann.
class LinearDomBuilder : public nlohmann::json_sax<ordered_json> {
 public:
  explicit LinearDomBuilder(ordered_json& root) : root_(root) {}

  bool null() override { return place(nullptr); }
  bool boolean(bool value) override { return place(value); }
  bool number_integer(number_integer_t value) override { return place(value); }
  bool number_unsigned(number_unsigned_t value) override { return place(value); }
  bool number_float(number_float_t value, const string_t&) override { return place(value); }
  bool string(string_t& value) override { return place(std::move(value)); }
  bool binary(binary_t& value) override { return place(ordered_json::binary(std::move(value))); }
  bool start_object(std::size_t) override { return open(ordered_json::object()); }
  bool key(string_t& name) override {
    Open& object = open_.back();
    ordered_json::object_t& members = object.value->get_ref<ordered_json::object_t&>();  // a vector underneath
    if (object.keys.insert(name).second) {
      members.emplace_back(std::move(name), nullptr);
      member_ = &members.back().second;
    } else {
      member_ = &object.value->operator[](name);
    }
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(ordered_json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Open {
    ordered_json* value;
    std::unordered_set<std::string> keys;  // for an object
  };

  // Where the next value goes: the root, the member just named, or a new array element.
  ordered_json& slot() {
    if (open_.empty()) return root_;
    ordered_json& container = *open_.back().value;
    if (container.is_array()) return container.emplace_back();
    return *member_;
  }
  bool place(ordered_json value) {
    slot() = std::move(value);
    return true;
  }
  bool open(ordered_json container) {
    ordered_json& at = slot();
    at = std::move(container);
    open_.push_back({&at, {}});
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  ordered_json& root_;
  std::vector<Open> open_;
  ordered_json* member_ = nullptr;
};

}  // namespace

std::optional<ordered_json> parse_outside_json(std::string_view text, const std::string& file) {
  Shape shape = shape_of(text, kMaxJsonDepth);
  if (shape.deepest > kMaxJsonDepth)
    throw Error(file,
                "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels; p2pcheck never writes that");
  // Each value costs nlohmann 16 bytes and more: a 2 KB archive of "[0,0,...]" once aborted at 512 MiB.
  if (shape.elements > kMaxJsonElements)
    throw Error(file, "JSON of more than " + std::to_string(kMaxJsonElements) +
                          " values; p2pcheck never writes that many (a capture lists each file once)");
  if (shape.widest_object > kMaxJsonObjectMembers)
    throw Error(file, "JSON object of more than " + std::to_string(kMaxJsonObjectMembers) +
                          " members; p2pcheck never writes one that large (a machine has fewer PCI functions)");
  ordered_json j;
  LinearDomBuilder builder(j);
  if (!ordered_json::sax_parse(text, &builder)) return std::nullopt;
  return j;
}

std::string json_brief(const ordered_json& value) {
  std::string text = json_text(value, -1);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

JsonFields::JsonFields(const ordered_json& value, std::string file, std::string where)
    : value_(value), file_(std::move(file)), where_(std::move(where)) {
  if (!value_.is_object())
    throw Error(file_, (where_.empty() ? std::string("the document") : where_) + ": expected an object, found " +
                           type_name(value_) + " " + json_brief(value_));
}

const ordered_json* JsonFields::find(const char* key) const {
  auto it = value_.find(key);
  return it == value_.end() || it->is_null() ? nullptr : &*it;
}

void JsonFields::fail(const std::string& key, const std::string& expected) const {
  const ordered_json* v = find(key.c_str());
  std::string found = v ? std::string(type_name(*v)) + " " + json_brief(*v) : "nothing";
  throw Error(file_, (where_.empty() ? "" : where_ + ".") + key + ": expected " + expected + ", found " + found);
}

std::optional<std::string> JsonFields::text(const char* key) const {
  const ordered_json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail(key, "a string");
  return v->get<std::string>();
}

std::optional<bool> JsonFields::flag(const char* key) const {
  const ordered_json* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) fail(key, "true or false");
  return v->get<bool>();
}

std::optional<std::int64_t> JsonFields::integer(const char* key, std::int64_t min, std::int64_t max) const {
  const ordered_json* v = find(key);
  if (!v) return std::nullopt;
  std::string expected = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  // An unsigned value above INT64_MAX is out of range whatever min and max say.
  if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<std::uint64_t>() > INT64_MAX)) fail(key, expected);
  std::int64_t n = v->get<std::int64_t>();
  if (n < min || n > max) fail(key, expected);
  return n;
}

const ordered_json* JsonFields::array(const char* key) const {
  const ordered_json* v = find(key);
  if (v && !v->is_array()) fail(key, "an array");
  return v;
}

const ordered_json* JsonFields::object(const char* key) const {
  const ordered_json* v = find(key);
  if (v && !v->is_object()) fail(key, "an object");
  return v;
}

std::string JsonFields::member(const char* key) const { return (where_.empty() ? "" : where_ + ".") + key; }

std::string JsonFields::member(const char* key, std::size_t index) const {
  return member(key) + "[" + std::to_string(index) + "]";
}

}  // namespace p2pcheck
