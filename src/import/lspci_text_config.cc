// Config space rebuilt from what lspci -vvv printed, register by register.
#include "lspci_text_config.h"

#include <algorithm>
#include <cstdio>

#include "p2pcheck/import/config_bytes.h"
#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

constexpr unsigned kCapExp = 0x10, kCapSsvid = 0x0d;
constexpr unsigned kExtAcs = 0x0d, kExtSriov = 0x10, kExtRebar = 0x15;

// The bytes a capability's registers take, from its header: what the readers may read there.
unsigned span_of(const TextCap& cap) {
  if (!cap.extended) {
    if (cap.id == kCapExp) return (cap.exp_flags & 0xf) > 1 ? 0x30 : 0x14;  // to Link Capabilities 2 / Status
    return cap.id == kCapSsvid ? 8 : 2;
  }
  if (cap.id == kExtAcs) return 8;
  if (cap.id == kExtSriov) return 0x1c;
  if (cap.id == kExtRebar) return 4 + 8 * static_cast<unsigned>(cap.rebar.size());
  return 4;
}

// Two capabilities whose registers share bytes: lspci never prints that for a real device.
bool overlapping(const std::vector<TextCap>& caps, unsigned size, std::string& why) {
  std::vector<std::pair<unsigned, unsigned>> spans;
  for (const TextCap& cap : caps)
    if (cap.extended == false || size == 4096) spans.emplace_back(cap.offset, cap.offset + span_of(cap));
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    unsigned end = spans[i].first < 0x100 ? 0x100 : 0x1000;
    if (spans[i].second > end || (i + 1 < spans.size() && spans[i].second > spans[i + 1].first)) {
      why = "capability at [" + hex(spans[i].first, 2) + "] runs into " +
            (i + 1 < spans.size() && spans[i].second > spans[i + 1].first
                 ? "the one at [" + hex(spans[i + 1].first, 2) + "]"
                 : std::string("the end of its config space"));
      return true;
    }
  }
  return false;
}

void write_normal(std::string& c, const TextCap& cap, unsigned next) {
  put8(c, cap.offset, cap.id);
  put8(c, cap.offset + 1, next);
  if (cap.id == kCapExp) {
    put16(c, cap.offset + 2, cap.exp_flags);
    put32(c, cap.offset + 0x0c, cap.lnkcap);  // PCI_EXP_LNKCAP
    put16(c, cap.offset + 0x12, cap.lnksta);  // PCI_EXP_LNKSTA
  } else if (cap.id == kCapSsvid && cap.ssvid) {
    put16(c, cap.offset + 4, cap.ssvid->first);
    put16(c, cap.offset + 6, cap.ssvid->second);
  }
}

void write_extended(std::string& c, const TextCap& cap, unsigned next) {
  put32(c, cap.offset, cap.id | cap.version << 16 | next << 20);
  if (cap.id == kExtAcs) {
    put16(c, cap.offset + 4, *cap.acs_cap);
    put16(c, cap.offset + 6, *cap.acs_ctl);
  } else if (cap.id == kExtSriov) {
    put16(c, cap.offset + 0x0e, *cap.sriov_total);  // PCI_IOV_TOTALVF
    put16(c, cap.offset + 0x10, *cap.sriov_num);    // PCI_IOV_NUMVF
    put16(c, cap.offset + 0x1a, *cap.sriov_did);    // PCI_IOV_DID
  } else if (cap.id == kExtRebar) {
    for (std::size_t i = 0; i < cap.rebar.size(); ++i) {
      std::uint32_t control = cap.rebar[i].second;
      if (i == 0) control |= static_cast<std::uint32_t>(cap.rebar.size()) << 5;  // number of resizable BARs
      put32(c, cap.offset + 4 + 8 * static_cast<unsigned>(i), cap.rebar[i].first);
      put32(c, cap.offset + 8 + 8 * static_cast<unsigned>(i), control);
    }
  }
}

// Each list in lspci's order, each entry pointing at the next.
void write_caps(std::string& c, const std::vector<TextCap>& caps, unsigned header_type) {
  const TextCap* last_normal = nullptr;
  const TextCap* last_extended = nullptr;
  for (const TextCap& cap : caps) {
    if (cap.extended && c.size() < 4096) continue;
    const TextCap*& last = cap.extended ? last_extended : last_normal;
    if (!last && !cap.extended) put8(c, header_type == 2 ? 0x14 : 0x34, cap.offset);  // PCI_CAPABILITY_LIST
    if (last) (last->extended ? write_extended : write_normal)(c, *last, cap.offset);
    last = &cap;
  }
  if (last_normal) write_normal(c, *last_normal, 0);
  if (last_extended) write_extended(c, *last_extended, 0);
}

}  // namespace

