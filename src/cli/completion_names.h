// What the bash completion offers after --gpu, --nvme and explain's words when the line names an
// input it cannot list itself (--dump FILE, --plan FILE): that input's devices, as p2pcheck reads it.
#pragma once

#include <string>

#include "options.h"

namespace p2pcheck::cli {

// One candidate per line. kind "gpu": a plan's GPU names, then the GPUs' addresses (every
// function's when the input has no GPU, as any may stand in); kind "nvme": a plan's NVMe names,
// controllers, namespaces and the NVMe functions' addresses. Any other kind is a UsageError.
std::string completion_names(const GlobalOptions& o, const std::string& kind);

}  // namespace p2pcheck::cli
