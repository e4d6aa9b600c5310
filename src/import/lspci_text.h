// `lspci -vvv` text (no hex dump) read into what each function's block states: IDs, class, bus
// numbers, the capability list at lspci's offsets with the registers it decodes, BAR sizes, NUMA
// node, IOMMU group and driver. Nothing is guessed: a register the text does not print stays unset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "p2pcheck/model/pci.h"

namespace p2pcheck {

// One "Capabilities: [off] name" entry and the registers its indented lines decode.
struct TextCap {
  unsigned offset = 0;
  bool extended = false;  // "[100 v1]": PCIe extended capability
  unsigned version = 0;   // the "vN" of an extended one
  unsigned id = 0;        // from the name; 0 where lspci's name is not one p2pcheck knows
  int line = 0;
  std::uint16_t exp_flags = 0;  // Express: version, Slot, port type (PCI_EXP_FLAGS)
  std::uint32_t lnkcap = 0;     // Express: LnkCap speed and width; 0 = not printed
  std::uint16_t lnksta = 0;     // Express: LnkSta speed and width; 0 = not printed
  std::optional<std::uint16_t> acs_cap, acs_ctl;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> rebar;  // (capability, control) per "BAR n:" line
  std::optional<std::uint16_t> sriov_total, sriov_num, sriov_did;
  std::optional<std::pair<std::uint16_t, std::uint16_t>> ssvid;  // "Subsystem: ... [vvvv:dddd]" capability
  // The registers p2pcheck reads are all printed (ACS, Resizable BAR, SR-IOV need lspci -vv).
  bool complete() const;
};

struct TextRegion {
  int index = 0;  // Region N (lspci -vv); -1 for lspci -v's line, which names no BAR (found by its address)
  std::optional<std::uint64_t> start;
  std::uint64_t size = 0;   // 0: lspci printed no [size=]
  std::uint64_t flags = 0;  // IORESOURCE_* as the kernel's resource file has them
};

struct TextFunction {
  Bdf bdf;
  int line = 0;            // the device line
  std::string class_name;  // as printed, for messages
  bool has_ids = false;    // -n/-nn numbers on the device line
  std::uint16_t vendor = 0, device = 0;
  std::uint32_t class_code = 0;
  std::uint8_t revision = 0;
  std::optional<std::pair<std::uint16_t, std::uint16_t>> subsystem;
  std::optional<std::uint8_t> primary, secondary, subordinate;  // "Bus:" of a bridge
  bool access_denied = false;                                   // "Capabilities: <access denied>"
  std::vector<TextCap> caps;                                    // in the order lspci walked them
  std::vector<TextRegion> regions;
  std::string driver;
  std::optional<int> numa_node, iommu_group;
  std::string bad;  // why the block cannot be read ("" when it can): it is left out
};

struct LspciText {
  std::vector<TextFunction> functions;
  bool drivers_shown = false;  // lspci -k's lines are there
  bool sizes_shown = false;    // some "Region N:" line has [size=] (sysfs was read, not a dump)
  bool numa_shown = false;     // some "NUMA node:" line
  bool iommu_shown = false;    // some "IOMMU group:" line
  bool verbose_lines = false;  // any -v detail line at all
};

// Error naming `name` and the line past the limits (functions); a malformed block is kept with
// `bad` set, for the caller to leave out with a note.
LspciText parse_lspci_text(std::string_view text, const std::string& name);

// A PCI function line as lspci prints it: "[dddd:]bb:dd.f " then anything.
bool lspci_function_line(std::string_view line);

}  // namespace p2pcheck
