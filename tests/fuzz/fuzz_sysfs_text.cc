// The small parsers every reader applies to sysfs and procfs text: numbers, BDFs, NVMe names, link
// speeds, kernel releases, the kernel command line, capture times.
#include "fuzz.h"
#include "p2pcheck/model/capture_format.h"
#include "p2pcheck/model/machine.h"
#include "p2pcheck/model/pci.h"
#include "p2pcheck/source/sysfs_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  std::string text(fuzz::as_text(data, size));
  fuzz::rejecting_bad_input([&] {
    (void)parse_hex(text);
    (void)parse_dec(text);
    if (auto bdf = Bdf::parse(text)) (void)bdf->str();
    (void)Bdf::shaped(text);
    (void)parse_nvme_name(text);
    if (auto gts = parse_link_speed(text)) {
      (void)format_speed(*gts);
      (void)lane_bytes_per_second(*gts);
    }
    if (auto v = parse_kernel_version(text)) (void)v->str();
    (void)parse_cmdline(text);
    (void)parse_iso_time(text);
    (void)basename(text);
    for (const std::string& line : split_lines(text)) (void)split_words(line);
  });
  return 0;
}
