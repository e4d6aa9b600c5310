// hwloc XML's NUMA nodesets and NVMe OS device names, parsed by hand (bounded, no std::regex).
#include "hwloc_facts.h"

#include <vector>

#include "p2pcheck/source/sysfs_text.h"

namespace p2pcheck {
namespace {

// A word is 32 bits, so the nodes below kMaxHwlocNumaNodes fill this many words.
constexpr std::size_t kMaxWords = kMaxHwlocNumaNodes / 32;

// "<digits>" at the front of `rest`, taken off it; nullopt when there is none or too many to be a
// kernel instance number.
std::optional<std::string_view> take_digits(std::string_view& rest) {
  std::size_t n = 0;
  while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
  if (n == 0 || n > 9) return std::nullopt;
  std::string_view digits = rest.substr(0, n);
  rest.remove_prefix(n);
  return digits;
}

}  // namespace

std::optional<std::set<int>> parse_hwloc_nodeset(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::size_t at = 0;;) {
    std::size_t comma = text.find(',', at);
    words.push_back(text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
    if (words.size() > kMaxWords) return std::nullopt;
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  std::set<int> nodes;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    if (word.empty()) continue;  // a word of zeros
    // "0xf...f" opens an infinite set: no machine has that many nodes.
    if (word.substr(0, 2) != "0x" || word.size() > 10 || !is_hex_digits(word.substr(2))) return std::nullopt;
    auto bits = parse_hex(word.substr(2));
    if (!bits) return std::nullopt;
    const int base = static_cast<int>(words.size() - 1 - i) * 32;
    for (int bit = 0; bit < 32; ++bit)
      if (*bits >> bit & 1) nodes.insert(base + bit);
  }
  return nodes;
}

std::string node_list_text(const std::set<int>& nodes) {
  std::string out;
  for (auto it = nodes.begin(); it != nodes.end();) {
    int first = *it, last = *it;
    while (++it != nodes.end() && *it == last + 1) last = *it;
    out += (out.empty() ? "" : ",") + std::to_string(first) + (last > first ? "-" + std::to_string(last) : "");
  }
  return out;
}

// The NVMe driver names its block devices (drivers/nvme/host/core.c, nvme_alloc_ns):
//   nvme<subsystem>c<controller>n<ns>  a path through one controller to a multipath head: hidden,
//                                      below that controller, and only with native multipath on;
//   nvme<subsystem>n<ns>               with CONFIG_NVME_MULTIPATH, a namespace without a head;
//   nvme<controller>n<ns>              without it.
// A subsystem takes the number of its first controller (nvme_init_subsystem), so a namespace
// hwloc puts below a PCI function carries that function's controller number, unless its subsystem
// was first reached through another controller: then the name says nothing of this one (`exact`).
std::optional<HwlocNvmeDevice> hwloc_nvme_device(std::string_view name) {
  if (name.substr(0, 4) != "nvme") return std::nullopt;
  std::string_view rest = name.substr(4);
  auto first = take_digits(rest);
  if (!first) return std::nullopt;
  HwlocNvmeDevice dev;
  if (rest.empty()) {
    dev.controller = std::string(name);
    dev.exact = true;
    return dev;
  }
  std::string_view controller = *first;
  if (rest.front() == 'c') {
    rest.remove_prefix(1);
    auto path_controller = take_digits(rest);
    if (!path_controller) return std::nullopt;
    controller = *path_controller;
    dev.path_node = dev.exact = true;
  }
  if (rest.empty() || rest.front() != 'n') return std::nullopt;
  rest.remove_prefix(1);
  if (!take_digits(rest) || !rest.empty()) return std::nullopt;  // a partition or something else
  dev.controller = "nvme" + std::string(controller);
  dev.block = std::string(name);
  return dev;
}

}  // namespace p2pcheck
