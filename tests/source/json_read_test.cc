#include "p2pcheck/source/json_read.h"

#include <functional>
#include <gtest/gtest.h>

#include "p2pcheck/source/error.h"

namespace p2pcheck {
namespace {

using nlohmann::ordered_json;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonFields, TypedReadsAndNullMeansAbsent) {
  auto j = parse_outside_json(R"({"s": "x", "b": true, "n": 7, "a": [1], "o": {}, "z": null})", "f.json");
  ASSERT_TRUE(j);
  JsonFields f(*j, "f.json");
  EXPECT_EQ(f.text("s"), "x");
  EXPECT_EQ(f.flag("b"), true);
  EXPECT_EQ(f.integer("n", 0, 10), 7);
  EXPECT_TRUE(f.array("a"));
  EXPECT_TRUE(f.object("o"));
  EXPECT_FALSE(f.text("z"));
  EXPECT_FALSE(f.text("absent"));
  EXPECT_FALSE(parse_outside_json("not json", "f.json"));
}

TEST(JsonFields, WrongTypesNameTheFileTheMemberAndWhatWasExpected) {
  auto j = parse_outside_json(R"({"api_version": "3", "n": 99, "big": 18446744073709551615, "inner": {"x": [1]}})",
                              "/live/kmod.json");
  ASSERT_TRUE(j);
  JsonFields f(*j, "/live/kmod.json", "module");
  EXPECT_EQ(error_of([&] { f.integer("api_version", 0, 10); }),
            "/live/kmod.json: module.api_version: expected an integer from 0 to 10, found a string \"3\"");
  EXPECT_EQ(error_of([&] { f.integer("n", 0, 10); }),
            "/live/kmod.json: module.n: expected an integer from 0 to 10, found a number 99");
  EXPECT_NE(error_of([&] { f.integer("big", 0, INT64_MAX); }).find("module.big: expected an integer"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { f.text("n"); }), "/live/kmod.json: module.n: expected a string, found a number 99");
  EXPECT_EQ(error_of([&] { f.flag("n"); }), "/live/kmod.json: module.n: expected true or false, found a number 99");
  EXPECT_EQ(error_of([&] { f.array("inner"); }),
            "/live/kmod.json: module.inner: expected an array, found an object {\"x\":[1]}");
  EXPECT_EQ(error_of([&] { JsonFields((*j)["n"], "/live/kmod.json", "verdicts[0]"); }),
            "/live/kmod.json: verdicts[0]: expected an object, found a number 99");
  EXPECT_EQ(f.member("verdicts", 2), "module.verdicts[2]");
}

TEST(ParseOutsideJson, DeepNestingIsRefusedBeforeParsing) {
  // nlohmann copies and prints values recursively: 100,000 levels overflowed the stack.
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(error_of([&] { parse_outside_json(deep, "m.json"); }).find("m.json: JSON nested deeper than 64 levels"),
            std::string::npos);
  std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(parse_outside_json(ok, "m.json"));
  // Brackets inside strings do not count.
  EXPECT_TRUE(parse_outside_json("{\"s\": \"" + std::string(1000, '[') + "\\\"\"}", "m.json"));
}

TEST(ParseOutsideJson, MoreValuesThanACaptureListsAreRefusedBeforeParsing) {
  // A 2 KB archive of a 31 MiB "[0,0,...]" aborted with std::bad_alloc under a 512 MiB cap.
  std::string many = "[0";
  for (std::size_t i = 0; i < kMaxJsonElements; ++i) many += ",0";
  many += "]";
  EXPECT_EQ(
      error_of([&] { parse_outside_json(many, "m.json"); }),
      "m.json: JSON of more than 1048576 values; p2pcheck never writes that many (a capture lists each file once)");
  many.erase(many.size() - 3, 2);  // one value fewer: at the limit
  EXPECT_TRUE(parse_outside_json(many, "m.json"));
  // Commas inside strings do not count.
  EXPECT_TRUE(parse_outside_json("[\"" + std::string(2000000, ',') + "\"]", "m.json"));
}

TEST(ParseOutsideJson, AnObjectTooWideToParseInReasonableTimeIsRefusedBeforeParsing) {
  // nlohmann's ordered objects search every key before each new one: 100,000 members took a minute.
  auto object = [](std::size_t n) {
    std::string text = "{\"unreadable\": {";
    for (std::size_t i = 0; i < n; ++i) text += (i ? ",\"/x/" : "\"/x/") + std::to_string(i) + "\": [1, 2]";
    return text + "}}";
  };
  EXPECT_EQ(error_of([&] { parse_outside_json(object(kMaxJsonObjectMembers + 1), "m.json"); }),
            "m.json: JSON object of more than 32768 members; p2pcheck never writes one that large (a machine has "
            "fewer PCI functions)");
  EXPECT_TRUE(parse_outside_json(object(kMaxJsonObjectMembers), "m.json"));
  // An array's elements and a nested object's members are not the outer object's.
  std::string wide_array = "{\"a\": [0";
  for (std::size_t i = 0; i < kMaxJsonObjectMembers + 10; ++i) wide_array += ",0";
  EXPECT_TRUE(parse_outside_json(wide_array + "], \"b\": {\"c\": 1, \"d\": 2}}", "m.json"));
}

TEST(ParseOutsideJson, BuildsTheDocumentNlohmannWouldInOrderWithRepeatedKeysAsItKeepsThem) {
  // Members are appended rather than looked up (linear, not n^2); the result must not differ.
  for (const char* text :
       {R"({"b": 1, "a": [true, null, -3, 18446744073709551615, 1.5e3, "s\u00e9"], "c": {"z": {}, "y": []}})",
        R"({"k": 1, "j": 2, "k": {"x": [1]}, "j": "last", "i": 0})",  // a repeat keeps the first place
        R"([{"a": 1, "a": 2}, [[], [{}]], "x"])", R"("top")", R"(7)", R"(null)", R"({})", R"([])",
        R"({"": 1, "\u0000": 2})"}) {
    auto ours = parse_outside_json(text, "m.json");
    ASSERT_TRUE(ours) << text;
    nlohmann::ordered_json theirs = nlohmann::ordered_json::parse(text);
    EXPECT_EQ(*ours, theirs) << text;
    EXPECT_EQ(ours->dump(), theirs.dump()) << text;  // the same member order too
  }
  for (const char* broken : {"", "{", R"({"a": })", R"({"a": 1,})", R"([1 2])", R"({"a": 1} x)", "nul", R"({1: 2})"})
    EXPECT_FALSE(parse_outside_json(broken, "m.json")) << broken;
}

}  // namespace
}  // namespace p2pcheck
