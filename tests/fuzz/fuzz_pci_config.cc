// Config space and its capability lists (PCIe, ACS, Resizable BAR, SR-IOV) as PciDecoder reads
// them with libpci, and the text the reports make of the result.
#include "fuzz.h"
#include "p2pcheck/model/pci.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace p2pcheck;
  static const PciDecoder decoder;
  fuzz::rejecting_bad_input([&] {
    Function fn;
    decoder.decode_config(fn, std::string(fuzz::as_text(data, size)));
    (void)pci_device_name(fn.vendor, fn.device);
    (void)link_text(fn.link);
    (void)acs_text(fn.acs);
    (void)fn.largest_mem_bar();
    for (const auto& rebar : fn.rebar) (void)format_size(rebar.current_size);
  });
  return 0;
}
