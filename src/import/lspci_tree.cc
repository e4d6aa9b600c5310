// `lspci -t` drawings, read by the lspci and nvidia-bug-report imports.
#include "lspci_tree.h"

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// As the dumps' limit (import_lspci.cc): a PCI domain holds 65,536 functions.
constexpr std::size_t kMaxTreeDevices = 65536;

// One token of an lspci -t drawing: a bus "[0000:00]" / "[01-06]", or a device "00.0".
struct TreeToken {
  size_t at = 0, length = 0;
  bool is_bus = false;
  std::string domain;  // bus: "" when not given
  std::uint8_t bus = 0, dev = 0, fn = 0;
};

std::uint8_t hex_byte(std::string_view two) { return static_cast<std::uint8_t>(parse_hex(two).value_or(0)); }

// The token starting at `at`, if one does: "[" [4-5 hex ":"] 2 hex ["-" 2 hex] "]", or 2 hex "." [0-7].
std::optional<TreeToken> tree_token(std::string_view s, size_t at) {
  TreeToken t;
  t.at = at;
  if (s[at] == '[') {
    size_t i = at + 1, run = 0;
    while (run < 6 && i + run < s.size() && is_hex_digits(s.substr(i + run, 1))) ++run;
    if ((run == 4 || run == 5) && i + run < s.size() && s[i + run] == ':') {
      t.domain = std::string(s.substr(i, run));
      i += run + 1;
    }
    if (i + 2 > s.size() || !is_hex_digits(s.substr(i, 2))) return std::nullopt;
    t.bus = hex_byte(s.substr(i, 2));
    i += 2;
    if (i + 3 <= s.size() && s[i] == '-' && is_hex_digits(s.substr(i + 1, 2))) i += 3;
    if (i >= s.size() || s[i] != ']') return std::nullopt;
    t.is_bus = true;
    t.length = i + 1 - at;
    return t;
  }
  if (at + 4 > s.size() || !is_hex_digits(s.substr(at, 2)) || s[at + 2] != '.' || s[at + 3] < '0' || s[at + 3] > '7')
    return std::nullopt;
  t.dev = hex_byte(s.substr(at, 2));
  t.fn = static_cast<std::uint8_t>(s[at + 3] - '0');
  t.length = 4;
  return t;
}

// The line without the names after its first device ("00.0  Intel Corporation ..."), which can
// contain anything.
std::string_view drawing_of(std::string_view line) {
  for (size_t i = 0; i + 6 <= line.size(); ++i)
    if (auto t = tree_token(line, i); t && !t->is_bus && line.compare(i + 4, 2, "  ") == 0)
      return line.substr(0, i + 4);
  return line;
}

}  // namespace

std::map<Bdf, std::optional<Bdf>> parse_lspci_tree(const std::string& text, const std::string& name, int first_line) {
  struct Bus {
    std::uint32_t domain = 0;
    std::uint8_t bus = 0;
    std::optional<Bdf> bridge;
  };
  std::map<Bdf, std::optional<Bdf>> parents;
  std::map<size_t, Bus> bus_at_column;
  int line_no = first_line - 1;
  // Made only for a message: a line costs no allocation.
  auto where = [&] { return name + ": line " + std::to_string(line_no); };
  for (std::string_view rest = text; !rest.empty();) {
    std::string_view line = next_line(rest);
    ++line_no;
    std::optional<Bus> current;
    std::optional<Bdf> last_device;
    std::string_view drawing = drawing_of(line);
    for (size_t at = 0; at < drawing.size();) {
      auto t = tree_token(drawing, at);
      if (!t) {
        ++at;
        continue;
      }
      at += t->length;
      if (t->is_bus) {
        Bus bus;
        if (!last_device) {  // a root bus: "[0000:00]"
          bus.domain = static_cast<std::uint32_t>(parse_hex(t->domain).value_or(0));
        } else {  // a bridge's secondary bus: "[01-06]" right after the bridge
          bus.domain = last_device->domain;
          bus.bridge = last_device;
        }
        bus.bus = t->bus;
        current = bus;
        continue;
      }
      char connector = t->at >= 2 ? drawing[t->at - 2] : ' ';
      Bus bus;
      if (connector == '+' || connector == '\\') {
        if (current) bus_at_column[t->at - 2] = *current;
        auto found = bus_at_column.find(t->at - 2);
        if (found == bus_at_column.end()) throw Error(where(), "lspci -t drawing: device without a bus");
        bus = found->second;
      } else if (current) {
        bus = *current;  // "----00.0": the only device on the bus just opened
      } else {
        throw Error(where(), "lspci -t drawing: device without a bus");
      }
      if (t->dev > 0x1f) throw Error(where(), "lspci -t drawing: device number above 1f");
      Bdf bdf{bus.domain, bus.bus, t->dev, t->fn};
      parents[bdf] = bus.bridge;
      if (parents.size() > kMaxTreeDevices)
        throw Error(where(), "lspci -t drawing of more than " + std::to_string(kMaxTreeDevices) +
                                 " PCI functions; no machine has that many");
      last_device = bdf;
      current.reset();
    }
  }
  return parents;
}

}  // namespace p2pcheck
