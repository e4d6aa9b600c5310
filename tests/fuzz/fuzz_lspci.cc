// The lspci import: `lspci -xxxx` output, `lspci -tv` beside it and a cpuinfo file (a bundle
// directory's three files, NUL-separated in one input), then the analysis of what it made.
#include "fuzz.h"
#include "p2pcheck/import/import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  std::vector<std::string> parts = fuzz::split_input(fuzz::as_text(data, size), 3);
  fuzz::rejecting_bad_input([&] {
    const std::string* tree = parts[1].empty() ? nullptr : &parts[1];
    MemoryTree made = import_lspci(parts[0], tree, parts[2], "lspci.txt", ImportOptions{});
    auto source = open_memory_source(std::make_shared<const MemoryTree>(std::move(made)), "lspci dump");
    fuzz::analyse(*source);
  });
  return 0;
}
