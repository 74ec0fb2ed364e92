#include <cstdlib>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "pto/tensor.h"

namespace pto {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI8: return "i8";
    case DType::kI32: return "i32";
  }
  return "unknown";
}

int DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kI8:
      return 1;
  }
  return 4;
}

namespace {

TensorView DenseView(void* data, DType dtype, std::span<const int64_t> shape) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    v.rank = -1;
    return v;
  }
  v.rank = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    // A shape too large to count gets saturated strides; num_elements() reports it as -1.
    if (__builtin_mul_overflow(stride, shape[d] > 0 ? shape[d] : 1, &stride)) {
      stride = std::numeric_limits<int64_t>::max();
    }
  }
  return v;
}

}  // namespace

TensorView TensorView::Dense(const float* data, std::span<const int64_t> shape) {
  return DenseView(const_cast<float*>(data), DType::kF32, shape);
}

TensorView TensorView::Dense(const int32_t* data, std::span<const int64_t> shape) {
  return DenseView(const_cast<int32_t*>(data), DType::kI32, shape);
}

int64_t TensorView::num_elements() const {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0 || __builtin_mul_overflow(n, shape[d], &n)) return -1;
  }
  return n;
}

std::string TensorView::ShapeString() const {
  std::string s = "[";
  for (int d = 0; d < rank; ++d) absl::StrAppend(&s, d ? ", " : "", shape[d]);
  return s + "]";
}

Tensor Tensor::Allocate(std::span<const int64_t> shape, DType dtype) {
  Tensor t;
  TensorView v = DenseView(nullptr, dtype, shape);
  const int64_t n = v.num_elements();
  if (v.rank < 0 || n < 0 || n > kMaxElements) return t;
  const size_t bytes = (static_cast<size_t>(n) * DTypeSize(dtype) + 63) / 64 * 64;
  void* p = bytes ? std::aligned_alloc(64, bytes) : nullptr;
  if (bytes && p == nullptr) return t;
  t.storage_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  v.data = p;
  t.view_ = v;
  return t;
}

Tensor Tensor::Borrow(const TensorView& view) {
  Tensor t;
  t.view_ = view;
  return t;
}

}  // namespace pto
