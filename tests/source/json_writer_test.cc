#include "p2pcheck/source/json_writer.h"

#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <string>

namespace p2pcheck {
namespace {

using nlohmann::ordered_json;
using namespace std::string_literals;

std::string dumped(const ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, ordered_json::error_handler_t::replace);
}

// Names a dump could hold: control characters, quotes, a terminal escape, bytes that are not UTF-8.
const std::string kHostileNames[] = {"plain 0000:00:01.0",
                                     "",
                                     "quote \" backslash \\ slash /",
                                     "tab\tnewline\ncr\rbs\bff\f",
                                     "nul \0 \x01 \x1f end"s,
                                     "escape \x1b[31mred\x1b[0m and delete \x7f",
                                     "UTF-8 caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80",
                                     "bad UTF-8 \xff\xfe and \xc3 cut",
                                     "\xe2\x80",
                                     "overlong \xc0\xaf and surrogate \xed\xa0\x80"};

// The same document made piece by piece and as a value: members, elements, nesting, empties.
void write_pieces(JsonWriter& w) {
  w.begin_object();
  w.member("schema", "p2pcheck.test");
  w.member("count", std::size_t{3});
  w.member("negative", -12);
  w.member("real", 2.5);
  w.member("nan", std::numeric_limits<double>::quiet_NaN());
  w.member("yes", true);
  w.member("none", nullptr);
  w.member("maybe", std::optional<int>());
  w.key("names");
  w.begin_array();
  for (const std::string& name : kHostileNames) w.value(name);
  w.end_array();
  w.key("by_name");
  w.begin_object();
  for (const std::string& name : kHostileNames) w.member(name, name.size());
  w.end_object();
  w.key("empty_object");
  w.begin_object();
  w.end_object();
  w.key("empty_array");
  w.begin_array();
  w.end_array();
  w.key("rows");
  w.begin_array();
  for (int i = 0; i < 3; ++i) {
    w.begin_array();
    w.value(i);
    w.value(std::uint64_t{std::numeric_limits<std::uint64_t>::max()});
    w.begin_object();
    w.end_object();
    w.end_array();
  }
  w.end_array();
  w.key("embedded");
  w.value(ordered_json{{"a", {1, 2, {{"b", nullptr}}}}, {"c", ordered_json::array()}, {"d", "x\ny"}});
  w.end_object();
}

ordered_json as_value() {
  ordered_json j = ordered_json::object();
  j["schema"] = "p2pcheck.test";
  j["count"] = 3;
  j["negative"] = -12;
  j["real"] = 2.5;
  j["nan"] = std::numeric_limits<double>::quiet_NaN();
  j["yes"] = true;
  j["none"] = nullptr;
  j["maybe"] = nullptr;
  j["names"] = ordered_json::array();
  j["by_name"] = ordered_json::object();
  for (const std::string& name : kHostileNames) {
    j["names"].push_back(name);
    j["by_name"][name] = name.size();
  }
  j["empty_object"] = ordered_json::object();
  j["empty_array"] = ordered_json::array();
  j["rows"] = ordered_json::array();
  for (int i = 0; i < 3; ++i)
    j["rows"].push_back({i, std::numeric_limits<std::uint64_t>::max(), ordered_json::object()});
  j["embedded"] = {{"a", {1, 2, {{"b", nullptr}}}}, {"c", ordered_json::array()}, {"d", "x\ny"}};
  return j;
}

TEST(JsonWriter, WritesWhatDumpWritesInEveryLayout) {
  for (int indent : {-1, 0, 1, 2, 4}) {
    std::string text;
    {
      JsonWriter w(text, indent);
      write_pieces(w);
    }
    EXPECT_EQ(text, dumped(as_value(), indent)) << "indent " << indent;
  }
}

TEST(JsonWriter, EscapesHostileNamesAsNlohmannDoes) {
  for (const std::string& name : kHostileNames) {
    std::string text;
    JsonWriter(text, -1).value(name);
    EXPECT_EQ(text, dumped(ordered_json(name), -1));
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << "a raw control byte reached the text";
  }
  std::string text;
  JsonWriter(text, -1).value("\x1b\xff"s);
  EXPECT_EQ(text, "\"\\u001b\xef\xbf\xbd\"");  // the escape spelled out, the bad byte U+FFFD
}

TEST(JsonWriter, StreamsInBlocksAndFlushesAtTheEnd) {
  std::ostringstream out;
  std::string expected = "[";
  {
    JsonWriter w(out, -1);
    w.begin_array();
    for (int i = 0; i < 200000; ++i) {
      w.value(i);
      expected += (i ? "," : "") + std::to_string(i);
    }
    EXPECT_GT(out.str().size(), 0u) << "nothing reached the stream before the end";
    EXPECT_LT(out.str().size(), expected.size());
    w.end_array();
  }
  EXPECT_EQ(out.str(), expected + "]");
}

}  // namespace
}  // namespace p2pcheck
