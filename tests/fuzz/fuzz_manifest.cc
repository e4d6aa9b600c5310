// The capture manifest (manifest.json: schema, version, unreadable and uncaptured files) as a
// replay reads it, and the summary --json prints of it.
#include "fuzz.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/source/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    auto info = parse_capture_manifest(std::string(fuzz::as_text(data, size)), "manifest.json");
    if (!info) return;
    (void)json_text(capture_summary_json(*info));
    // What the replay then does with it: the failures answer reads in the captured tree.
    auto tree = std::make_shared<MemoryTree>();
    tree->add_dir("/sys");
    for (auto& [path, failure] : info->failures) tree->add_failure(path, failure);
    auto source = open_memory_source(tree, "capture");
    for (const auto& [path, failure] : info->failures) (void)source->read(path);
  });
  return 0;
}
