// Text made safe for XML and HTML output (JUnit, the HTML page): bytes from a dump are not
// guaranteed UTF-8 nor free of control characters, and one bad byte makes a whole file unreadable
// to an XML parser.
#pragma once

#include <string>
#include <string_view>

namespace p2pcheck {

// `text` escaped for element content and attribute values (& < > " '); invalid UTF-8 and the
// control characters XML 1.0 forbids become U+FFFD.
std::string xml_escape(std::string_view text);

}  // namespace p2pcheck
