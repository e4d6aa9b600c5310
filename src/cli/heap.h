// How the p2pcheck process asks for memory: set once, first thing in main.
#pragma once

namespace p2pcheck::cli {

// Backs the main heap with transparent huge pages where the kernel offers them ("madvise" or
// "always" in /sys/kernel/mm/transparent_hugepage/enabled), as glibc.malloc.hugetlb=1 would.
// Changes no result. False when nothing was marked: a malloc that takes no such options (a
// sanitizer's), or a kernel that refuses the advice (no transparent huge pages); the heap then
// faults in 4 KiB pages, as before.
bool prefer_huge_pages_for_the_heap();

}  // namespace p2pcheck::cli
