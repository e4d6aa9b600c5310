// `lspci -nn` lines, read with plain string tests (no std::regex on customer text).
#include "lspci_listing.h"

#include <set>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// A domain holds 65,536 functions; a listing of more lines than twice that was not printed by lspci.
constexpr std::size_t kMaxListingLines = 2 * 65536;

// "[cccc]: " after the address: the class (base and sub class), or nullopt.
std::optional<std::uint16_t> class_of(std::string_view line) {
  std::size_t colon = line.find("]: ");
  if (colon == std::string_view::npos || colon < 5 || line[colon - 5] != '[') return std::nullopt;
  std::string_view digits = line.substr(colon - 4, 4);
  if (!is_hex_digits(digits)) return std::nullopt;
  return static_cast<std::uint16_t>(*parse_hex(digits));
}

// The last "[vvvv:dddd]" of the line (a device's name may hold brackets of its own), or nullopt.
std::optional<std::pair<std::uint16_t, std::uint16_t>> ids_of(std::string_view line, std::size_t& end) {
  for (std::size_t at = line.rfind('['); at != std::string_view::npos && at > 0; at = line.rfind('[', at - 1)) {
    std::string_view s = line.substr(at);
    if (s.size() >= 11 && s[5] == ':' && s[10] == ']' && is_hex_digits(s.substr(1, 4)) &&
        is_hex_digits(s.substr(6, 4))) {
      end = at + 11;
      return std::pair{static_cast<std::uint16_t>(*parse_hex(s.substr(1, 4))),
                       static_cast<std::uint16_t>(*parse_hex(s.substr(6, 4)))};
    }
  }
  return std::nullopt;
}

// "(NAME xx" in `tail`: the two hex digits after "(NAME ", or nullopt.
std::optional<std::uint8_t> paren_byte(std::string_view tail, std::string_view name) {
  std::size_t at = tail.find(name);
  if (at == std::string_view::npos || at + name.size() + 2 > tail.size()) return std::nullopt;
  std::string_view digits = tail.substr(at + name.size(), 2);
  if (!is_hex_digits(digits)) return std::nullopt;
  return static_cast<std::uint8_t>(*parse_hex(digits));
}

}  // namespace

LspciListing parse_lspci_listing(const std::string& text, const std::string& name, int first_line) {
  LspciListing out;
  std::set<Bdf> seen;
  int line_no = first_line - 1;
  std::size_t lines = 0;
  for (std::string_view rest = text; !rest.empty();) {
    std::string_view line = next_line(rest);
    ++line_no;
    if (++lines > kMaxListingLines)
      throw Error(name + ": line " + std::to_string(line_no), "lspci -nn section longer than " +
                                                                  std::to_string(kMaxListingLines) +
                                                                  " lines; lspci lists one line per PCI function");
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    std::string where = name + ": line " + std::to_string(line_no);
    std::size_t space = line.find(' ');
    auto bdf = space == std::string_view::npos ? std::nullopt : Bdf::parse(line.substr(0, space));
    auto cls = bdf ? class_of(line.substr(space)) : std::nullopt;
    std::size_t ids_end = 0;
    auto ids = cls ? ids_of(line, ids_end) : std::nullopt;
    if (!ids || !seen.insert(*bdf).second) {
      out.skipped.push_back(
          {"lspci -nn lines are no 'BB:DD.F CLASS [cccc]: NAME [vvvv:dddd]' of a new address",
           "line " + std::to_string(line_no),
           where + ": '" + std::string(line.substr(0, 60)) + "'" +
               (ids ? " lists " + bdf->str() + " again" : "; expected 'BB:DD.F CLASS [cccc]: NAME [vvvv:dddd]'") +
               "; left out"});
      continue;
    }
    ListedFunction fn;
    fn.bdf = *bdf;
    fn.vendor = ids->first;
    fn.device = ids->second;
    std::string_view tail = line.substr(ids_end);
    fn.revision = paren_byte(tail, "(rev ");
    auto prog_if = paren_byte(tail, "(prog-if ");
    fn.prog_if_shown = prog_if.has_value();
    fn.class_code = static_cast<std::uint32_t>(*cls) << 8 | prog_if.value_or(0);
    fn.line = line_no;
    out.functions.push_back(fn);
  }
  return out;
}

std::size_t lspci_listed_count(std::string_view text) {
  std::size_t functions = 0;
  for (std::string_view rest = text; !rest.empty();) {
    std::string_view line = next_line(rest);
    functions += Bdf::shaped(line.substr(0, line.find(' ')), 4, 5);
  }
  return functions;
}

}  // namespace p2pcheck
