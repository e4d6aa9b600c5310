// Capabilities as lspci -vvv prints them (pciutils ls-caps.c, ls-ecaps.c), back to their registers.
#include "lspci_text_caps.h"

#include <array>
#include <span>

#include "p2pcheck/source/printable.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

constexpr unsigned kCapExp = 0x10, kCapSsvid = 0x0d;
constexpr unsigned kExtAcs = 0x0d, kExtSriov = 0x10, kExtRebar = 0x15;

struct Named {
  std::string_view name;
  unsigned id;
};

// lspci's names by ID. A name not listed gets ID 0: the walk still sees it, and nothing p2pcheck
// looks for (Express, ACS, Resizable BAR, SR-IOV) can be mistaken for it.
constexpr Named kNormal[] = {{"Power Management version", 0x01},
                             {"AGP version", 0x02},
                             {"Vital Product Data", 0x03},
                             {"Slot ID", 0x04},
                             {"MSI:", 0x05},
                             {"CompactPCI hot-swap", 0x06},
                             {"PCI-X", 0x07},
                             {"HyperTransport", 0x08},
                             {"Vendor Specific Information", 0x09},
                             {"Debug port", 0x0a},
                             {"Hot-plug capable", 0x0c},
                             {"Subsystem:", kCapSsvid},
                             {"AGP3", 0x0e},
                             {"Secure device", 0x0f},
                             {"Express ", kCapExp},
                             {"MSI-X:", 0x11},
                             {"SATA HBA", 0x12},
                             {"PCI Advanced Features", 0x13},
                             {"PCI Enhanced Allocation", 0x14},
                             {"Flattening Portal Bridge", 0x15}};
constexpr Named kExtended[] = {{"Advanced Error Reporting", 0x01},
                               {"Virtual Channel", 0x02},
                               {"Device Serial Number", 0x03},
                               {"Power Budgeting", 0x04},
                               {"Root Complex Link", 0x05},
                               {"Root Complex Internal Link", 0x06},
                               {"Root Complex Event Collector", 0x07},
                               {"Multi-Function Virtual Channel", 0x08},
                               {"Root Complex Register Block", 0x0a},
                               {"Vendor Specific Information", 0x0b},
                               {"Access Control Services", kExtAcs},
                               {"Alternative Routing-ID Interpretation", 0x0e},
                               {"Address Translation Service", 0x0f},
                               {"Single Root I/O Virtualization", kExtSriov},
                               {"Multicast", 0x12},
                               {"Page Request Interface", 0x13},
                               {"Physical Resizable BAR", kExtRebar},
                               {"Latency Tolerance Reporting", 0x18},
                               {"Secondary PCI Express", 0x19},
                               {"Process Address Space ID", 0x1b},
                               {"Downstream Port Containment", 0x1d},
                               {"L1 PM Substates", 0x1e},
                               {"Precision Time Measurement", 0x1f},
                               {"Designated Vendor-Specific", 0x23},
                               {"Virtual Resizable BAR", 0x24},
                               {"Data Link Feature", 0x25},
                               {"Physical Layer 16.0 GT/s", 0x26},
                               {"Lane Margining at the Receiver", 0x27},
                               {"Physical Layer 32.0 GT/s", 0x2a}};

