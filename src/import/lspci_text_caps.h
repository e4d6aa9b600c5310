// The capability lines of an `lspci -vvv` block: "Capabilities: [40] Express (v2) Root Port
// (Slot+), MSI 00" and the indented register lines below it (LnkCap, ACSCtl, "BAR 0: current
// size", "Total VFs"). Plain string tests only: no std::regex on customer text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lspci_text.h"

namespace p2pcheck {

// "Capabilities: VALUE" of line `line_no`: the capability it opens, or nullopt with `why` set
// ("" for "<access denied>", which is no capability).
std::optional<TextCap> parse_cap_header(std::string_view value, int line_no, std::string& why);

// One indented line below capability `cap`: the registers it states, if it is one p2pcheck reads.
// False with `why` set when the line is one of those but malformed.
bool parse_cap_detail(TextCap& cap, std::string_view line, std::string& why);

// "[vvvv:dddd]" at the end of `text` (lspci -nn), or all of `text` as "vvvv:dddd" (lspci -n).
std::optional<std::pair<std::uint16_t, std::uint16_t>> id_pair_at_end(std::string_view text);

}  // namespace p2pcheck
