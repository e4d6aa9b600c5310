#include "heap.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace p2pcheck::cli {
namespace {

// The VmFlags of the mapping of /proc/self/smaps that holds `address`; "" when none does.
std::string vm_flags_at(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-' && line.find(' ') != std::string::npos) {
      inside = from <= at && at < to;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

std::string transparent_huge_pages() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(file, text);
  return text;
}

TEST(Heap, TheHeapGrownForTheRunIsMarkedForHugePages) {
  const std::string thp = transparent_huge_pages();
  if (thp.empty() || thp.find("[never]") != std::string::npos)
    GTEST_SKIP() << "this kernel offers no transparent huge pages: " << (thp.empty() ? "no setting" : thp);
  // Only a malloc that ignores mallopt (a sanitizer's) refuses where the kernel takes the advice.
  if (!prefer_huge_pages_for_the_heap()) GTEST_SKIP() << "this malloc takes no options (sanitizer build?)";
  // A block asked for afterwards, below the mmap threshold and too large for the free chunks the
  // test process had, comes from the grown heap; past its first huge page it is marked ("hg").
  void* block = std::malloc(6 << 20);
  ASSERT_NE(block, nullptr);
  const std::string flags = vm_flags_at(static_cast<char*>(block) + (3 << 20));
  std::free(block);
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
}

}  // namespace
}  // namespace p2pcheck::cli
