// What the watch layer's files share and nothing outside needs: words for paths and sizes, and the
// findings and result of a report whose rows are built (watch_findings.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "p2pcheck/watch/watch_report.h"

namespace p2pcheck::watch_detail {

bool is_p2p(WatchPath path);
// The map type the kernel decided, as the rules name it: bus_addr -> BUS_ADDR, refused -> NOT_SUPPORTED.
MapType observed_map_type(WatchPath path);
// "p2p bus address", "p2p via host bridge", "refused", "refused by storage stack", "host".
const char* path_words(WatchPath path);
// "by bus address", "through the host bridge": how P2P bytes moved, in a sentence.
const char* p2p_how(WatchPath path);
// "12.0 MiB"; "8192 bytes" below a tenth of a MiB
std::string mib(std::uint64_t bytes);
// "0000:03:00.0 -> nvme1 (0000:04:00.0)": as the kernel named them (hostile; printable() to show).
std::string pair_label(const WatchPair& pair);
// "EREMOTEIO", "blk_status 20" when this kernel's table does not name the status.
std::string refusal_errno_text(const WatchRefusal& refusal);
// The programs counting needs on this decision hook (watch.bpf.c's names), block tracepoints first.
std::vector<std::string> needed_programs(DecisionHook decision);
const WatchHook* find_hook(const WatchHookPlan& plan, const std::string& program);

// Every finding of a report whose rows and cannot_watch are filled, in a fixed order.
std::vector<Finding> watch_findings(const WatchReport& report);
// UNKNOWN if it could not watch; else FAIL on a FAIL finding; else NO P2P without P2P bytes; else P2P SEEN.
WatchResult judge_watch(const WatchReport& report);

}  // namespace p2pcheck::watch_detail
