// Tensor views over caller-owned memory, and owned tensors for the allocating call variant.
#ifndef PTO_TENSOR_H_
#define PTO_TENSOR_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>

namespace pto {

// Element types; kF32 and kI32 compile today (the others are rejected with Unimplemented).
enum class DType : uint8_t { kF32 = 0, kF16 = 1, kBF16 = 2, kI8 = 3, kI32 = 4 };
const char* DTypeName(DType dtype);

inline constexpr int kMaxRank = 8;

// A view of caller memory: no ownership, no allocation (a fixed-size struct, so building one on
// the hot path allocates nothing). Strides are in elements. pto requires dense row-major
// layouts (strides of size-1 dims are ignored); anything else is reported as InvalidArgument.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kF32;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};

  // A dense row-major f32 view. A rank above kMaxRank yields rank = -1, rejected at the call.
  static TensorView Dense(const float* data, std::span<const int64_t> shape);
  static TensorView Dense(const float* data, std::initializer_list<int64_t> shape) {
    return Dense(data, std::span<const int64_t>(shape.begin(), shape.size()));
  }
  // The same over int32 data (dtype kI32): class labels, indices.
  static TensorView Dense(const int32_t* data, std::span<const int64_t> shape);
  static TensorView Dense(const int32_t* data, std::initializer_list<int64_t> shape) {
    return Dense(data, std::span<const int64_t>(shape.begin(), shape.size()));
  }
  std::span<const int64_t> dims() const {
    return {shape, static_cast<size_t>(rank < 0 ? 0 : rank)};
  }
  // Element count; -1 when it overflows int64.
  int64_t num_elements() const;
  std::string ShapeString() const;
};

// Bytes per element of `dtype`.
int DTypeSize(DType dtype);

// An owned, 64-byte aligned, dense tensor (returned by Function's allocating call, each output
// in its dtype), or one borrowing a caller's memory (Borrow: an output written in place of an
// input).
class Tensor {
 public:
  // The most elements Allocate gives one tensor (4 TiB of f32 or i32).
  static constexpr int64_t kMaxElements = int64_t{1} << 40;

  Tensor() = default;
  // Uninitialized storage for `shape` of `dtype`; an empty Tensor when the rank is above
  // kMaxRank, the size above kMaxElements, or the allocator refuses.
  static Tensor Allocate(std::span<const int64_t> shape, DType dtype = DType::kF32);
  // A Tensor over `view`'s memory that does not own it: the memory must outlive the Tensor
  // (the allocating call's outputs written in place of an input).
  static Tensor Borrow(const TensorView& view);
  const TensorView& view() const { return view_; }
  DType dtype() const { return view_.dtype; }
  // The elements of an f32 tensor (data()) or an i32 one (i32_data()); null for another dtype.
  float* data() const {
    return view_.dtype == DType::kF32 ? static_cast<float*>(view_.data) : nullptr;
  }
  int32_t* i32_data() const {
    return view_.dtype == DType::kI32 ? static_cast<int32_t*>(view_.data) : nullptr;
  }
  int64_t num_elements() const { return view_.num_elements(); }
  std::span<const int64_t> dims() const { return view_.dims(); }

 private:
  std::shared_ptr<void> storage_;
  TensorView view_;
};

}  // namespace pto

#endif  // PTO_TENSOR_H_
