// The per-family loops of the reference implementation. Internal to ops/: EvaluateOp has
// validated the inputs and computed `out_shape` (with InferShape) before calling these, and
// axes are already normalized to [0, rank).
#ifndef PTO_OPS_REFERENCE_KERNELS_H_
#define PTO_OPS_REFERENCE_KERNELS_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "jit/ir/graph.h"
#include "ops/host_tensor.h"

namespace pto::ops::internal {

using Dims = std::vector<int64_t>;

// Row-major strides of `shape`, right-aligned to `rank` (rank >= shape.size()); a dim of size 1
// (or a missing leading dim) gets stride 0 so that it broadcasts.
Dims BroadcastStrides(const Dims& shape, size_t rank);

// Calls fn(offsets) for every index of `shape` in row-major order, where offsets[i] is the
// element offset of operand i given its (broadcast) strides.
template <typename Fn>
void ForEachIndex(const Dims& shape, std::span<const Dims> strides, std::vector<int64_t>& offsets,
                  Fn fn);

// Scalar semantics of the unary and binary elementwise ops, in double.
double UnaryValue(ir::OpKind op, double x);
double BinaryValue(ir::OpKind op, double a, double b);

HostTensor Unary(ir::OpKind op, const HostTensor& x);
HostTensor Binary(ir::OpKind op, const HostTensor& a, const HostTensor& b, const Dims& out_shape);
HostTensor Reduce(ir::OpKind op, const HostTensor& x, int64_t axis, const Dims& out_shape);
// softmax, log_softmax, layer_norm, rms_norm over the last axis. `weight` and `bias` may be null.
HostTensor RowOp(ir::OpKind op, const HostTensor& x, const HostTensor* weight,
                 const HostTensor* bias, double eps);
// softmax_grad(y, dy), log_softmax_grad(y, dy) (weight null), layer_norm_grad(x, weight, dy),
// rms_norm_grad(x, weight, dy) over the last axis: dx.
HostTensor RowGrad(ir::OpKind op, const HostTensor& a, const HostTensor* weight,
                   const HostTensor& dy, double eps);
// m + log(sum(exp(x - m))) along `axis`, m the max (NaN propagates).
HostTensor LogSumExp(const HostTensor& x, int64_t axis, const Dims& out_shape);
// `yield`, when set, runs between rows of the result.
HostTensor MatMul(const HostTensor& a, const HostTensor& b, bool transpose_a, bool transpose_b,
                  const Dims& out_shape, const std::function<void()>& yield = nullptr);
HostTensor Transpose(const HostTensor& x, const Dims& perm, const Dims& out_shape);
HostTensor Concat(std::span<const HostTensor* const> inputs, int64_t axis, const Dims& out_shape);
HostTensor Slice(const HostTensor& x, int64_t axis, int64_t start, int64_t step,
                 const Dims& out_shape);

// --- implementation of the template ---

template <typename Fn>
void ForEachIndex(const Dims& shape, std::span<const Dims> strides, std::vector<int64_t>& offsets,
                  Fn fn) {
  const size_t rank = shape.size();
  offsets.assign(strides.size(), 0);
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(rank, 0);
  while (true) {
    fn(offsets);
    // Odometer increment from the last axis.
    size_t axis = rank;
    while (axis > 0) {
      --axis;
      ++index[axis];
      for (size_t i = 0; i < strides.size(); ++i) offsets[i] += strides[i][axis];
      if (index[axis] < shape[axis]) break;
      for (size_t i = 0; i < strides.size(); ++i) offsets[i] -= strides[i][axis] * shape[axis];
      index[axis] = 0;
      if (axis == 0) return;
    }
    if (rank == 0) return;
  }
}

}  // namespace pto::ops::internal

#endif  // PTO_OPS_REFERENCE_KERNELS_H_
