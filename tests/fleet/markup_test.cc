#include "p2pcheck/fleet/markup.h"

#include <gtest/gtest.h>

namespace p2pcheck {
namespace {

TEST(FleetMarkup, EscapesTheFiveCharacters) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(xml_escape("GPU–NVMe → ok"), "GPU–NVMe → ok");  // valid UTF-8 passes
}

TEST(FleetMarkup, BadBytesBecomeReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(xml_escape(std::string("a\xff"
                                   "b")),
            "a" + r + "b");
  EXPECT_EQ(xml_escape(std::string("\xC0\xAF")), r + r);          // overlong "/"
  EXPECT_EQ(xml_escape(std::string("\xED\xA0\x80")), r + r + r);  // a surrogate
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz\n", 6)), "x" + r + "y\tz\n");
  EXPECT_EQ(xml_escape(std::string("\xE2\x82")), r + r);  // cut short
  EXPECT_EQ(xml_escape(std::string("a\0b", 3)), "a" + r + "b");
}

}  // namespace
}  // namespace p2pcheck
