// `p2pcheck watch` running: the probe around a command or for a while, or a recording replayed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "options.h"

namespace p2pcheck::cli {

struct WatchOptions {
  double interval_s = 1;
  std::optional<double> duration_s;
  std::optional<std::uint32_t> pid;
  std::string comm;
  bool all = false;  // every process on the machine, not only the command's tree
  bool json_lines = false;
  std::string record, replay;
  bool hooks = false;
  std::string btf, save_btf;
  std::vector<std::string> command;
};

int run_watch(const GlobalOptions& o, const WatchOptions& w);

}  // namespace p2pcheck::cli
