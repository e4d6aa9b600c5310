// The lspci sections of an older nvidia-bug-report.sh: `lspci -d "10de:*" -v -xxx` and `lspci -d
// "10b5:*" -v -xxx` (config space of NVIDIA and PLX functions only), `lspci -t` and `lspci -nn`
// (every function, without config space).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p2pcheck/import/sysfs_builder.h"

namespace p2pcheck {

// A section's text and the line of the report its first line is, for messages.
struct ReportText {
  std::string_view body;
  int first_line = 1;
};

struct PartialLspci {
  std::vector<ReportText> dumps;      // the -d sections, each possibly empty
  std::optional<ReportText> listing;  // lspci -nn
  std::optional<ReportText> tree;     // lspci -t
};

// What the sections gave, for the notes and for a refusal.
struct PartialSummary {
  std::size_t functions = 0, with_config = 0, gpus = 0, nvmes = 0, nvmes_without_config = 0;
  std::size_t with_bar_sizes = 0;  // dumped functions whose -v lines give their BAR sizes
};

// Every function the -nn listing names (else those dumped) added to `builder` below its upstream
// bridge from the -t drawing (else from dumped bridges' bus numbers), with config space where a -d
// section dumped it and none ("not in this nvidia-bug-report") elsewhere. A function that cannot be
// placed, or whose bridge was left out, is left out with a note; notes say what the report lacks.
PartialSummary add_partial_lspci(SysfsBuilder& builder, const PartialLspci& sections, const std::string& name);

}  // namespace p2pcheck
