// What a capture recorded live (live/kmod.json: the p2pprobe module's verdicts; live/verify.json:
// the last verify run) on a real machine's capture: the first byte picks the file, the rest is
// it; read by the recorded checks during the analysis.
#include "fuzz.h"
#include "p2pcheck/checks/recorded.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)p2pcheck::fuzz::base_machine();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  if (size == 0) return 0;
  const char* path = data[0] & 1 ? kRecordedVerifyPath : kRecordedKmodPath;
  fuzz::rejecting_bad_input([&] { fuzz::analyse_base_with({{path, std::string(fuzz::as_text(data + 1, size - 1))}}); });
  return 0;
}
