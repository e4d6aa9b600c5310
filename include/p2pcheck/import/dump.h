// --dump FILE: recognises what FILE is by its content (a capture or a tar of a Linux root, a
// directory, a sosreport, lspci/udev/hwloc text) and opens the matching source. It lives above the
// source backends and the imports because it chooses between them.
#pragma once

#include <memory>
#include <string>

#include "p2pcheck/import/import.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

std::unique_ptr<Source> open_dump_source(const std::string& file);
std::unique_ptr<Source> open_dump_source(const std::string& file, const ImportOptions& options);

}  // namespace p2pcheck
