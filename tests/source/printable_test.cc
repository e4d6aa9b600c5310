#include "p2pcheck/source/printable.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

// Issue 33: names with a newline printed extra "RESULT: PASS" lines; escape sequences drove the terminal.
TEST(Printable, EscapesEveryControlCharacter) {
  EXPECT_EQ(printable("host\nRESULT: PASS"), "host\\nRESULT: PASS");
  EXPECT_EQ(printable("a\r\x1b[1A\x1b[2KRESULT"), "a\\r\\x1b[1A\\x1b[2KRESULT");
  EXPECT_EQ(printable("\x1b]0;title\a"), "\\x1b]0;title\\x07");
  EXPECT_EQ(printable(std::string("tab\there\0x", 10)), "tab\\there\\x00x");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  // C1 controls (CSI is U+009B), the Unicode line and paragraph separators.
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");
  EXPECT_EQ(printable("a\xe2\x80\xa8"
                      "b"),
            "a\\xe2\\x80\\xa8b");
}

// Issue 48: Unicode's bidi controls reorder what the terminal shows ("SSAP :TLUSER" displayed as
// "RESULT: PASS"), other format characters hide text: each is a control character.
TEST(Printable, EscapesBidiAndFormatControls) {
  EXPECT_EQ(printable("host\u202eSSAP :TLUSER"), "host\\xe2\\x80\\xaeSSAP :TLUSER");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(printable("a\u2066b\u2069"), "a\\xe2\\x81\\xa6b\\xe2\\x81\\xa9");         // isolates
  EXPECT_EQ(printable("mark\u200f"), "mark\\xe2\\x80\\x8f");                          // RIGHT-TO-LEFT MARK
  EXPECT_EQ(printable("zw\u200bsp\ufeff"), "zw\\xe2\\x80\\x8bsp\\xef\\xbb\\xbf");
  EXPECT_EQ(printable("arabic\u061c"), "arabic\\xd8\\x9c");
  EXPECT_EQ(printable("tag\U000E0041"), "tag\\xf3\\xa0\\x81\\x81");
  for (const char* text : {"\u202a", "\u202b", "\u202c", "\u202d", "\u2067", "\u2068", "\u200e", "\u2060"})
    EXPECT_FALSE(is_printable(text)) << text;
  // Their neighbours are ordinary text: dashes, quotes, the euro sign, the ellipsis.
  EXPECT_TRUE(is_printable("\u2010\u2027\u2030\u205f\u20ac\u2026\ufefe\ufffc"));
}

TEST(Printable, KeepsValidTextAndEscapesBrokenUtf8) {
  EXPECT_EQ(printable("AMD Instinct MI300X — ü 日本 😀 a\\b"), "AMD Instinct MI300X — ü 日本 😀 a\\b");
  EXPECT_TRUE(is_printable("plain ASCII"));
  EXPECT_FALSE(is_printable("x\n"));
  EXPECT_EQ(printable("Latin-1 \xe9t\xe9"), "Latin-1 \\xe9t\\xe9");
  EXPECT_EQ(printable("cut \xe6\x97"), "cut \\xe6\\x97");
  EXPECT_EQ(printable("overlong \xc0\xaf"), "overlong \\xc0\\xaf");
  EXPECT_EQ(printable("surrogate \xed\xa0\x80"), "surrogate \\xed\\xa0\\x80");
  EXPECT_EQ(printable("\xf8\x88\x80\x80\x80"), "\\xf8\\x88\\x80\\x80\\x80");
}

// Issue 33: DOT labels cut at 200 bytes inside a character made Graphviz read the file as Latin-1.
TEST(Utf8Prefix, NeverCutsInsideACharacter) {
  std::string text = "ab日本";  // 2 + 3 + 3 bytes
  EXPECT_EQ(utf8_prefix(text, 100), text);
  EXPECT_EQ(utf8_prefix(text, 8), text);
  EXPECT_EQ(utf8_prefix(text, 7), "ab日");
  EXPECT_EQ(utf8_prefix(text, 6), "ab日");
  EXPECT_EQ(utf8_prefix(text, 5), "ab日");
  EXPECT_EQ(utf8_prefix(text, 4), "ab");
  EXPECT_EQ(utf8_prefix(text, 3), "ab");
  EXPECT_EQ(utf8_prefix("😀😀", 7), "😀");
  EXPECT_EQ(utf8_prefix("😀😀", 4), "😀");
  EXPECT_EQ(utf8_prefix("😀", 3), "");
  for (std::size_t n = 0; n < 300; ++n) {
    std::string label;
    for (int i = 0; i < 100; ++i) label += "ü";
    EXPECT_TRUE(is_printable(utf8_prefix(label, n))) << n;
  }
}

}  // namespace
}  // namespace p2pcheck
