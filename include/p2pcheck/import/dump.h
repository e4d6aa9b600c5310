// --dump FILE: opens what FILE is by its content (a capture or a tar of a Linux root, a directory, a
// sosreport, lspci/udev/hwloc text) as the matching source, its kind told once from its head by
// identify_input() (input_kind.h). It lives above the source backends and the imports because it
// chooses between them; a plan is opened by the door above both (input/input.h).
#pragma once

#include <memory>
#include <string>

#include "p2pcheck/import/import.h"
#include "p2pcheck/import/input_kind.h"
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
// The same for an input identify_input() has already looked at: its head is not read again.
OpenedDump open_dump(const std::string& file, const IdentifiedInput& identified, const ImportOptions& options);
// Only the plan door (open_plan) makes a plan's manifest: a dump or tree whose own manifest.json
// says format "plan" would take a plan's title and summary, so it is refused naming `file`.
void refuse_plan_manifest(const std::optional<CaptureInfo>& info, const std::string& file);
// A dump file's bytes already in memory (what open_dump_source reads from a file that is no
// directory), recognised the same way; `name` stands for the file in messages.
std::unique_ptr<Source> open_dump_bytes(const std::string& bytes, const std::string& name,
                                        const ImportOptions& options);

}  // namespace p2pcheck
