// The kmod engine of `p2pcheck verify`: DMA_TEST of kmod/p2pprobe moves data between p2pmem of an
// NVMe CMB or a p2pprobe-bound device and the target. The module itself refuses (-EPERM) any other
// provider; choose_engine() refuses before asking.
#pragma once

#include <memory>

#include "p2pcheck/live/p2pprobe_client.h"
#include "p2pcheck/verify/verify_engine.h"

namespace p2pcheck {

// Uses the vfs path (vfs_iocb_iter_read/write with IOCB_DIRECT over a bvec of p2pmem pages), the
// one amdgpu's AIS path takes; the module checks the target was opened O_DIRECT / O_EXCL.
std::shared_ptr<VerifyEngine> make_kmod_engine(std::shared_ptr<P2pprobeClient> client);

}  // namespace p2pcheck
