// Config-space decoding through libpci, and the small value helpers of the PCI model.
#include "p2pcheck/model/pci.h"

extern "C" {
#include <pci/pci.h>
}
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

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
  // "%04x:%02x:%02x.%x" (append_hex: without snprintf).
  std::string out;
  out.reserve(12);
  append_hex(out, domain, 4);
  out += ':';
  append_hex(out, bus, 2);
  out += ':';
  append_hex(out, dev, 2);
  out += '.';
  append_hex(out, fn, 1);
  return out;
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

namespace {

std::uint16_t le16(std::string_view c, size_t at) {
  return static_cast<std::uint16_t>(static_cast<std::uint8_t>(c[at]) | static_cast<std::uint8_t>(c[at + 1]) << 8);
}
std::uint32_t le32(std::string_view c, size_t at) {
  return static_cast<std::uint32_t>(le16(c, at)) | static_cast<std::uint32_t>(le16(c, at + 2)) << 16;
}

// max_link_speed is pcie_get_speed_cap(), which kernels compute differently: before 4.17 from Link
// Capabilities' Max Link Speed alone; then the highest speed of Link Capabilities 2's vector (2.5 to
// 64 GT/s), falling back to Max Link Speed 2.5/5; from 6.13 (and 6.12.y) the vector capped at Max
// Link Speed. When the vector is empty or its highest speed is Max Link Speed, every kernel's file,
// read as before (where it says "Unknown", Max Link Speed fills in), is pcie_speed_code(Max Link Speed).
// Otherwise it depends on the kernel: nullopt, read the file.
std::optional<std::optional<double>> max_speed_on_every_kernel(std::uint32_t lnkcap, std::uint32_t lnkcap2) {
  unsigned sls = lnkcap & PCI_EXP_LNKCAP_SPEED;
  std::uint32_t vector = lnkcap2 & 0xfe;  // PCI_EXP_LNKCAP2_SLS: bit n is speed code n
  if (vector != 0) {
    unsigned highest = 0;
    for (unsigned bit = 1; bit <= 6; ++bit)  // PCIE_LNKCAP2_SLS2SPEED knows 2.5 to 64 GT/s
      if (vector & (1u << bit)) highest = bit;
    if (highest == 0 || highest != sls) return std::nullopt;
  }
  return pcie_speed_code(sls);
}

// The four link attributes from the PCIe capability at `pos`, where the config bytes decide them.
std::optional<LinkInfo> link_attributes(std::string_view c, unsigned pos) {
  if (pos == 0) return LinkInfo{};  // not PCIe: no link attributes (older kernels: "Unknown", 0)
  if (pos + PCI_EXP_LNKSTA + 2 > c.size()) return std::nullopt;
  std::uint16_t flags = le16(c, pos + PCI_EXP_FLAGS);
  unsigned type = (flags & PCI_EXP_FLAGS_TYPE) >> 4, version = flags & PCI_EXP_FLAGS_VERS;
  std::uint32_t lnkcap = le32(c, pos + PCI_EXP_LNKCAP);
  std::uint16_t lnksta = le16(c, pos + PCI_EXP_LNKSTA);
  // pcie_cap_has_lnkctl(): only these types have link registers; the kernel reads the others' as 0.
  static const unsigned with_link[] = {PCI_EXP_TYPE_ENDPOINT,   PCI_EXP_TYPE_LEG_END,    PCI_EXP_TYPE_ROOT_PORT,
                                       PCI_EXP_TYPE_UPSTREAM,   PCI_EXP_TYPE_DOWNSTREAM, PCI_EXP_TYPE_PCI_BRIDGE,
                                       PCI_EXP_TYPE_PCIE_BRIDGE};
  if (std::find(std::begin(with_link), std::end(with_link), type) == std::end(with_link)) {
    // Root-complex integrated endpoints and event collectors: no link, and zero registers read alike
    // on kernels that once read them (3.x read any version-2 capability's link registers).
    bool rc = type == PCI_EXP_TYPE_ROOT_INT_EP || type == PCI_EXP_TYPE_ROOT_EC;
    if (rc && lnkcap == 0 && lnksta == 0) return LinkInfo{};
    return std::nullopt;  // a reserved port type: the files say what this kernel made of it
  }
  std::uint32_t lnkcap2 = 0;  // pcie_cap_has_lnkctl2(): version 1 capabilities end before it
  if (version > 1) {
    if (pos + PCI_EXP_LNKCAP2 + 4 > c.size()) return std::nullopt;
    lnkcap2 = le32(c, pos + PCI_EXP_LNKCAP2);
  }
  auto max_speed = max_speed_on_every_kernel(lnkcap, lnkcap2);
  if (!max_speed) return std::nullopt;
  LinkInfo link;
  link.max_speed = *max_speed;
  link.cur_speed = pcie_speed_code(lnksta & PCI_EXP_LNKSTA_SPEED);  // pcie_link_speed[]
  if (int w = static_cast<int>((lnkcap & PCI_EXP_LNKCAP_WIDTH) >> 4); w > 0) link.max_width = w;
  if (int w = static_cast<int>((lnksta & PCI_EXP_LNKSTA_WIDTH) >> 4); w > 0) link.cur_width = w;
  return link;
}

}  // namespace