bool starts(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// PCI_EXP_FLAGS' port type from lspci's words (longest first where one begins another).
std::optional<unsigned> port_type(std::string_view text) {
  static constexpr Named kTypes[] = {{"Legacy Endpoint", 1},
                                     {"Endpoint", 0},
                                     {"Root Port", 4},
                                     {"Upstream Port", 5},
                                     {"Downstream Port", 6},
                                     {"PCI-Express to PCI/PCI-X Bridge", 7},
                                     {"PCI/PCI-X to PCI-Express Bridge", 8},
                                     {"Root Complex Integrated Endpoint", 9},
                                     {"Root Complex Event Collector", 10}};
  for (const auto& t : kTypes)
    if (starts(text, t.name)) return t.id;
  if (starts(text, "Unknown type ")) {
    auto n = parse_dec(text.substr(13, text.find(',') == std::string_view::npos ? 2 : text.find(',') - 13));
    if (n && *n >= 0 && *n < 16) return static_cast<unsigned>(*n);
  }
  return std::nullopt;
}

// "Express (v2) Root Port (Slot+), MSI 00" -> PCI_EXP_FLAGS; lspci -v prints no "(vN)": taken as 1,
// which makes the kernel's reading skip Link Capabilities 2 (0 here in any case).
std::optional<std::uint16_t> express_flags(std::string_view rest) {
  unsigned version = 1;
  if (starts(rest, "(v") && rest.size() > 4 && rest[3] == ')' && rest[2] >= '1' && rest[2] <= '9') {
    version = static_cast<unsigned>(rest[2] - '0');
    rest.remove_prefix(5);
  }
  auto type = port_type(rest);
  if (!type) return std::nullopt;
  bool slot = rest.find("(Slot+)") != std::string_view::npos;
  return static_cast<std::uint16_t>(version | *type << 4 | (slot ? 0x100 : 0));
}

// "Speed 32GT/s" -> the Link Capabilities/Status speed code (1 = 2.5 GT/s ... 6 = 64 GT/s); 0 unknown.
unsigned speed_code(std::string_view line) {
  size_t at = line.find("Speed ");
  if (at == std::string_view::npos) return 0;
  std::string_view s = line.substr(at + 6);
  s = s.substr(0, s.find_first_of(", "));
  static constexpr std::string_view kSpeeds[] = {"2.5GT/s", "5GT/s", "8GT/s", "16GT/s", "32GT/s", "64GT/s"};
  for (unsigned i = 0; i < std::size(kSpeeds); ++i)
    if (s == kSpeeds[i]) return i + 1;
  return 0;
}

// "Width x16" -> 16; 0 when not printed or not a width a link has (1 to 32).
unsigned width(std::string_view line) {
  size_t at = line.find("Width x");
  if (at == std::string_view::npos) return 0;
  std::string_view s = line.substr(at + 7);
  s = s.substr(0, s.find_first_of(", "));
  auto n = s.size() <= 2 ? parse_dec(s) : std::nullopt;
  return n && *n >= 1 && *n <= 32 ? static_cast<unsigned>(*n) : 0;
}

// "SrcValid+ TransBlk- ..." -> PCI_ACS_* bits; nullopt unless all seven are there with + or -.
std::optional<std::uint16_t> acs_bits(std::string_view text) {
  static constexpr std::string_view kNames[] = {"SrcValid",    "TransBlk",   "ReqRedir",   "CmpltRedir",
                                                "UpstreamFwd", "EgressCtrl", "DirectTrans"};
  std::uint16_t bits = 0;
  for (unsigned i = 0; i < std::size(kNames); ++i) {
    size_t at = text.find(kNames[i]);
    // The name whole: "ReqRedir" is not found inside another name, nor one inside it.
    if (at == std::string_view::npos || at + kNames[i].size() >= text.size()) return std::nullopt;
    if (at > 0 && text[at - 1] != ' ' && text[at - 1] != '\t') return std::nullopt;
    char flag = text[at + kNames[i].size()];
    if (flag != '+' && flag != '-') return std::nullopt;
    if (flag == '+') bits = static_cast<std::uint16_t>(bits | 1u << i);
  }
  return bits;
}

// "256MB" -> Resizable BAR size code (1 MB << code), as lspci's table prints it; nullopt otherwise.
std::optional<unsigned> rebar_code(std::string_view s) {
  static constexpr std::string_view kUnits[] = {"MB", "GB", "TB", "PB", "EB"};
  for (unsigned u = 0; u < std::size(kUnits); ++u) {
    if (s.size() < 3 || s.substr(s.size() - 2) != kUnits[u]) continue;
    auto n = s.size() <= 5 ? parse_dec(s.substr(0, s.size() - 2)) : std::nullopt;
    if (!n || *n < 1 || *n > 512 || (*n & (*n - 1))) return std::nullopt;
    unsigned log = 0;
    while ((1ll << log) < *n) ++log;
    unsigned code = log + 10 * u;
    return code <= 43 ? std::optional<unsigned>(code) : std::nullopt;
  }
  return std::nullopt;
}

// "BAR 0: current size: 256GB, supported: 256MB 512MB ..." -> (capability, control) registers.
bool rebar_line(TextCap& cap, std::string_view line, std::string& why) {
  if (!starts(line, "BAR ") || line.size() < 7 || line[5] != ':' || line[4] < '0' || line[4] > '7') return true;
  if (cap.rebar.size() == 6) return (why = "more than 6 Resizable BAR entries"), false;
  std::string_view rest = line.substr(6);
  if (!starts(rest, " current size: ")) return (why = "expected 'BAR n: current size: SIZE'"), false;
  rest.remove_prefix(15);
  std::string_view current = rest.substr(0, rest.find(','));
  auto code = current == "<unknown>" ? std::optional<unsigned>(63) : rebar_code(current);
  if (!code)
    return (why = "Resizable BAR size '" + printable(current.substr(0, 20)) + "' is not one lspci prints"), false;
  std::uint32_t capability = 0, control = static_cast<std::uint32_t>(line[4] - '0') | *code << 8;
  if (size_t at = rest.find("supported:"); at != std::string_view::npos) {
    std::string_view sizes = rest.substr(at + 10);
    for (std::string_view word = next_word(sizes); !word.empty(); word = next_word(sizes)) {
      auto bit = rebar_code(word);
      if (!bit)
        return (why = "Resizable BAR size '" + printable(word.substr(0, 20)) + "' is not one lspci prints"), false;
      if (*bit <= 27)
        capability |= 1u << (*bit + 4);
      else
        control |= 1u << (*bit - 28 + 16);
    }
  }
  cap.rebar.emplace_back(capability, control);
  return true;
}

// "KEY: N" inside a comma-separated line: N, when it is a decimal of at most 5 digits.
std::optional<std::uint16_t> field(std::string_view line, std::string_view key, bool hex_value = false) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view v = line.substr(at + key.size());
  v = v.substr(0, v.find(','));
  auto n = v.size() <= 5 ? (hex_value ? (is_hex_digits(v) ? std::optional<std::int64_t>(*parse_hex(v)) : std::nullopt)
                                      : parse_dec(v))
                         : std::nullopt;
  if (!n || *n < 0 || *n > 0xffff) return std::nullopt;
  return static_cast<std::uint16_t>(*n);
}

}  // namespace

