// A config space image holding only what an `lspci -vvv` block states, for the analysis that reads
// config space (PciDecoder, kernel_find_capability) to read as it reads a hex dump's. Every byte the
// text did not state is 0, which those readers take as "not there" (a link speed of 0 is unknown),
// and the image's size says how far config space was read: 64 bytes for "<access denied>", 256
// where no extended capability is listed (not root, or no ECAM: ACS unknown, never absent).
#pragma once

#include <string>

#include "lspci_text.h"

namespace p2pcheck {

// The image, and whether extended config space was left out although the text lists some.
struct TextConfig {
  std::string bytes;
  bool extended_incomplete = false;  // an ACS/Resizable BAR/SR-IOV capability without its registers (-v)
};

// The image, or nullopt with `why` when two capabilities' registers would overlap (not lspci's).
std::optional<TextConfig> config_from_text(const TextFunction& fn, std::string& why);

// The kernel's resource file (BARs 0-5) from the Region lines, as resource_show() prints it.
std::string resource_from_text(const TextFunction& fn);

// lspci -v prints a BAR's line without its number: each is given the number of the BAR whose address
// in `config` (a dump of the same function) is the line's. Returns how many were placed; a line
// no BAR's address matches stays unplaced (its size unknown, never guessed by order).
int place_regions(TextFunction& fn, const std::string& config);

}  // namespace p2pcheck
