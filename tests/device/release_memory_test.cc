// ReleaseFreedHeapMemory: heap pages freed by many small allocations (below the size glibc
// serves with mmap, so free() keeps them) leave the resident set when it runs.
#include "device/release_memory.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device/sanitizers.h"
#include "gtest/gtest.h"

namespace pto::device {
namespace {

int64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::strtoll(line + 6, nullptr, 10);
  }
  std::fclose(f);
  return kib * 1024;
}

TEST(ReleaseMemory, FreedHeapPagesLeaveTheResidentSet) {
  constexpr int64_t kBlock = 16 << 10;  // well below glibc's mmap threshold (128 KiB)
  constexpr int kBlocks = 4096;         // 64 MiB
  std::vector<char*> blocks;
  for (int i = 0; i < kBlocks; ++i) {
    blocks.push_back(static_cast<char*>(std::malloc(kBlock)));
    std::memset(blocks.back(), 1, kBlock);  // resident
  }
  // Free all but the last: the heap's top stays in use, so only trimming inside the heap
  // (madvise of free pages) can give the pages back.
  for (int i = 0; i + 1 < kBlocks; ++i) std::free(blocks[i]);
  const int64_t before = ResidentBytes();
  const bool released = ReleaseFreedHeapMemory();
  const int64_t after = ResidentBytes();
  std::free(blocks.back());
#if defined(__GLIBC__) && !PTO_UNDER_ASAN && !PTO_UNDER_TSAN && !PTO_UNDER_MSAN
  EXPECT_TRUE(released);
  EXPECT_GE(before - after, 48 << 20) << before << " -> " << after;
#else
  // The sanitizer's allocator serves malloc: nothing of glibc's heap to release.
  EXPECT_FALSE(released);
  EXPECT_GE(before, 0);
  EXPECT_GE(after, 0);
#endif
}

}  // namespace
}  // namespace pto::device