unsigned kernel_find_capability(std::string_view c, unsigned cap_id) {
  if (c.size() < 256 || !(le16(c, PCI_STATUS) & PCI_STATUS_CAP_LIST)) return 0;
  unsigned header = static_cast<std::uint8_t>(c[PCI_HEADER_TYPE]) & 0x7f;
  unsigned start = header == PCI_HEADER_TYPE_NORMAL || header == PCI_HEADER_TYPE_BRIDGE ? PCI_CAPABILITY_LIST
                   : header == PCI_HEADER_TYPE_CARDBUS                                  ? PCI_CB_CAPABILITY_LIST
                                                                                        : 0;
  if (start == 0) return 0;
  unsigned pos = static_cast<std::uint8_t>(c[start]);
  for (int ttl = 48; ttl > 0; --ttl) {  // PCI_FIND_CAP_TTL
    if (pos < 0x40) break;
    pos &= ~3u;
    std::uint16_t entry = le16(c, pos);
    if ((entry & 0xff) == 0xff) break;
    if ((entry & 0xff) == cap_id) return pos;
    pos = entry >> 8;
  }
  return 0;
}

std::optional<std::pair<std::uint16_t, std::uint16_t>> ConfigAttributes::subsystem(std::uint32_t class_code) const {
  // PCI_CLASS_NOT_DEFINED is what a refused class reads as; 0x0604 with header type 0 is refused.
  if (header_type0 && ((class_code >> 8) == 0x0000 || (class_code >> 8) == 0x0604)) return std::nullopt;
  return subsystem_ids;
}

ConfigAttributes config_attributes(std::string_view c, bool virtfn) {
  ConfigAttributes a;
  if (virtfn || c.size() < 64) return a;
  std::uint16_t vendor = le16(c, PCI_VENDOR_ID);
  if (vendor == 0x0000 || vendor == 0x0001 || vendor == 0xffff) return a;
  // pci_setup_device(): IDs and revision as read at enumeration. Quirks leave them alone (the one
  // that changes a SiS 503's Device ID first makes the chip show the new one in config space).
  a.vendor = vendor;
  a.device = le16(c, PCI_DEVICE_ID);
  a.revision = static_cast<std::uint8_t>(c[PCI_REVISION_ID]);
  unsigned header = static_cast<std::uint8_t>(c[PCI_HEADER_TYPE]) & 0x7f;
  if (header == PCI_HEADER_TYPE_NORMAL) {
    a.header_type0 = true;
    a.subsystem_ids = std::pair{le16(c, PCI_SUBSYSTEM_VENDOR_ID), le16(c, PCI_SUBSYSTEM_ID)};
  } else if (header == PCI_HEADER_TYPE_BRIDGE && c.size() >= 256) {
    // A bridge's subsystem IDs are in its SSVID capability; without one they stay 0.
    unsigned pos = kernel_find_capability(c, PCI_CAP_ID_SSVID);
    if (pos == 0)
      a.subsystem_ids = std::pair<std::uint16_t, std::uint16_t>{0, 0};
    else if (pos + PCI_SSVID_DEVICE + 2 <= c.size())
      a.subsystem_ids = std::pair{le16(c, pos + PCI_SSVID_VENDOR), le16(c, pos + PCI_SSVID_DEVICE)};
  }  // CardBus (subsystem IDs beyond the header) and unknown header types: the files
  if (c.size() >= 256) a.link = link_attributes(c, kernel_find_capability(c, PCI_CAP_ID_EXP));
  return a;
}

