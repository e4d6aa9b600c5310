// The kernel configuration as /boot/config-RELEASE (read before /proc/config.gz) on a real
// machine, then the analysis.
#include "fuzz.h"
#include "p2pcheck/source/sysfs_text.h"

namespace {

std::string boot_config() {
  const auto* release = p2pcheck::fuzz::base_machine().tree.find("/proc/sys/kernel/osrelease");
  return "/boot/config-" + std::string(p2pcheck::trim(release ? release->data : ""));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)p2pcheck::fuzz::base_machine();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  static const std::string path = boot_config();
  fuzz::rejecting_bad_input([&] { fuzz::analyse_base_with({{path, std::string(fuzz::as_text(data, size))}}); });
  return 0;
}
