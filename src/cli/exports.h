// `check --prometheus FILE` and `check --nfd FILE`: the check's result also written as a
// node_exporter textfile (*.prom) and as a node-feature-discovery local source file, each whole or
// not at all (a temporary file beside it, renamed: output_file.h).
#pragma once

#include <cstddef>
#include <string>

#include "options.h"

namespace p2pcheck::cli {

struct ExportOptions {
  std::string prometheus, nfd, baseline;
  std::size_t max_pair_series = 1024;
  long long nfd_expiry_seconds = 3 * 3600;
};

void add_export_options(CLI::App& check, ExportOptions& e);
bool exports_asked(const ExportOptions& e);
// UsageError for a file name the reader would skip, or --baseline without --prometheus: before the check runs.
void check_export_options(const ExportOptions& e);
// Writes what was asked (check_export_options() has passed them). Throws Error naming the file when it cannot be
// written (or the baseline read).
void write_exports(const ExportOptions& e, const CheckReport& report, const Input& input, const GlobalOptions& o);

}  // namespace p2pcheck::cli
