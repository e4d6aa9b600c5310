// Names taken from input (file names, hostnames, model strings, NVMe names, plan keys) as any
// output shows them: one rule for text, HTML, JUnit, DOT and error messages (docs/architecture.md),
// so no input can add a line (a forged "RESULT: PASS") or drive the terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace p2pcheck {

// `text` with every control character escaped: \n, \r and \t by name; the other C0 controls, DEL,
// the C1 controls (U+0080-U+009F), U+2028/U+2029 and each byte that is not part of valid UTF-8
// as \xNN per byte. Everything else, backslashes included, is kept as it is.
std::string printable(std::string_view text);

// True when printable(text) would return `text` unchanged.
bool is_printable(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that does not end inside a UTF-8
// character (a cut multi-byte character makes Graphviz read the whole file as Latin-1).
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

}  // namespace p2pcheck
