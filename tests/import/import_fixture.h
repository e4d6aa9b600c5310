// The import tests' small inputs: config space printed as `lspci -xxxx` does, and a small machine
// (root complex, root port, switch, GPU, NVMe) in that form.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/memory_source.h"
#include "test_tree.h"

namespace p2pcheck::testing {

// Formats config bytes the way `lspci -xxxx` prints them.
inline std::string hex_dump(const std::string& bdf_line, const std::string& config) {
  std::string out = bdf_line + "\n";
  for (size_t at = 0; at < config.size(); at += 16) {
    char buf[16];
    std::snprintf(buf, sizeof buf, at < 0x100 ? "%02zx:" : "%03zx:", at);
    out += buf;
    for (size_t i = 0; i < 16; ++i) {
      std::snprintf(buf, sizeof buf, " %02x", static_cast<unsigned char>(config[at + i]));
      out += buf;
    }
    out += "\n";
  }
  return out + "\n";
}

inline std::string bridge(std::uint8_t primary, std::uint8_t sec, std::uint8_t sub, int port, std::uint16_t acs_ctrl) {
  std::string c = ConfigSpace(0x1022, 0x14ab, 0x060400, true).pcie(port).acs(0x5f, acs_ctrl).bytes();
  c[0x18] = static_cast<char>(primary);
  c[0x19] = static_cast<char>(sec);
  c[0x1a] = static_cast<char>(sub);
  return c;
}

// Root complex 00.0, root port 00:01.1 -> switch 01:00.0 -> ports 02:00.0/02:01.0 -> GPU 03:00.0, NVMe 04:00.0.
inline std::string small_lspci() {
  return hex_dump("00:00.0 Host bridge: AMD Root Complex", ConfigSpace(0x1022, 0x14a4, 0x060000, false).bytes(256)) +
         hex_dump("00:01.1 PCI bridge: AMD GPP Bridge", bridge(0, 1, 4, 4, 0x1d)) +
         hex_dump("01:00.0 PCI bridge: Broadcom PEX890xx", bridge(1, 2, 4, 5, 0)) +
         hex_dump("02:00.0 PCI bridge: Broadcom PEX890xx", bridge(2, 3, 3, 6, 0)) +
         hex_dump("02:01.0 PCI bridge: Broadcom PEX890xx", bridge(2, 4, 4, 6, 0)) +
         hex_dump("03:00.0 Processing accelerators: AMD MI300X",
                  ConfigSpace(0x1002, 0x74a1, 0x120000, false).pcie(0).bytes()) +
         "\tKernel driver in use: amdgpu\n" +
         hex_dump("04:00.0 Non-Volatile memory controller: Samsung",
                  ConfigSpace(0x144d, 0xa826, 0x010802, false).pcie(0).bytes()) +
         "\tKernel driver in use: nvme\n";
}

inline std::unique_ptr<Source> as_source(MemoryTree tree) {
  return open_memory_source(std::make_shared<const MemoryTree>(std::move(tree)), "import test");
}

inline std::string input_notes(Source& src) { return nlohmann::json(read_capture_info(src)->input_notes).dump(); }

}  // namespace p2pcheck::testing
