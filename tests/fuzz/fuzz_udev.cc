// The udev import (`udevadm info --export-db`), then the analysis of what it made.
#include "fuzz.h"
#include "p2pcheck/import/import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    MemoryTree made = import_udev(std::string(fuzz::as_text(data, size)), "udev.txt", ImportOptions{});
    auto source = open_memory_source(std::make_shared<const MemoryTree>(std::move(made)), "udev database");
    fuzz::analyse(*source);
  });
  return 0;
}
