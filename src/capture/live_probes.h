// What only the live machine can tell, asked at capture time and stored as /live/*.json: NVMe
// Identify and CMB registers, the HIP runtime and hipFile, the p2pprobe module's verdicts, and the
// results verify left behind.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/live/device_actions.h"

namespace p2pcheck {

// One JSON document per file ("/live/nvme.json" -> text) into `files`; what could not be asked
// into `notes`; NVMe serial numbers into `serials` (for --redact). The kernel module is asked about
// every pair in `analysed`.
void live_probes(DeviceActions& actions, const CheckInputs& analysed, std::map<std::string, std::string>& files,
                 std::vector<std::string>& notes, std::vector<std::string>& serials);

}  // namespace p2pcheck
