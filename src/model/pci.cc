// Config-space decoding through libpci, and the small value helpers of the PCI model.
#include "p2pcheck/model/pci.h"

extern "C" {
#include <pci/pci.h>
}

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "p2pcheck/source/error.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {

bool Bdf::shaped(std::string_view text, size_t min_domain, size_t max_domain) {
  // The fixed-width tail "bb:dd.f", then an optional domain and ':' before it.
  if (text.size() < 7) return false;
  std::string_view tail = text.substr(text.size() - 7), head = text.substr(0, text.size() - 7);
  if (tail[2] != ':' || tail[5] != '.' || !is_hex_digits(tail.substr(0, 2)) || !is_hex_digits(tail.substr(3, 2)) ||
      tail[6] < '0' || tail[6] > '7')
    return false;
  if (head.empty()) return true;
  return head.size() >= min_domain + 1 && head.size() <= max_domain + 1 && head.back() == ':' &&
         is_hex_digits(head.substr(0, head.size() - 1));
}

std::optional<Bdf> Bdf::parse(std::string_view text) {
  if (!shaped(text)) return std::nullopt;
  std::string_view tail = text.substr(text.size() - 7);
  std::uint64_t domain = text.size() > 7 ? parse_hex(text.substr(0, text.size() - 8)).value_or(0) : 0;
  std::uint64_t bus = parse_hex(tail.substr(0, 2)).value_or(0), dev = parse_hex(tail.substr(3, 2)).value_or(0);
  if (dev > 0x1f) return std::nullopt;
  return Bdf{static_cast<std::uint32_t>(domain), static_cast<std::uint8_t>(bus), static_cast<std::uint8_t>(dev),
             static_cast<std::uint8_t>(tail[6] - '0')};
}

std::string Bdf::str() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return buf;
}

