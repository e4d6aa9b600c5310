// What the machine said while `p2pcheck verify` moved data: the AER error counters of every device
// on the path (read through the Source before and after) and the kernel's messages (/dev/kmsg,
// through KernelLog). A transfer that "passed" while a switch logged correctable errors, or that
// failed while nvme reset the controller, means something different from a clean one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/model/topology.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

// aer_dev_correctable, aer_dev_fatal, aer_dev_nonfatal: "<Name> <count>" lines per device.
inline constexpr const char* kAerFiles[] = {"aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal"};

struct AerSnapshot {
  // bdf -> "aer_dev_correctable:RxErr" -> count
  std::map<Bdf, std::map<std::string, std::uint64_t>> counts;
  std::vector<Bdf> not_reported;        // no aer_dev_* files: no AER capability, or AER not in the kernel
  std::vector<std::string> unreadable;  // "0000:00:01.1 aer_dev_fatal: permission denied"
};
AerSnapshot read_aer(Source& source, const std::vector<Bdf>& devices);

struct AerChange {
  Bdf bdf;
  std::string counter;  // "aer_dev_correctable:BadTLP"
  std::uint64_t before = 0, after = 0;
};
// Counters that moved (TOTAL_ lines included: they are what most people look at).
std::vector<AerChange> aer_changes(const AerSnapshot& before, const AerSnapshot& after);

// nvme_core's io_timeout in seconds (/sys/module/nvme_core/parameters/io_timeout; 30 by default):
// how long a command the root complex dropped takes to fail, usually with a controller reset.
std::optional<int> nvme_io_timeout(Source& source);

}  // namespace p2pcheck