void set_libpci_hooks(::pci_access* access) {
  access->error = libpci_error;
  access->warning = libpci_quiet;
  access->debug = libpci_quiet;
}

namespace {

// libpci looks for pci.ids where its build put it (Debian: /usr/share/misc); RHEL and SLES keep it in
// /usr/share/hwdata, where the portable binary (packaging/README.md) finds it too.
void use_installed_pci_ids(pci_access* access) {
  if (::access(access->id_file_name, R_OK) == 0) return;
  for (const char* path : {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"}) {
    if (::access(path, R_OK) == 0) {
      pci_set_name_list_path(access, const_cast<char*>(path), 0);
      return;
    }
  }
}

// The dump method over an empty file gives libpci no devices of its own: every byte it decodes
// is one we handed it with pci_setup_cache, and a read past that comes back as 0xff, never live.
pci_access* offline_access() {
  pci_access* access = pci_alloc();
  set_libpci_hooks(access);
  access->method = PCI_ACCESS_DUMP;
  pci_set_param(access, const_cast<char*>("dump.name"), const_cast<char*>("/dev/null"));
  pci_init(access);
  use_installed_pci_ids(access);
  return access;
}

// One access for names, kept for the process: libpci parses pci.ids once per access, at its first
// lookup. Fleet workers look names up at the same time, and that first lookup frees and refills the
// access's list (a missing pci.ids leaves every name unknown), so every lookup holds the lock. Each
// name found is kept: a paths listing labels every hop of every pair, a few thousand devices
// millions of times.
struct NameTable {
  pci_access* access = offline_access();
  std::mutex lock;
  std::unordered_map<std::uint64_t, std::string> found;  // (what, vendor, device) -> name
};

std::string lookup_name(int what, std::uint16_t vendor, std::uint16_t device) {
  static NameTable table;
  const std::uint64_t key = static_cast<std::uint64_t>(what) << 32 | std::uint64_t{vendor} << 16 | device;
  std::lock_guard<std::mutex> hold(table.lock);
  auto it = table.found.find(key);
  if (it == table.found.end()) {
    char buf[256];
    int flags = what | PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB;  // network lookups are off unless asked for
    const char* name = pci_lookup_name(table.access, buf, sizeof buf, flags, vendor, device);
    it = table.found.emplace(key, name ? name : "").first;
  }
  return it->second;
}

}  // namespace

std::string pci_vendor_name(std::uint16_t vendor) { return lookup_name(PCI_LOOKUP_VENDOR, vendor, 0); }

std::string pci_device_name(std::uint16_t vendor, std::uint16_t device) {
  return lookup_name(PCI_LOOKUP_DEVICE, vendor, device);
}

PciDecoder::PciDecoder() : access_(offline_access()) {}

PciDecoder::~PciDecoder() { pci_cleanup(access_); }

namespace {

// The PCI Express Capabilities register's device/port type field, as our PortType.
PortType express_port_type(struct pci_dev* dev, int base) {
  unsigned type = (pci_read_word(dev, base + PCI_EXP_FLAGS) & PCI_EXP_FLAGS_TYPE) >> 4;
  static const PortType types[] = {PortType::kEndpoint,        PortType::kLegacyEndpoint,
                                   PortType::kUnknown,         PortType::kUnknown,
                                   PortType::kRootPort,        PortType::kUpstreamPort,
                                   PortType::kDownstreamPort,  PortType::kPcieToPciBridge,
                                   PortType::kPciToPcieBridge, PortType::kRcIntegratedEndpoint,
                                   PortType::kRcEventCollector};
  return type < std::size(types) ? types[type] : PortType::kUnknown;
}

// Link Capabilities and Link Status fill in what the sysfs attributes left unknown.
void read_link_registers(LinkInfo& link, struct pci_dev* dev, int base) {
  u32 lnkcap = pci_read_long(dev, base + PCI_EXP_LNKCAP);
  u16 lnksta = pci_read_word(dev, base + PCI_EXP_LNKSTA);
  if (!link.max_speed) link.max_speed = pcie_speed_code(lnkcap & PCI_EXP_LNKCAP_SPEED);
  // Width 0 means "no link reported" (a VF's reserved-zero register, a link that is down).
  int max_width = static_cast<int>((lnkcap & PCI_EXP_LNKCAP_WIDTH) >> 4);
  int cur_width = static_cast<int>((lnksta & PCI_EXP_LNKSTA_WIDTH) >> 4);
  if (!link.max_width && max_width) link.max_width = max_width;
  if (!link.cur_speed) link.cur_speed = pcie_speed_code(lnksta & PCI_EXP_LNKSTA_SPEED);
  if (!link.cur_width && cur_width) link.cur_width = cur_width;
}

void read_acs(Function& fn, struct pci_dev* dev) {
  if (struct pci_cap* acs = pci_find_cap(dev, PCI_EXT_CAP_ID_ACS, PCI_CAP_EXTENDED)) {
    fn.acs.presence = Presence::kPresent;
    fn.acs.capability = pci_read_word(dev, acs->addr + PCI_ACS_CAP);
    fn.acs.control = pci_read_word(dev, acs->addr + PCI_ACS_CTRL);
  } else {
    fn.acs.presence = Presence::kAbsent;
  }
}

void read_resizable_bars(Function& fn, struct pci_dev* dev) {
  struct pci_cap* rebar = pci_find_cap(dev, PCI_EXT_CAP_ID_REBAR, PCI_CAP_EXTENDED);
  if (!rebar) {
    fn.rebar_presence = Presence::kAbsent;
    return;
  }
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
}

void read_sriov(Function& fn, struct pci_dev* dev) {
  if (struct pci_cap* iov = pci_find_cap(dev, PCI_EXT_CAP_ID_SRIOV, PCI_CAP_EXTENDED)) {
    fn.sriov_presence = Presence::kPresent;
    fn.sriov.total_vfs = pci_read_word(dev, iov->addr + PCI_IOV_TOTALVF);
    fn.sriov.num_vfs = pci_read_word(dev, iov->addr + PCI_IOV_NUMVF);
    fn.sriov.vf_device = pci_read_word(dev, iov->addr + PCI_IOV_DID);
  } else {
    fn.sriov_presence = Presence::kAbsent;
  }
}

}  // namespace

void PciDecoder::decode_config(Function& fn, const std::string& config) const {
  fn.config_size = config.size();
  if (config.size() < 64) {
    fn.config_note = config.empty() ? "config space not readable" : "config space truncated";
    return;
  }
  // libpci reads the bytes where they are (anything past their end is 0xff, and we never ask for
  // it). Its cache pointer is not const, but only pci_write_*() would write through it, and the
  // decoder never writes (a 4 KiB copy per function was an allocation and a copy for nothing).
  struct pci_dev* dev = pci_get_dev(access_, static_cast<int>(fn.bdf.domain), fn.bdf.bus, fn.bdf.dev, fn.bdf.fn);
  pci_setup_cache(dev, const_cast<u8*>(reinterpret_cast<const u8*>(config.data())), static_cast<int>(config.size()));
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
  fn.port_type = express_port_type(dev, exp->addr);
  // Root-complex integrated endpoints and event collectors have no link.
  if (fn.port_type != PortType::kRcIntegratedEndpoint && fn.port_type != PortType::kRcEventCollector)
    read_link_registers(fn.link, dev, exp->addr);

  if (config.size() < 4096) {
    fn.config_note = "extended config space (offset 0x100+) not readable: kernel or platform without ECAM";
    pci_free_dev(dev);
    return;
  }
  read_acs(fn, dev);
  read_resizable_bars(fn, dev);
  read_sriov(fn, dev);
  pci_free_dev(dev);
}

}  // namespace p2pcheck