bool TextCap::complete() const {
  if (!extended) return true;
  if (id == kExtAcs) return acs_cap && acs_ctl;
  if (id == kExtRebar) return !rebar.empty();
  if (id == kExtSriov) return sriov_total && sriov_num && sriov_did;
  return true;
}

std::optional<std::pair<std::uint16_t, std::uint16_t>> id_pair_at_end(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.back() == ']') {
    size_t open = text.rfind('[');
    if (open == std::string_view::npos) return std::nullopt;
    text = text.substr(open + 1, text.size() - open - 2);
  }
  if (text.size() != 9 || text[4] != ':' || !is_hex_digits(text.substr(0, 4)) || !is_hex_digits(text.substr(5)))
    return std::nullopt;
  return std::pair{static_cast<std::uint16_t>(*parse_hex(text.substr(0, 4))),
                   static_cast<std::uint16_t>(*parse_hex(text.substr(5)))};
}

std::optional<TextCap> parse_cap_header(std::string_view value, int line_no, std::string& why) {
  why.clear();
  if (starts(value, "<access denied>")) return std::nullopt;
  size_t close = value.find(']');
  if (value.empty() || value[0] != '[' || close == std::string_view::npos || close > 12)
    return (why = "expected 'Capabilities: [OFFSET] NAME'"), std::nullopt;
  std::string_view inside = value.substr(1, close - 1), name = value.substr(close + 1);
  TextCap cap;
  cap.line = line_no;
  std::string_view offset = inside.substr(0, inside.find(' '));
  if (offset.size() != inside.size()) {  // "100 v1"
    std::string_view v = inside.substr(offset.size() + 1);
    if (v.size() < 2 || v.size() > 3 || v[0] != 'v' || !is_dec_digits(v.substr(1)))
      return (why = "expected '[OFFSET vN]'"), std::nullopt;
    cap.extended = true;
    cap.version = static_cast<unsigned>(*parse_dec(v.substr(1)));
  }
  if (offset.empty() || offset.size() > 3 || !is_hex_digits(offset))
    return (why = "capability offset '" + printable(offset) + "' is not hex"), std::nullopt;
  cap.offset = static_cast<unsigned>(*parse_hex(offset));
  unsigned low = cap.extended ? 0x100 : 0x40, high = cap.extended ? 0x1000 : 0x100;
  if (cap.offset < low || cap.offset >= high || cap.offset % 4 || cap.version > 15)
    return (why = "capability offset [" + printable(offset) + "] is outside " +
                  (cap.extended ? "extended config space (100-ffc, 4-aligned)"
                                : "the capability area (40-fc, 4-aligned)")),
           std::nullopt;
  if (!name.empty() && name[0] == ' ') name.remove_prefix(1);
  for (const Named& n : cap.extended ? std::span<const Named>(kExtended) : std::span<const Named>(kNormal))
    if (starts(name, n.name)) {
      cap.id = n.id;
      break;
    }
  std::string_view raw = cap.extended ? "Extended Capability ID 0x" : "Capability ID 0x";
  if (starts(name, raw) && name.size() > raw.size()) {
    std::string_view digits = name.substr(raw.size(), name.find_first_of(" \t", raw.size()) - raw.size());
    if (digits.size() <= 4 && is_hex_digits(digits)) cap.id = static_cast<unsigned>(*parse_hex(digits));
  }
  if (!cap.extended && cap.id == kCapExp) {
    auto flags = express_flags(name.substr(8));
    if (!flags) return (why = "Express capability of a port type lspci does not print"), std::nullopt;
    cap.exp_flags = *flags;
  }
  if (!cap.extended && cap.id == kCapSsvid) {
    cap.ssvid = id_pair_at_end(name.substr(10));
    if (!cap.ssvid) cap.id = 0;  // a name without its numbers (lspci without -n): not a register we know
  }
  return cap;
}

