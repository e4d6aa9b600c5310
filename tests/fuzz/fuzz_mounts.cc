// The mount table: /proc/mounts NUL /proc/self/mountinfo (the storage stack below each NVMe, and
// the device numbers of mounts whose device name does not say) on a real machine, then the
// analysis and `mounts`, text and JSON, with every file system on NVMe as a target.
#include "fuzz.h"
#include "p2pcheck/checks/check.h"
#include "p2pcheck/report/mounts.h"
#include "p2pcheck/source/json_text.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)p2pcheck::fuzz::base_machine();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    std::vector<std::string> files = fuzz::split_input(fuzz::as_text(data, size), 2);
    std::map<std::string, std::string> replaced{{"/proc/mounts", files[0]}};
    if (!files[1].empty()) replaced["/proc/self/mountinfo"] = files[1];
    fuzz::analyse_base_with(replaced);
    auto tree = std::make_shared<MemoryTree>(fuzz::base_machine().tree);
    for (const auto& [path, bytes] : replaced) tree->add_file(path, bytes);
    auto source = open_memory_source(tree, "fuzz input");
    CheckOptions options;
    options.selection = fuzz::base_machine().selection;
    options.mounted_targets = true;  // as `mounts` on a replay: the recorded NVMe side dropped
    options.selection.nvme.clear();
    auto report = run_check(*source, options);
    MountsView view = mounts_view(*report);
    (void)mounts_text(*report, view, TextStyle{}, true);
    (void)json_text(mounts_json(*report, view));
  });
  return 0;
}
