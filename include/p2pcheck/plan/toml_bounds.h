// What toml++ does not bound, checked on the plan's text before toml++ sees it: it caps nested
// arrays and inline tables but parses a dotted key by recursion per segment, so a header of
// ~50,000 segments overflowed the stack (issue 33). One linear pass over the bytes, no recursion.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace p2pcheck {

// A plan's keys are at most 3 levels deep ([[switch.downstream]], acs = {...}): 16 is generous.
inline constexpr std::size_t kMaxTomlKeySegments = 16;
// Tables (headers, inline tables and the tables dotted keys make): a plan has a few dozen.
inline constexpr std::size_t kMaxTomlTables = 20000;

// Throws Error("NAME:LINE", ...) at the first dotted key of more than kMaxTomlKeySegments parts
// or the table past kMaxTomlTables. Strings and comments are skipped as TOML reads them; anything
// else malformed is left to toml++, which reports it.
void check_toml_bounds(std::string_view text, const std::string& name);

}  // namespace p2pcheck
