// `p2pcheck watch`'s text: the summary (header, one table row per pair, path and direction, the
// findings, the RESULT line) and the live interval lines. Every name from the kernel or a recording
// (comm, disk, device names, hook errors) is shown through printable(). Like every command's text
// it is written in UTF-8; the CLI spells it in ASCII for --ascii (report/common.h ascii_text).
#pragma once

#include <string>

#include "p2pcheck/report/common.h"
#include "p2pcheck/watch/watch_report.h"

namespace p2pcheck {

// "p2pcheck watch — kernel 6.12.118; hooks: fexit pci_p2pdma_map_segment, ..." and a newline.
std::string watch_header(const WatchReport& report);

// The whole summary: header, the source and time watched, the table, the findings (problems first,
// INFO too), then the RESULT line.
std::string watch_text(const WatchReport& report, const TextStyle& style);

// "RESULT: P2P SEEN — 0000:03:00.0 -> nvme1: 9744.0 MiB by bus address, as predicted" and a newline.
std::string watch_result_line(const WatchReport& report, const TextStyle& style);

// The column titles of the interval lines, and a newline.
std::string watch_interval_header();
// One line per pair, path and direction that moved in the interval: `report` is
// build_watch_report() of watch_delta(previous, current); `time` labels the lines ("14:02:11").
// Rates are per second of report.seconds. Empty when nothing moved.
std::string watch_interval_text(const WatchReport& report, const std::string& time);

}  // namespace p2pcheck
