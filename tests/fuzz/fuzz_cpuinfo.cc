// /proc/cpuinfo (vendor, family, the hypervisor flag) on a real machine, then the analysis.
#include "fuzz.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)p2pcheck::fuzz::base_machine();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  fuzz::rejecting_bad_input([&] {
    fuzz::analyse_base_with({{"/proc/cpuinfo", std::string(fuzz::as_text(data, size))}});
  });
  return 0;
}
