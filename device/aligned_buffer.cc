#include "device/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>
#include <utility>

#include "device/sanitizers.h"

namespace pto::device {
namespace {

// Buffers of at least this many bytes are mapped from the system and unmapped when released:
// glibc serves allocations up to its dynamic mmap threshold (up to 32 MiB) from its heaps, and
// a freed block at the top of a thread's heap stays resident (malloc_trim trims only the main
// heap's top). Under the sanitizers every buffer stays on their heap, which checks its bounds.
constexpr size_t kMappedMinBytes = size_t{1} << 20;

#if PTO_UNDER_ASAN || PTO_UNDER_TSAN || PTO_UNDER_MSAN
constexpr bool kUnderSanitizer = true;
#else
constexpr bool kUnderSanitizer = false;
#endif

bool Mapped(size_t bytes) { return !kUnderSanitizer && bytes >= kMappedMinBytes; }

void* Allocate(size_t bytes) {
  if (Mapped(bytes)) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  return std::aligned_alloc(kBufferAlignment, bytes);
}

void Release(void* data, size_t bytes) {
  if (data == nullptr) return;
  if (Mapped(bytes)) {
    munmap(data, bytes);
  } else {
    std::free(data);
  }
}

}  // namespace

AlignedBuffer::~AlignedBuffer() { Release(data_, capacity_); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    Release(data_, capacity_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

bool AlignedBuffer::Reserve(size_t bytes) {
  if (bytes <= capacity_) return true;
  size_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (rounded < bytes) return false;
  void* p = Allocate(rounded);
  if (p == nullptr) return false;
  Release(data_, capacity_);
  data_ = p;
  capacity_ = rounded;
  return true;
}

}  // namespace pto::device