const char* to_string(Presence p) {
  switch (p) {
    case Presence::kPresent: return "present";
    case Presence::kAbsent: return "absent";
    case Presence::kUnknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(PortType t) {
  switch (t) {
    case PortType::kUnknown: return "unknown";
    case PortType::kNotPcie: return "pci";
    case PortType::kEndpoint: return "endpoint";
    case PortType::kLegacyEndpoint: return "legacy_endpoint";
    case PortType::kRootPort: return "root_port";
    case PortType::kUpstreamPort: return "switch_upstream";
    case PortType::kDownstreamPort: return "switch_downstream";
    case PortType::kPcieToPciBridge: return "pcie_to_pci_bridge";
    case PortType::kPciToPcieBridge: return "pci_to_pcie_bridge";
    case PortType::kRcIntegratedEndpoint: return "rc_integrated_endpoint";
    case PortType::kRcEventCollector: return "rc_event_collector";
  }
  return "unknown";
}

std::string acs_bits_str(std::uint16_t bits) {
  static const std::pair<std::uint16_t, const char*> names[] = {
      {kAcsSv, "SV"}, {kAcsTb, "TB"}, {kAcsRr, "RR"}, {kAcsCr, "CR"}, {kAcsUf, "UF"}, {kAcsEc, "EC"}, {kAcsDt, "DT"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if (bits & bit) out += (out.empty() ? "" : " ") + std::string(name);
  return out.empty() ? "none" : out;
}

std::optional<Bar> Function::largest_mem_bar() const {
  std::optional<Bar> best;
  for (const Bar& bar : bars)
    if (bar.index <= 5 && bar.is_mem() && bar.size && (!best || bar.size > best->size)) best = bar;
  return best;
}

std::optional<double> parse_link_speed(std::string_view text) {
  double gts = 0;
  std::string s(text);
  // Bounded: a hostile "1e300 GT/s" would make the integer conversions in format_speed undefined.
  if (std::sscanf(s.c_str(), "%lf GT/s", &gts) == 1 && gts > 0 && gts <= 1024) return gts;
  return std::nullopt;
}

double lane_bytes_per_second(double gts) {
  double encoding = gts <= 5.0 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gts * 1e9 * encoding / 8.0;
}

std::string format_size(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  if (value == static_cast<std::uint64_t>(value))
    std::snprintf(buf, sizeof buf, "%" PRIu64 " %s", static_cast<std::uint64_t>(value), units[unit]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", value, units[unit]);
  return buf;
}

std::string format_speed(double gts) {
  char buf[32];
  if (gts == static_cast<int>(gts))
    std::snprintf(buf, sizeof buf, "%d GT/s", static_cast<int>(gts));
  else
    std::snprintf(buf, sizeof buf, "%.1f GT/s", gts);
  return buf;
}

std::string link_text(const LinkInfo& link) {
  if (!link.cur_speed && !link.max_speed) return "";
  auto part = [](const std::optional<double>& s, const std::optional<int>& w) {
    return (s ? format_speed(*s) : std::string("?")) + " x" + (w ? std::to_string(*w) : std::string("?"));
  };
  std::string text = part(link.cur_speed, link.cur_width);
  if (link.downtrained()) text += " (device capable " + part(link.max_speed, link.max_width) + ")";
  return text;
}

std::string acs_text(const Acs& acs) {
  switch (acs.presence) {
    case Presence::kAbsent: return "";
    case Presence::kUnknown: return "ACS unknown";
    case Presence::kPresent:
      return "ACS " + std::string(acs.redirect() ? "redirect " : "") + "[" + acs_bits_str(acs.control) + "]";
  }
  return "";
}

namespace {

// libpci reports fatal errors through this hook and expects it not to return. The GNU attribute,
// unlike [[noreturn]], is part of the function's type, which clang requires of libpci's hook.
[[gnu::noreturn]] void libpci_error(char* msg, ...) {
  char buf[512];
  va_list args;
  va_start(args, msg);
  std::vsnprintf(buf, sizeof buf, msg, args);
  va_end(args);
  throw Error("libpci", buf);
}

void libpci_quiet(char*, ...) {}

// Link Capabilities / Link Status speed field: an index into Link Capabilities 2's vector.
std::optional<double> pcie_speed_code(unsigned code) {
  static const double speeds[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (code >= 1 && code <= 6) return speeds[code];
  return std::nullopt;
}

}  // namespace

void set_libpci_hooks(::pci_access* access) {
  access->error = libpci_error;
  access->warning = libpci_quiet;
  access->debug = libpci_quiet;
}

namespace {

// The dump method over an empty file gives libpci no devices of its own: every byte it decodes
// is one we handed it with pci_setup_cache, and a read past that comes back as 0xff, never live.
pci_access* offline_access() {
  pci_access* access = pci_alloc();
  set_libpci_hooks(access);
  access->method = PCI_ACCESS_DUMP;
  pci_set_param(access, const_cast<char*>("dump.name"), const_cast<char*>("/dev/null"));
  pci_init(access);
  return access;
}

// libpci parses pci.ids (1.3 MB) at an access's first name lookup; one access for names, kept for
// the process, parses it once rather than once per load (capture, the tests and fuzzing load many).
pci_access* name_access() {
  static pci_access* const names = offline_access();
  return names;
}

}  // namespace

PciDecoder::PciDecoder() : access_(offline_access()) {}

PciDecoder::~PciDecoder() { pci_cleanup(access_); }

void PciDecoder::lookup_names(Function& fn) const {
  char buf[256];
  int flags = PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB;  // network lookups are off unless asked for
  if (const char* v = pci_lookup_name(name_access(), buf, sizeof buf, PCI_LOOKUP_VENDOR | flags, fn.vendor))
    fn.vendor_name = v;
  if (const char* d = pci_lookup_name(name_access(), buf, sizeof buf, PCI_LOOKUP_DEVICE | flags, fn.vendor, fn.device))
    fn.device_name = d;
}

void PciDecoder::decode_config(Function& fn, const std::string& config) const {
  fn.config_size = config.size();
  if (config.size() < 64) {
    fn.config_note = config.empty() ? "config space not readable" : "config space truncated";
    return;
  }
  // libpci reads through this copy only; anything past its end is 0xff and we never ask for it.
  std::vector<u8> cache(config.begin(), config.end());
  struct pci_dev* dev = pci_get_dev(access_, static_cast<int>(fn.bdf.domain), fn.bdf.bus, fn.bdf.dev, fn.bdf.fn);
  pci_setup_cache(dev, cache.data(), static_cast<int>(cache.size()));
  fn.header_type = pci_read_byte(dev, PCI_HEADER_TYPE) & 0x7f;

  if (config.size() < 256) {
    // The kernel hands non-root readers the first 64 bytes only; capabilities live beyond them.
    fn.config_note = "only " + std::to_string(config.size()) + " bytes of config space readable: needs root";
    pci_free_dev(dev);
    return;
  }
  // Ask for extended capabilities only when their bytes are in the cache.
  pci_fill_info(dev, PCI_FILL_CAPS | (config.size() >= 4096 ? PCI_FILL_EXT_CAPS : 0));
  bool has_caps = pci_read_word(dev, PCI_STATUS) & PCI_STATUS_CAP_LIST;
  struct pci_cap* exp = has_caps ? pci_find_cap(dev, PCI_CAP_ID_EXP, PCI_CAP_NORMAL) : nullptr;
  if (!exp) {
    fn.port_type = PortType::kNotPcie;
    fn.acs.presence = Presence::kAbsent;
    fn.rebar_presence = Presence::kAbsent;
    fn.sriov_presence = Presence::kAbsent;
    pci_free_dev(dev);
    return;
  }
  int base = exp->addr;
  unsigned type = (pci_read_word(dev, base + PCI_EXP_FLAGS) & PCI_EXP_FLAGS_TYPE) >> 4;
  static const PortType types[] = {PortType::kEndpoint,        PortType::kLegacyEndpoint,
                                   PortType::kUnknown,         PortType::kUnknown,
                                   PortType::kRootPort,        PortType::kUpstreamPort,
                                   PortType::kDownstreamPort,  PortType::kPcieToPciBridge,
                                   PortType::kPciToPcieBridge, PortType::kRcIntegratedEndpoint,
                                   PortType::kRcEventCollector};
  fn.port_type = type < std::size(types) ? types[type] : PortType::kUnknown;

  // Root-complex integrated endpoints and event collectors have no link.
  if (fn.port_type != PortType::kRcIntegratedEndpoint && fn.port_type != PortType::kRcEventCollector) {
    u32 lnkcap = pci_read_long(dev, base + PCI_EXP_LNKCAP);
    u16 lnksta = pci_read_word(dev, base + PCI_EXP_LNKSTA);
    if (!fn.link.max_speed) fn.link.max_speed = pcie_speed_code(lnkcap & PCI_EXP_LNKCAP_SPEED);
    // Width 0 means "no link reported" (a VF's reserved-zero register, a link that is down).
    int max_width = static_cast<int>((lnkcap & PCI_EXP_LNKCAP_WIDTH) >> 4);
    int cur_width = static_cast<int>((lnksta & PCI_EXP_LNKSTA_WIDTH) >> 4);
    if (!fn.link.max_width && max_width) fn.link.max_width = max_width;
    if (!fn.link.cur_speed) fn.link.cur_speed = pcie_speed_code(lnksta & PCI_EXP_LNKSTA_SPEED);
    if (!fn.link.cur_width && cur_width) fn.link.cur_width = cur_width;
  }

  if (config.size() < 4096) {
    fn.config_note = "extended config space (offset 0x100+) not readable: kernel or platform without ECAM";
    pci_free_dev(dev);
    return;
  }
  if (struct pci_cap* acs = pci_find_cap(dev, PCI_EXT_CAP_ID_ACS, PCI_CAP_EXTENDED)) {
    fn.acs.presence = Presence::kPresent;
    fn.acs.capability = pci_read_word(dev, acs->addr + PCI_ACS_CAP);
    fn.acs.control = pci_read_word(dev, acs->addr + PCI_ACS_CTRL);
  } else {
    fn.acs.presence = Presence::kAbsent;
  }
  if (struct pci_cap* rebar = pci_find_cap(dev, PCI_EXT_CAP_ID_REBAR, PCI_CAP_EXTENDED)) {
    fn.rebar_presence = Presence::kPresent;
    // Control register bits 7:5 of the first entry give the number of resizable BARs.
    unsigned count = (pci_read_long(dev, rebar->addr + 8) >> 5) & 7;
    for (unsigned i = 0; i < count && i < 6; ++i) {
      u32 cap = pci_read_long(dev, rebar->addr + 4 + i * 8);
      u32 ctrl = pci_read_long(dev, rebar->addr + 8 + i * 8);
      // BAR Size is 2^(n+20) bytes and the spec defines n up to 43 (8 EiB); a larger n (a broken or
      // hostile dump) would shift past 64 bits: that entry is not decoded.
      unsigned size_code = (ctrl >> 8) & 0x3f;
      if (size_code > 43) continue;
      ResizableBar r;
      r.bar = static_cast<int>(ctrl & 7);
      r.current_size = 1ull << (size_code + 20);
      for (int bit = 4; bit < 32; ++bit)
        if (cap & (1u << bit)) r.supported_sizes.push_back(1ull << (bit - 4 + 20));
      fn.rebar.push_back(std::move(r));
    }
  } else {
    fn.rebar_presence = Presence::kAbsent;
  }
  if (struct pci_cap* iov = pci_find_cap(dev, PCI_EXT_CAP_ID_SRIOV, PCI_CAP_EXTENDED)) {
    fn.sriov_presence = Presence::kPresent;
    fn.sriov.total_vfs = pci_read_word(dev, iov->addr + PCI_IOV_TOTALVF);
    fn.sriov.num_vfs = pci_read_word(dev, iov->addr + PCI_IOV_NUMVF);
    fn.sriov.vf_device = pci_read_word(dev, iov->addr + PCI_IOV_DID);
  } else {
    fn.sriov_presence = Presence::kAbsent;
  }
  pci_free_dev(dev);
}

}  // namespace p2pcheck
