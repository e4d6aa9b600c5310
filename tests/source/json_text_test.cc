#include "p2pcheck/source/json_text.h"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <string>

namespace p2pcheck {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using namespace std::string_literals;

template <typename Json>
std::string dumped(const Json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

template <typename Json>
void expect_as_dump(const Json& j) {
  for (int indent : {-1, 0, 1, 2, 4}) EXPECT_EQ(json_text(j, indent), dumped(j, indent)) << "indent " << indent;
}

TEST(JsonText, IsWhatDumpWritesForEveryKindOfValue) {
  const std::string strings[] = {"",
                                 "plain 0000:00:01.0",
                                 "quote \" and backslash \\",
                                 "tab\tnewline\ncarriage\rbackspace\bformfeed\f",
                                 "nul \0 and \x01 and \x1f"s,  // the s keeps the NUL
                                 "delete \x7f",
                                 "UTF-8 caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80",
                                 "bad UTF-8 \xff\xfe and \xc3 cut",
                                 "\xe2\x80",
                                 "{\"looks\": [\"like json\"]}"};
  ordered_json doc = ordered_json::object();
  ordered_json list = ordered_json::array();
  for (const std::string& s : strings) {
    expect_as_dump(ordered_json(s));
    doc[s] = s;  // keys are escaped as strings are
    list.push_back(s);
  }
  for (double d : {0.0, -0.0, 2.5, 16.0, 1e20, 1e-7, 0.1, 123456789.125, std::numeric_limits<double>::max(),
                   std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    expect_as_dump(ordered_json(d));
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{42}, std::numeric_limits<std::int64_t>::min(),
                         std::numeric_limits<std::int64_t>::max()})
    expect_as_dump(ordered_json(n));
  expect_as_dump(ordered_json(std::numeric_limits<std::uint64_t>::max()));
  expect_as_dump(ordered_json(true));
  expect_as_dump(ordered_json(false));
  expect_as_dump(ordered_json(nullptr));
  expect_as_dump(ordered_json::object());
  expect_as_dump(ordered_json::array());
  doc["list"] = list;
  doc["empty object"] = ordered_json::object();
  doc["empty array"] = ordered_json::array();
  doc["nested"] = {{"a", {{"b", {1, 2, {{"c", nullptr}}}}}}, {"d", ordered_json::array({ordered_json::object()})}};
  expect_as_dump(doc);
  expect_as_dump(json(doc));  // the unordered kind too (its keys sorted)
}

// Random documents of every kind, nested a few levels: the text is dump()'s, byte for byte.
ordered_json random_value(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto random_string = [&] {
    std::string s(static_cast<std::size_t>(pick(12)), ' ');
    for (char& c : s) c = pick(4) == 0 ? static_cast<char>(pick(256)) : static_cast<char>('a' + pick(26));
    return s;
  };
  switch (depth > 3 ? pick(6) : pick(8)) {
    case 0: return nullptr;
    case 1: return pick(2) == 0;
    case 2: return static_cast<std::int64_t>(rng()) - (std::int64_t{1} << 31);
    case 3: return std::ldexp(static_cast<double>(rng()), pick(80) - 40);
    case 4: return random_string();
    case 5: return static_cast<std::uint64_t>(rng()) << 32 | rng();
    case 6: {
      ordered_json a = ordered_json::array();
      for (int i = pick(5); i > 0; --i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      ordered_json o = ordered_json::object();
      for (int i = pick(5); i > 0; --i) o[random_string()] = random_value(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonText, IsWhatDumpWritesForRandomDocuments) {
  std::mt19937 rng(20261203);
  for (int i = 0; i < 500; ++i) {
    ordered_json doc = random_value(rng, 0);
    expect_as_dump(doc);
    if (testing::Test::HasFailure()) {
      ADD_FAILURE() << "document " << i << ": " << dumped(doc, -1);
      return;
    }
  }
}

}  // namespace
}  // namespace p2pcheck
