#include "heap.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>

namespace p2pcheck::cli {

// A large check touches tens of megabytes of heap once (the fabric's check 14 MB, its replay 33 MB),
// one 4 KiB page fault at a time; on a virtual machine each fault costs microseconds (the fabric's
// replay: 8,200 faults, half its CPU time). The heap is grown in one large step, marked for huge pages, and kept
// (no trimming that would give back the marked range): it then faults in 2 MiB at a time. The
// tunable glibc.malloc.hugetlb=1 does this inside malloc, but tunables are read only at exec.
bool prefer_huge_pages_for_the_heap() {
  constexpr int kStep = 64 << 20;  // address space, not memory: only touched pages become resident
  constexpr std::uintptr_t kHugePage = 2 << 20;
  if (!mallopt(M_TOP_PAD, kStep) || !mallopt(M_TRIM_THRESHOLD, 2 * kStep) || !mallopt(M_MMAP_THRESHOLD, kStep / 4))
    return false;
  void* probe = std::malloc(kStep / 8);  // more than the heap has free: it grows, by the pad beyond
  auto from = (reinterpret_cast<std::uintptr_t>(probe) + kHugePage - 1) & ~(kHugePage - 1);
  auto to = reinterpret_cast<std::uintptr_t>(sbrk(0)) & ~(kHugePage - 1);
  bool marked = probe && to > from && madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0;
  std::free(probe);
  return marked;
}

}  // namespace p2pcheck::cli
