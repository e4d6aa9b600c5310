// A kernel's BTF (`watch --hooks --btf FILE`, a capture's sys/kernel/btf/vmlinux) as the hook
// selection reads it, and the subset `watch --save-btf` writes of it, read again.
#include "fuzz.h"
#include "p2pcheck/live/watch_probe.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    const std::string bytes(fuzz::as_text(data, size));
    (void)select_watch_hooks(*parse_btf(bytes, "vmlinux"));
    const std::string subset = watch_btf_subset(bytes, "vmlinux");
    (void)select_watch_hooks(*parse_btf(subset, "subset"));
  });
  return 0;
}
