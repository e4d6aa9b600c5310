// The KFD topology (/sys/class/kfd/kfd/topology/nodes/*/properties, mem_banks, io_links) of a real
// machine with amdgpu loaded: node 1's properties, its memory bank's and its io link's are the
// input's three NUL-separated parts (node 0 is a CPU node). read_kfd, then the analysis.
#include "fuzz.h"
#include "p2pcheck/checks/gpu.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)p2pcheck::fuzz::base_machine();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  std::vector<std::string> parts = fuzz::split_input(fuzz::as_text(data, size), 3);
  const std::string nodes = "/sys/class/kfd/kfd/topology/nodes";
  const MemoryTree::Node* modules = fuzz::base_machine().tree.find("/proc/modules");
  std::map<std::string, std::string> files = {
      {nodes + "/0/properties", "cpu_cores_count 4\nsimd_count 0\nmem_banks_count 1\nlocation_id 0\ndomain 0\n"},
      {nodes + "/0/mem_banks/0/properties", "heap_type 0\nsize_in_bytes 8589934592\n"},
      {nodes + "/1/properties", parts[0]},
      {nodes + "/1/mem_banks/0/properties", parts[1]},
      {nodes + "/1/io_links/0/properties", parts[2]},
      {"/proc/modules", (modules ? modules->data : "") + "amdgpu 16384 0 - Live 0x0000000000000000\n"},
  };
  fuzz::rejecting_bad_input([&] {
    auto tree = std::make_shared<MemoryTree>(fuzz::base_machine().tree);
    for (const auto& [path, bytes] : files) tree->add_file(path, bytes);
    auto source = open_memory_source(tree, "fuzz input");
    (void)read_kfd(*source);
  });
  fuzz::rejecting_bad_input([&] { fuzz::analyse_base_with(files); });
  return 0;
}