std::optional<TextConfig> config_from_text(const TextFunction& fn, std::string& why) {
  TextConfig out;
  bool any_extended = false, pcie = false;
  for (const TextCap& cap : fn.caps) {
    any_extended = any_extended || cap.extended;
    pcie = pcie || (!cap.extended && cap.id == kCapExp);
    if (!cap.complete()) out.extended_incomplete = true;
  }
  unsigned size = fn.access_denied ? 64 : any_extended && pcie && !out.extended_incomplete ? 4096 : 256;
  std::string& c = out.bytes;
  c.assign(size, '\0');
  put16(c, 0x00, fn.vendor);
  put16(c, 0x02, fn.device);
  put8(c, 0x08, fn.revision);
  put8(c, 0x09, fn.class_code);
  put16(c, 0x0a, fn.class_code >> 8);
  // The Bus line is what lspci prints for a bridge header (type 1), or a CardBus one (class 0607).
  unsigned header_type = !fn.secondary ? 0 : (fn.class_code >> 8) == 0x0607 ? 2 : 1;
  put8(c, 0x0e, header_type);
  if (fn.secondary) {
    put8(c, 0x18, *fn.primary);
    put8(c, 0x19, *fn.secondary);
    put8(c, 0x1a, *fn.subordinate);
  } else if (fn.subsystem) {
    put16(c, 0x2c, fn.subsystem->first);
    put16(c, 0x2e, fn.subsystem->second);
  }
  if (fn.caps.empty() && !fn.access_denied) return out;
  put16(c, 0x06, 0x10);  // PCI_STATUS_CAP_LIST: "<access denied>" too is printed only for Cap+
  if (size == 64) return out;
  if (overlapping(fn.caps, size, why)) return std::nullopt;
  write_caps(c, fn.caps, header_type);
  return out;
}

std::string resource_from_text(const TextFunction& fn) {
  std::uint64_t start[6] = {}, end[6] = {}, flags[6] = {};
  for (const TextRegion& r : fn.regions) {
    // No end past 2^64; lspci -v's lines name no BAR (index -1) until the caller places them.
    if (r.index < 0 || r.index > 5 || r.size == 0 || r.start.value_or(0) > ~0ull - (r.size - 1)) continue;
    start[r.index] = r.start.value_or(0);
    end[r.index] = start[r.index] + r.size - 1;
    flags[r.index] = r.flags;
  }
  std::string out;
  for (int i = 0; i < 6; ++i) {
    char line[80];
    std::snprintf(line, sizeof line, "0x%016llx 0x%016llx 0x%016llx\n", static_cast<unsigned long long>(start[i]),
                  static_cast<unsigned long long>(end[i]), static_cast<unsigned long long>(flags[i]));
    out += line;
  }
  return out;
}

int place_regions(TextFunction& fn, const std::string& config) {
  if (config.size() < 0x28) return 0;
  auto dword = [&](unsigned at) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(config[at])) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(config[at + 1])) << 8 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(config[at + 2])) << 16 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(config[at + 3])) << 24;
  };
  // A bridge (header type 1) has two BARs, an endpoint six; a 64-bit BAR takes the next one's dword.
  const int bars = (static_cast<unsigned char>(config[0x0e]) & 0x7f) == 1 ? 2 : 6;
  std::uint64_t address[6] = {};
  bool io[6] = {};
  for (int i = 0; i < bars; ++i) {
    std::uint32_t low = dword(0x10 + 4 * static_cast<unsigned>(i));
    io[i] = low & 1;
    address[i] = io[i] ? low & ~0x3u : low & ~0xfu;
    if (!io[i] && ((low >> 1) & 3) == 2 && i + 1 < bars) {
      address[i] |= static_cast<std::uint64_t>(dword(0x10 + 4 * static_cast<unsigned>(i + 1))) << 32;
      ++i;  // the upper half is no BAR of its own
    }
  }
  int placed = 0;
  for (TextRegion& r : fn.regions) {
    if (r.index >= 0 || !r.start || *r.start == 0) continue;
    for (int i = 0; i < bars; ++i)
      if (address[i] == *r.start && io[i] == ((r.flags & 0x100) != 0)) {
        r.index = i;
        ++placed;
        break;
      }
  }
  return placed;
}

}  // namespace p2pcheck
