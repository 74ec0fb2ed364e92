#include "device/aligned_buffer.h"

#include <cstdlib>
#include <new>
#include <utility>

namespace pto::device {

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

bool AlignedBuffer::Reserve(size_t bytes) {
  if (bytes <= capacity_) return true;
  size_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (rounded < bytes) return false;
  void* p = std::aligned_alloc(kBufferAlignment, rounded);
  if (p == nullptr) return false;
  std::free(data_);
  data_ = p;
  capacity_ = rounded;
  return true;
}

}  // namespace pto::device
