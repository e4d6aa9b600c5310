// `lspci -vvv` text, one block per function: the device line, then lines indented by one tab
// (Subsystem, Bus, Region, Capabilities, NUMA node, IOMMU group, Kernel driver in use) and, below a
// capability, lines indented by two. Plain string tests only: no std::regex on customer text.
#include "lspci_text.h"

#include <bitset>
#include <tuple>

#include "lspci_text_caps.h"
#include "p2pcheck/source/error.h"
#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// A PCI domain holds 65,536 functions and the largest fabrics a few thousand (as for lspci -x).
constexpr std::size_t kMaxFunctions = 65536;
// A function's capabilities: 48 fit between 0x40 and 0x100, 960 in extended config space.
constexpr std::size_t kMaxCaps = 48 + 960;

bool starts(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The device line after its address: "Class name [cccc]: Name [vvvv:dddd] (rev xx) (prog-if xx [..])"
// (lspci -nn), or "cccc: vvvv:dddd (rev xx) (prog-if xx)" (lspci -n). Without numbers has_ids stays false.
void parse_device_line(TextFunction& fn, std::string_view rest) {
  std::uint8_t prog_if = 0;
  if (size_t at = rest.rfind(" (prog-if ");
      at != std::string_view::npos && at + 12 <= rest.size() && is_hex_digits(rest.substr(at + 10, 2))) {
    prog_if = static_cast<std::uint8_t>(*parse_hex(rest.substr(at + 10, 2)));
    rest = rest.substr(0, at);
  }
  if (size_t at = rest.rfind(" (rev "); at != std::string_view::npos && at + 9 == rest.size() && rest.back() == ')' &&
                                        is_hex_digits(rest.substr(at + 6, 2))) {
    fn.revision = static_cast<std::uint8_t>(*parse_hex(rest.substr(at + 6, 2)));
    rest = rest.substr(0, at);
  }
  std::string_view cls;
  if (size_t at = rest.find("]: "); at != std::string_view::npos && at >= 5 && rest[at - 5] == '[') {
    cls = rest.substr(at - 4, 4);  // -nn
    fn.class_name = printable(trim(rest.substr(0, at - 5)));
    rest = rest.substr(at + 3);
  } else if (rest.size() > 6 && rest.substr(4, 2) == ": ") {
    cls = rest.substr(0, 4);  // -n
    rest = rest.substr(6);
  } else {
    fn.class_name = printable(rest.substr(0, std::min(rest.find(": "), std::size_t{80})));
  }
  auto ids = id_pair_at_end(rest);
  if (cls.empty() || !is_hex_digits(cls) || !ids) return;
  fn.has_ids = true;
  std::tie(fn.vendor, fn.device) = *ids;
  fn.class_code = static_cast<std::uint32_t>(*parse_hex(cls)) << 8 | prog_if;
}

// "Bus: primary=00, secondary=01, subordinate=06, sec-latency=0".
bool parse_bus(TextFunction& fn, std::string_view v) {
  auto number = [&](std::string_view key) -> std::optional<std::uint8_t> {
    size_t at = v.find(key);
    if (at == std::string_view::npos || at + key.size() + 2 > v.size()) return std::nullopt;
    std::string_view n = v.substr(at + key.size(), 2);
    if (!is_hex_digits(n)) return std::nullopt;
    return static_cast<std::uint8_t>(*parse_hex(n));
  };
  fn.primary = number("primary=");
  fn.secondary = number("secondary=");
  fn.subordinate = number("subordinate=");
  return fn.primary && fn.secondary && fn.subordinate;
}

// "N" of "NUMA node: N" / "IOMMU group: N": a decimal the kernel could print.
std::optional<int> small_number(std::string_view v, long long low, long long high) {
  v = trim(v);
  auto n = v.size() <= 7 ? parse_dec(v) : std::nullopt;
  if (!n || *n < low || *n > high) return std::nullopt;
  return static_cast<int>(*n);
}

// "Memory at 10000000000 (64-bit, prefetchable) [size=256G]" / "I/O ports at e000 [size=256]": what
// follows "Region N: " (lspci -vv), or the whole line (lspci -v, which prints no N; `index` -1).
bool parse_region(TextFunction& fn, std::string_view rest, int index, bool& sized) {
  TextRegion r;
  r.index = index;
  if (starts(rest, "[virtual] ")) rest.remove_prefix(10);
  bool io = starts(rest, "I/O ports at ");
  if (!io && !starts(rest, "Memory at ")) return false;
  rest.remove_prefix(io ? 13 : 10);
  std::string_view addr = rest.substr(0, rest.find(' '));
  if (addr.size() <= 16 && is_hex_digits(addr)) r.start = *parse_hex(addr);
  // IORESOURCE_IO 0x100, _MEM 0x200, _PREFETCH 0x2000, _MEM_64 0x100000, _UNSET 0x20000000.
  r.flags = io ? 0x100 : 0x200;
  if (!io && rest.find("-bit, prefetchable)") != std::string_view::npos) r.flags |= 0x2000;
  if (!io && rest.find("(64-bit,") != std::string_view::npos) r.flags |= 0x100000;
  if (!r.start) r.flags |= 0x20000000;
  if (size_t at = rest.find("[size="); at != std::string_view::npos) {
    std::string_view s = rest.substr(at + 6, rest.find(']', at) - at - 6);
    unsigned shift = 0;
    if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G' || s.back() == 'T')) {
      shift = s.back() == 'K' ? 10 : s.back() == 'M' ? 20 : s.back() == 'G' ? 30 : 40;
      s.remove_suffix(1);
    }
    auto n = s.size() <= 10 ? parse_dec(s) : std::nullopt;
    if (!n || *n <= 0 || *n >= std::int64_t{1} << (62 - shift)) return false;
    r.size = static_cast<std::uint64_t>(*n) << shift;
    sized = true;
  }
  fn.regions.push_back(r);
  return true;
}

