// The sosreport import: the input is the report as a tar (its top folder is the report's root),
// read by the archive reader, imported, then analysed.
#include "fuzz.h"
#include "p2pcheck/import/import.h"
#include "p2pcheck/source/archive.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    MemoryTree files = load_archive_bytes(fuzz::as_text(data, size), "sosreport.tar").tree;
    auto top = files.children("/");
    MemoryTree sos =
        top.size() == 1 && files.find("/" + top[0] + "/sos_commands") ? files.subtree("/" + top[0]) : std::move(files);
    MemoryTree made = import_sosreport(sos, "sosreport.tar", ImportOptions{});
    auto source = open_memory_source(std::make_shared<const MemoryTree>(std::move(made)), "sosreport");
    fuzz::analyse(*source);
  });
  return 0;
}
