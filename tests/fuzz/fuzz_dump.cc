// --dump FILE: content sniffing, every import, the archive reader and the analysis, on one input.
#include "fuzz.h"
#include "p2pcheck/import/dump.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    auto source = open_dump_bytes(std::string(fuzz::as_text(data, size)), "fuzz.dump", ImportOptions{});
    fuzz::analyse(*source);
  });
  return 0;
}
