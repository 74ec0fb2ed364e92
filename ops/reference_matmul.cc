// Reference matmul: [..., M, K] x [..., K, N] with broadcast batch dims, double accumulation.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "ops/reference_kernels.h"

namespace pto::ops::internal {

HostTensor MatMul(const HostTensor& a, const HostTensor& b, bool transpose_a, bool transpose_b,
                  const Dims& out_shape, const std::function<void()>& yield) {
  const size_t rank = out_shape.size();
  const int64_t m = out_shape[rank - 2], n = out_shape[rank - 1];
  const int64_t k = transpose_a ? a.shape[a.shape.size() - 2] : a.shape.back();
  // Element strides of the logical (row, col) of each operand inside one matrix.
  const int64_t a_rows = a.shape[a.shape.size() - 2], a_cols = a.shape.back();
  const int64_t b_rows = b.shape[b.shape.size() - 2], b_cols = b.shape.back();
  const int64_t a_m = transpose_a ? 1 : a_cols, a_k = transpose_a ? a_cols : 1;
  const int64_t b_k = transpose_b ? 1 : b_cols, b_n = transpose_b ? b_cols : 1;

  // Batch offsets: strides of the batch dims in units of whole matrices, broadcast.
  const Dims out_batch(out_shape.begin(), out_shape.end() - 2);
  Dims strides[2] = {BroadcastStrides(Dims(a.shape.begin(), a.shape.end() - 2), out_batch.size()),
                     BroadcastStrides(Dims(b.shape.begin(), b.shape.end() - 2), out_batch.size())};
  for (int64_t& s : strides[0]) s *= a_rows * a_cols;
  for (int64_t& s : strides[1]) s *= b_rows * b_cols;

  // A row of C accumulates in doubles, k outer and j inner, over B with unit column stride (a
  // copy when B is stored otherwise): each output still sums its k terms in order, and the j
  // loop vectorizes (the tuner checks candidates against this at its largest sizes while the
  // caller's loop runs).
  return ByStorage(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    HostTensor out = Result(out_shape, a.dtype);
    std::vector<T>& y = Values<T>(out);
    y.reserve(NumElements(out_shape));
    std::vector<int64_t> offsets;
    std::vector<double> acc(n);
    std::vector<T> b_copy;
    ForEachIndex(out_batch, strides, offsets, [&](const std::vector<int64_t>& off) {
      const T* pa = Values<T>(a).data() + off[0];
      const T* pb = Values<T>(b).data() + off[1];
      int64_t row_stride = b_k;
      if (b_n != 1) {
        b_copy.resize(k * n);
        for (int64_t p = 0; p < k; ++p) {
          for (int64_t j = 0; j < n; ++j) b_copy[p * n + j] = pb[p * b_k + j * b_n];
        }
        pb = b_copy.data();
        row_stride = n;
      }
      for (int64_t i = 0; i < m; ++i) {
        if (yield) yield();
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t p = 0; p < k; ++p) {
          const double x = pa[i * a_m + p * a_k];
          const T* row = pb + p * row_stride;
          for (int64_t j = 0; j < n; ++j) acc[j] += x * row[j];
        }
        for (int64_t j = 0; j < n; ++j) y.push_back(static_cast<T>(acc[j]));
      }
    });
    return out;
  });
}

}  // namespace pto::ops::internal