bool parse_cap_detail(TextCap& cap, std::string_view line, std::string& why) {
  line = trim(line);
  if (!cap.extended && cap.id == kCapExp) {
    if (starts(line, "LnkCap:")) cap.lnkcap = speed_code(line) | width(line) << 4;
    if (starts(line, "LnkSta:")) cap.lnksta = static_cast<std::uint16_t>(speed_code(line) | width(line) << 4);
    return true;
  }
  if (!cap.extended) return true;
  if (cap.id == kExtAcs && (starts(line, "ACSCap:") || starts(line, "ACSCtl:"))) {
    auto bits = acs_bits(line.substr(7));
    if (!bits)
      return (why = "expected '" + std::string(line.substr(0, 7)) + " SrcValid+ TransBlk- ...' with all seven flags"),
             false;
    (starts(line, "ACSCap:") ? cap.acs_cap : cap.acs_ctl) = *bits;
    return true;
  }
  if (cap.id == kExtRebar) return rebar_line(cap, line, why);
  if (cap.id == kExtSriov) {
    if (auto v = field(line, "Total VFs: ")) cap.sriov_total = v;
    if (auto v = field(line, "Number of VFs: ")) cap.sriov_num = v;
    if (auto v = field(line, "Device ID: ", true)) cap.sriov_did = v;
  }
  return true;
}

}  // namespace p2pcheck
