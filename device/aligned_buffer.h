// 64-byte aligned, uninitialized float storage that grows but never shrinks: the memory behind
// plans' intermediate buffers and allocated outputs. A buffer of 1 MiB or more is mapped from
// the system and unmapped when released, so its pages leave the resident set with it.
#ifndef PTO_DEVICE_ALIGNED_BUFFER_H_
#define PTO_DEVICE_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdint>

namespace pto::device {

inline constexpr size_t kBufferAlignment = 64;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) { Reserve(bytes); }
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  // Ensures capacity() >= bytes; contents are not preserved when it grows.
  // Returns false (leaving the buffer unchanged) when the allocation fails.
  bool Reserve(size_t bytes);
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace pto::device

#endif  // PTO_DEVICE_ALIGNED_BUFFER_H_
