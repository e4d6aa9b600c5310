// The archive reader (tar, compressed or not, with hard and symbolic links) and path resolution
// inside the loaded tree: every member is resolved, read, listed and its link followed.
#include "fuzz.h"
#include "p2pcheck/source/archive.h"

namespace {

void visit(p2pcheck::Source& source, const p2pcheck::MemoryTree& tree, const std::string& dir, int& budget) {
  for (const std::string& name : tree.children(dir)) {
    if (--budget < 0) return;
    std::string path = dir + "/" + name;
    (void)source.resolve(path);
    (void)source.link_target(path);
    (void)source.read(path);
    (void)source.list(path);
    visit(source, tree, path, budget);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    auto tree = std::make_shared<MemoryTree>(load_archive_bytes(fuzz::as_text(data, size), "fuzz.tar").tree);
    auto source = open_memory_source(tree, "archive fuzz.tar");
    int budget = 4096;  // what one input may cost: a capture has ~600 members
    visit(*source, *tree, "", budget);
  });
  return 0;
}
