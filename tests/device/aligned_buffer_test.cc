// AlignedBuffer: 64-byte aligned storage that grows; a large buffer's pages go back to the
// system when it is released, wherever glibc's heaps would have kept them.
#include "device/aligned_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "device/sanitizers.h"
#include "gtest/gtest.h"

namespace pto::device {
namespace {

TEST(AlignedBuffer, GrowsAlignedAndMovesItsStorage) {
  for (size_t bytes : {size_t{1}, size_t{100}, size_t{4096}, size_t{3} << 20}) {
    AlignedBuffer buffer;
    ASSERT_TRUE(buffer.Reserve(bytes));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kBufferAlignment, 0u) << bytes;
    EXPECT_GE(buffer.capacity(), bytes);
    std::memset(buffer.data(), 7, bytes);
    void* const data = buffer.data();
    EXPECT_TRUE(buffer.Reserve(bytes / 2));  // no shrink, no move
    EXPECT_EQ(buffer.data(), data);
    AlignedBuffer moved = std::move(buffer);
    EXPECT_EQ(moved.data(), data);
    EXPECT_EQ(buffer.data(), nullptr);
    EXPECT_EQ(buffer.capacity(), 0u);
    EXPECT_EQ(static_cast<const char*>(moved.data())[bytes - 1], 7);
  }
  AlignedBuffer absurd;
  EXPECT_FALSE(absurd.Reserve(~size_t{0} - 8));  // rounds past the largest size
  EXPECT_EQ(absurd.data(), nullptr);
}

// A large buffer is mapped from the system and unmapped when released: glibc would serve a
// block of this size from a heap once a larger one has been freed (its mmap threshold rises),
// and keep it resident at a thread heap's top after free. Here a 16 MiB block is freed first,
// then an 8 MiB buffer's pages are gone from the address space once it is released.
TEST(AlignedBuffer, ALargeBufferIsUnmappedWhenReleased) {
#if PTO_UNDER_ASAN || PTO_UNDER_TSAN || PTO_UNDER_MSAN
  GTEST_SKIP() << "under the sanitizers buffers stay on their heap, which checks their bounds";
#endif
  void* raise = std::malloc(size_t{16} << 20);
  ASSERT_NE(raise, nullptr);
  std::memset(raise, 1, 4096);
  std::free(raise);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t first_page = 0;
  {
    AlignedBuffer buffer;
    ASSERT_TRUE(buffer.Reserve(size_t{8} << 20));
    std::memset(buffer.data(), 1, size_t{8} << 20);
    first_page = reinterpret_cast<uintptr_t>(buffer.data()) / page * page;
    unsigned char resident = 0;
    ASSERT_EQ(::mincore(reinterpret_cast<void*>(first_page), page, &resident), 0);
    EXPECT_EQ(resident & 1, 1);
  }
  unsigned char resident = 0;
  errno = 0;
  EXPECT_EQ(::mincore(reinterpret_cast<void*>(first_page), page, &resident), -1)
      << "the released buffer's first page is still mapped";
  EXPECT_EQ(errno, ENOMEM);
}

}  // namespace
}  // namespace pto::device