// The state of the block being read.
struct Reader {
  const std::string& name;
  LspciText out;
  TextFunction* fn = nullptr;
  TextCap* cap = nullptr;  // the capability whose indented lines follow
  int line_no = 0;
  std::bitset<1024> offsets;  // the current function's capability offsets / 4

  void bad(const std::string& why) {
    // The device line's own problem is its address; any later one names the function.
    if (fn && fn->bad.empty())
      fn->bad =
          name + ": line " + std::to_string(line_no) + ": " + (fn->line == line_no ? "" : fn->bdf.str() + ": ") + why;
  }

  void device(std::string_view line) {
    if (out.functions.size() == kMaxFunctions)
      throw Error(name + ": line " + std::to_string(line_no),
                  "more than " + std::to_string(kMaxFunctions) + " PCI functions; no machine has that many");
    size_t space = line.find(' ');
    TextFunction f;
    f.line = line_no;
    out.functions.push_back(std::move(f));
    fn = &out.functions.back();  // taken anew after each push_back, so never stale
    cap = nullptr;
    offsets.reset();
    auto bdf = Bdf::parse(line.substr(0, space));
    if (!bdf) return bad("'" + printable(line.substr(0, space)) + "' is not a PCI address");
    fn->bdf = *bdf;
    parse_device_line(*fn, line.substr(space + 1));
  }

  void capability(std::string_view v) {
    std::string why;
    auto c = parse_cap_header(v, line_no, why);
    cap = nullptr;
    if (!c && why.empty()) fn->access_denied = true;
    if (!c) return why.empty() ? void() : bad(why);
    if (offsets.test(c->offset / 4)) return bad("capability offset [" + hex(c->offset, 2) + "] listed twice");
    offsets.set(c->offset / 4);
    if (fn->caps.size() == kMaxCaps) return bad("more capabilities than config space holds");
    fn->caps.push_back(*c);
    cap = &fn->caps.back();
  }

  void top_line(std::string_view line) {
    cap = nullptr;
    bool sized = false;
    if (starts(line, "Subsystem: ")) {
      fn->subsystem = id_pair_at_end(line.substr(11));
    } else if (starts(line, "Bus: ")) {
      if (!parse_bus(*fn, line.substr(5))) bad("expected 'Bus: primary=bb, secondary=bb, subordinate=bb'");
    } else if (starts(line, "NUMA node: ")) {
      fn->numa_node = small_number(line.substr(11), 0, 1023);
      if (!fn->numa_node) bad("expected 'NUMA node: N' with N from 0 to 1023");
      out.numa_shown = true;
    } else if (starts(line, "IOMMU group: ")) {
      fn->iommu_group = small_number(line.substr(13), 0, 0x7fffffff);
      if (!fn->iommu_group) bad("expected 'IOMMU group: N'");
      out.iommu_shown = true;
    } else if (starts(line, "Kernel driver in use: ")) {
      fn->driver = std::string(trim(line.substr(22)));
      out.drivers_shown = true;
    } else if (starts(line, "Kernel modules: ")) {
      out.drivers_shown = true;
    } else if (starts(line, "Region ")) {
      std::string_view v = line.substr(7);
      bool indexed = v.size() >= 3 && v[0] >= '0' && v[0] <= '5' && v.substr(1, 2) == ": ";
      if (!indexed || !parse_region(*fn, v.substr(3), v[0] - '0', sized))
        bad("expected 'Region N: Memory at ADDR (...) [size=S]'");
      out.sizes_shown = out.sizes_shown || sized;
    } else if (starts(line, "Memory at ") || starts(line, "I/O ports at ") || starts(line, "[virtual] ")) {
      parse_region(*fn, line, -1, sized);  // lspci -v: a line of another shape is not a BAR, not an error
    } else if (starts(line, "Capabilities: ")) {
      capability(line.substr(14));
    }
  }

  void detail(std::string_view line) {
    std::string why;
    if (cap && !parse_cap_detail(*cap, line, why)) bad(why);
  }
};

}  // namespace

bool lspci_function_line(std::string_view line) {
  size_t space = line.find(' ');
  return space != std::string_view::npos && Bdf::shaped(line.substr(0, space), 4, 5);
}

LspciText parse_lspci_text(std::string_view text, const std::string& name) {
  Reader r{name, {}};
  for (std::string_view rest = text; !rest.empty();) {
    std::string_view line = next_line(rest);
    ++r.line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (lspci_function_line(line)) {
      r.device(line);
    } else if (!r.fn || line.empty() || line[0] != '\t') {
      continue;
    } else if (line.size() > 1 && line[1] == '\t') {
      r.detail(line.substr(2));
    } else {
      r.out.verbose_lines = true;
      r.top_line(line.substr(1));
    }
  }
  return std::move(r.out);
}

}  // namespace p2pcheck
