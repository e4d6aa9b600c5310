// The PCI model: one Function per PCI function, as sysfs and its config space describe it.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct pci_access;  // libpci's handle, kept out of our headers

namespace p2pcheck {

// GPU vendors whose GPU-direct storage stacks p2pcheck speaks for: AMD (hipFile), NVIDIA (GDS).
inline constexpr std::uint16_t kPciVendorAmd = 0x1002, kPciVendorNvidia = 0x10de;

// Domain:bus:device.function, printed as the kernel does ("0000:41:00.0").
struct Bdf {
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  std::uint8_t dev = 0;
  std::uint8_t fn = 0;

  // Accepts "dddd:bb:dd.f" and "bb:dd.f" (domain 0), hex, case-insensitive.
  static std::optional<Bdf> parse(std::string_view text);
  // True when `text` has the shape "[dddd:]bb:dd.f" with a domain of `min_domain`..`max_domain`
  // digits, whatever the numbers (parse() also refuses a device above 0x1f).
  static bool shaped(std::string_view text, size_t min_domain = 4, size_t max_domain = 8);
  std::string str() const;
  // "43:00.0" in domain 0, as lspci prints it; the whole address in any other: short labels.
  std::string short_str() const { return domain == 0 ? str().substr(5) : str(); }
  std::uint8_t devfn() const { return static_cast<std::uint8_t>(dev << 3 | fn); }
  // The four numbers in one integer, in BDF order: a key for hash maps of devices.
  std::uint64_t key() const {
    return std::uint64_t{domain} << 24 | std::uint64_t{bus} << 16 | std::uint64_t{dev} << 8 | fn;
  }
  auto operator<=>(const Bdf&) const = default;
};

// A fact that lives in config space: present, absent, or unknown because it could not be read.
enum class Presence { kPresent, kAbsent, kUnknown };
const char* to_string(Presence p);

// PCI Express Device/Port Type (PCIe capability register bits 7:4).
enum class PortType {
  kUnknown,  // config space not readable far enough
  kNotPcie,  // conventional PCI function (no PCIe capability)
  kEndpoint,
  kLegacyEndpoint,
  kRootPort,
  kUpstreamPort,
  kDownstreamPort,
  kPcieToPciBridge,
  kPciToPcieBridge,
  kRcIntegratedEndpoint,
  kRcEventCollector,
};
const char* to_string(PortType t);

// ACS Control bits the kernel counts as "redirect" (drivers/pci/p2pdma.c pci_bridge_has_acs_redir).
inline constexpr std::uint16_t kAcsSv = 0x0001, kAcsTb = 0x0002, kAcsRr = 0x0004, kAcsCr = 0x0008, kAcsUf = 0x0010,
                               kAcsEc = 0x0020, kAcsDt = 0x0040;
inline constexpr std::uint16_t kAcsRedirectMask = kAcsRr | kAcsCr | kAcsEc;
// "SV RR CR UF" style names of the set bits.
std::string acs_bits_str(std::uint16_t bits);

struct Acs {
  Presence presence = Presence::kUnknown;
  std::uint16_t capability = 0;  // ACS Capability register (cap + 4): what the device can do
  std::uint16_t control = 0;     // ACS Control register (cap + 6): what is enabled now
  bool redirect() const { return presence == Presence::kPresent && (control & kAcsRedirectMask); }
};

struct LinkInfo {
  // GT/s per lane (2.5, 5, 8, 16, 32, 64) and lanes; nullopt when unknown. The sysfs attributes
  // (readable without root), or their values decoded from config space where it holds them
  // (config_attributes()); Link Capabilities and Link Status fill in what they leave unknown.
  std::optional<double> max_speed, cur_speed;
  std::optional<int> max_width, cur_width;
  bool downtrained() const {
    return (max_speed && cur_speed && *cur_speed < *max_speed) || (max_width && cur_width && *cur_width < *max_width);
  }
};

struct Bar {
  int index = 0;  // 0-5 BARs, 6 ROM, 7-12 SR-IOV VF BARs, 13-16 bridge windows (the `resource` line)
  std::uint64_t start = 0;
  std::uint64_t size = 0;
  std::uint64_t flags = 0;  // IORESOURCE_* as the kernel prints them
  bool is_io() const { return flags & 0x100; }
  bool is_mem() const { return flags & 0x200; }
  bool prefetchable() const { return flags & 0x2000; }
  bool is_64bit() const { return flags & 0x100000; }
};

struct ResizableBar {
  int bar = 0;
  std::uint64_t current_size = 0;
  std::vector<std::uint64_t> supported_sizes;  // ascending
};

struct Sriov {
  std::uint16_t total_vfs = 0;
  std::uint16_t num_vfs = 0;
  std::uint16_t vf_device = 0;
};

// /sys/bus/pci/devices/<BDF>/p2pmem: present once a driver registered P2P memory.
struct P2pmem {
  std::optional<std::uint64_t> size, available;
  std::optional<bool> published;
  bool has_allocate = false;  // p2pmem/allocate exists (kernel 6.2+)
};

struct Function {
  Bdf bdf;
  std::string sysfs_path;     // canonical: /sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0
  std::string host_bridge;    // root bus it hangs below: "0000:00" (from /sys/devices/pci0000:00)
  std::optional<Bdf> parent;  // the bridge whose secondary bus this is on; nullopt on a root bus

