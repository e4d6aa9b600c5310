// `lspci -nn` listings: one line per function with its class and IDs, no config space. Older
// nvidia-bug-report.sh versions dump only NVIDIA and PLX functions; their -nn section names the rest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/import/sysfs_builder.h"
#include "p2pcheck/model/pci.h"

namespace p2pcheck {

struct ListedFunction {
  Bdf bdf;
  std::uint16_t vendor = 0, device = 0;
  std::uint32_t class_code = 0;  // "[cccc]" and "(prog-if xx)" when printed (-v), else xx = 00
  bool prog_if_shown = false;
  std::optional<std::uint8_t> revision;
  int line = 0;
};

struct LspciListing {
  std::vector<ListedFunction> functions;  // in the listing's order, each address once
  std::vector<SkippedRecord> skipped;     // lines that are no "BB:DD.F CLASS [cccc]: NAME [vvvv:dddd]"
};

// Reads "[dddd:]bb:dd.f Class name [cccc]: Vendor Device name [vvvv:dddd] (rev xx)" lines, numbered
// from `first_line` in `name`. Throws Error naming the line past the limit of a machine's functions.
LspciListing parse_lspci_listing(const std::string& text, const std::string& name, int first_line = 1);
// How many lines of `text` start "[dddd:]bb:dd.f ": the functions any lspci output lists, for a
// refusal that says what the input showed. One pass, no parse of the rest of each line.
std::size_t lspci_listed_count(std::string_view text);

}  // namespace p2pcheck
