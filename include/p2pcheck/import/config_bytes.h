// Writing a config space image register by register, little-endian as the PCI bus stores it: the
// imports that rebuild config space from text (lspci -vvv) and plans, which state registers too.
#pragma once

#include <cstdint>
#include <string>

namespace p2pcheck {

inline void put8(std::string& c, unsigned at, unsigned v) { c[at] = static_cast<char>(v & 0xff); }
inline void put16(std::string& c, unsigned at, unsigned v) {
  put8(c, at, v);
  put8(c, at + 1, v >> 8);
}
inline void put32(std::string& c, unsigned at, std::uint32_t v) {
  put16(c, at, v & 0xffff);
  put16(c, at + 2, v >> 16);
}

}  // namespace p2pcheck
