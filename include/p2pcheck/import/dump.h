// --dump FILE: recognises what FILE is by its content (a capture or a tar of a Linux root, a
// directory, a sosreport, lspci/udev/hwloc text) and opens the matching source. It lives above the
// source backends and the imports because it chooses between them.
#pragma once

#include <memory>
#include <string>

#include "p2pcheck/import/import.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/source.h"

namespace p2pcheck {

std::unique_ptr<Source> open_dump_source(const std::string& file);
std::unique_ptr<Source> open_dump_source(const std::string& file, const ImportOptions& options);
// A dump with what it says about itself: `info` is what read_capture_info(*source) answers, but a
// capture's manifest (a megabyte of JSON for a big machine) is parsed once, while opening it. Its
// `failures` are in the source only (set_recorded_failures), not in `info`.
struct OpenedDump {
  std::unique_ptr<Source> source;
  std::optional<CaptureInfo> info;
};
OpenedDump open_dump(const std::string& file, const ImportOptions& options);
// A dump file's bytes already in memory (what open_dump_source reads from a file that is no
// directory), recognised the same way; `name` stands for the file in messages.
// Whether a file whose first bytes are `head` (16 KiB is enough) is a machine's dump by its content:
// an archive (compressed or tar), or lspci, udev or hwloc text. A cpuinfo or lspci -t file alone is
// part of a bundle, not a machine; a README is nothing. For fleet, which counts machines.
bool looks_like_dump(const std::string& head);
std::unique_ptr<Source> open_dump_bytes(const std::string& bytes, const std::string& name,
                                        const ImportOptions& options);

}  // namespace p2pcheck