  std::uint16_t vendor = 0, device = 0, subsystem_vendor = 0, subsystem_device = 0;
  std::uint32_t class_code = 0;  // 24 bits: base, sub, prog-if
  std::uint8_t revision = 0;
  std::optional<std::uint8_t> header_type;  // without the multi-function bit
  std::string driver;                       // bound driver, empty when none (or unknown)
  std::string driver_not_carried;           // "not in this lspci output": the source cannot say; else empty
  // sysfs numa_node: -1 is the kernel's NUMA_NO_NODE (firmware gave no proximity, or one node only).
  int numa_node = -1;
  // Why numa_node was not read: "not in this lspci output", "not in a plan", "not read"; empty when read.
  std::string numa_unknown;
  // The name people use for it where the input gives one: a plan's "gpu0", "pex", "rp-17". Shown
  // beside the address in every output, and there for the pictures (topo --dot) to show.
  std::string name;
  std::optional<int> iommu_group;
  std::vector<Bar> bars;

  // How much config space could be read: 4096 (root, PCIe), 256 (conventional or no ECAM),
  // 64 (not root: the kernel shows others only the header), 0 (unreadable).
  std::size_t config_size = 0;
  std::string config_note;         // why something is unknown, e.g. "only 64 bytes of config space: needs root"
  std::string config_not_carried;  // "not in this hwloc XML": the source cannot hold config space; else empty

  PortType port_type = PortType::kUnknown;
  LinkInfo link;
  Acs acs;
  Presence rebar_presence = Presence::kUnknown;
  std::vector<ResizableBar> rebar;
  Presence sriov_presence = Presence::kUnknown;
  Sriov sriov;
  std::optional<Bdf> physfn;  // set on SR-IOV virtual functions
  std::optional<P2pmem> p2pmem;

  std::uint8_t base_class() const { return static_cast<std::uint8_t>(class_code >> 16); }
  std::uint16_t class_id() const { return static_cast<std::uint16_t>(class_code >> 8); }
  bool is_bridge() const { return header_type ? *header_type == 1 : class_id() == 0x0604; }
  bool is_virtfn() const { return physfn.has_value(); }
  // The largest memory BAR (0-5): for a GPU, the VRAM aperture.
  std::optional<Bar> largest_mem_bar() const;
};

// The sysfs attributes the kernel prints from config space (drivers/pci/pci-sysfs.c: vendor,
// device, subsystem_vendor, subsystem_device, revision and the four *_link_* files), where the
// config bytes prove what the file says on every kernel, so the file need not be read. Each member
// left unset means: read the file, as before. Nothing is taken from the config space of an SR-IOV VF
// (the kernel takes its IDs from the PF and its SR-IOV capability, and its own config reads 0xffff) or
// from one whose Vendor ID reads as no device (0x0000, 0x0001, 0xffff).
struct ConfigAttributes {
  std::optional<std::uint16_t> vendor, device;
  std::optional<std::uint8_t> revision;
  // current_link_speed/_width and max_link_speed/_width as parse_link_speed() and a width above 0
  // read them: nullopt members are "Unknown" or 0 in the file. Unset: read the four files.
  std::optional<LinkInfo> link;

  // The subsystem IDs, given the class the kernel settled on (the `class` file). pci_setup_device()
  // leaves them 0 for a header-type-0 function whose class it refused (then the class reads 0).
  std::optional<std::pair<std::uint16_t, std::uint16_t>> subsystem(std::uint32_t class_code) const;

  std::optional<std::pair<std::uint16_t, std::uint16_t>> subsystem_ids;  // as the header shows them
  bool header_type0 = false;
};
// `config` is the config file (64 bytes and up); `virtfn`: the function has a physfn link.
ConfigAttributes config_attributes(std::string_view config, bool virtfn);

// pci_find_capability(): the kernel's walk of the capability list (drivers/pci/pci.c
// __pci_find_next_cap_ttl: from 0x34, or 0x14 for CardBus, only when the status register says there
// is a list; it stops below 0x40, at ID 0xff or after 48 entries). The offset, or 0 when absent or
// when `config` holds fewer than 256 bytes (the list is not there to walk).
unsigned kernel_find_capability(std::string_view config, unsigned cap_id);

// Decodes config-space bytes with libpci (pci_setup_cache + pci_find_cap) into `fn`. The bytes come
// from the source layer: libpci never touches the machine.
class PciDecoder {
 public:
  PciDecoder();
  ~PciDecoder();
  PciDecoder(const PciDecoder&) = delete;
  PciDecoder& operator=(const PciDecoder&) = delete;

  void decode_config(Function& fn, const std::string& config) const;

 private:
  ::pci_access* access_;
};

// Names from pci.ids through libpci; "" when unknown. Looked up when an output shows them, not when
// a function is read: libpci parses the whole 1.3 MB list at the first lookup, which costs as much as
// reading a 1,000-function tree, and most outputs show no name. Safe from several threads (fleet).
std::string pci_vendor_name(std::uint16_t vendor);
std::string pci_device_name(std::uint16_t vendor, std::uint16_t device);

// Routes libpci's error, warning and debug hooks into p2pcheck: errors throw Error("libpci", ...),
// the rest is dropped. Every pci_access p2pcheck creates gets these before pci_init().
void set_libpci_hooks(::pci_access* access);

// Parses a sysfs link speed ("16.0 GT/s PCIe", "8.0 GT/s", "Unknown") into GT/s.
std::optional<double> parse_link_speed(std::string_view text);
// Bytes per second one lane moves after line encoding (8b/10b to Gen2, 128b/130b from Gen3).
double lane_bytes_per_second(double gts);
std::string format_size(std::uint64_t bytes);  // "256 GiB", "16 MiB", "4 KiB"
std::string format_speed(double gts);          // "16 GT/s", "2.5 GT/s"
// "16 GT/s x16 (device capable 32 GT/s x16)"; empty when the link is unknown.
std::string link_text(const LinkInfo& link);
// "ACS redirect [SV RR CR UF]", "ACS unknown"; empty when the function has no ACS.
std::string acs_text(const Acs& acs);

}  // namespace p2pcheck
