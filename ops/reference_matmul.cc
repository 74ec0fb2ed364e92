// Reference matmul: [..., M, K] x [..., K, N] with broadcast batch dims, double accumulation.
#include <cstdint>
#include <vector>

#include "ops/reference_kernels.h"

namespace pto::ops::internal {

HostTensor MatMul(const HostTensor& a, const HostTensor& b, bool transpose_a, bool transpose_b,
                  const Dims& out_shape) {
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

  HostTensor out{out_shape, {}};
  out.data.reserve(NumElements(out_shape));
  std::vector<int64_t> offsets;
  ForEachIndex(out_batch, strides, offsets, [&](const std::vector<int64_t>& off) {
    const float* pa = a.data.data() + off[0];
    const float* pb = b.data.data() + off[1];
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += static_cast<double>(pa[i * a_m + p * a_k]) * pb[p * b_k + j * b_n];
        }
        out.data.push_back(static_cast<float>(acc));
      }
    }
  });
  return out;
}

}  // namespace pto::ops::internal
