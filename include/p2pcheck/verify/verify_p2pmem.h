// The p2pmem engine of `p2pcheck verify` (kernel 6.2+): maps P2P memory of a provider into this
// process through /sys/bus/pci/devices/<provider>/p2pmem/allocate (mmap only, MAP_SHARED, offset 0)
// and moves it with O_DIRECT pread/pwrite, which DMA straight into those pages when the target's
// queue supports P2PDMA (facts §3). Only for NVMe CMBs and p2pprobe-bound devices: choose_engine()
// refuses anything a GPU driver owns.
#pragma once

#include <memory>
#include <string>

#include "p2pcheck/verify/verify_engine.h"
#include "p2pcheck/verify/verify_io.h"

namespace p2pcheck {

// `devices_dir` holds <BDF>/p2pmem/allocate; tests point it at a directory of plain files. The engine
// shares `io` because a transfer abandoned at the deadline may still be using it.
std::shared_ptr<VerifyEngine> make_p2pmem_engine(std::shared_ptr<VerifyIo> io,
                                                 std::string devices_dir = "/sys/bus/pci/devices");

}  // namespace p2pcheck
