// The per-family loops of the reference implementation. Internal to ops/: EvaluateOp has
// validated the inputs and computed `out_shape` (with InferShape) before calling these, and
// axes are already normalized to [0, rank).
//
// Dtypes: EvaluateOp has promoted the float inputs to one dtype (kF64 when any is kF64), so a
// loop reads every float operand from the same storage: HostTensor::data (float) for kF32,
// HostTensor::wide (double) for kF64 and kI32. The loops are templates over that storage type
// T (ByStorage picks it once per op, outside the loops); arithmetic is in double and a result
// is rounded to T once, which for kF32 is exactly today's f32 reference.
#ifndef PTO_OPS_REFERENCE_KERNELS_H_
#define PTO_OPS_REFERENCE_KERNELS_H_

#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "jit/ir/graph.h"
#include "ops/host_tensor.h"

namespace pto::ops::internal {

using Dims = std::vector<int64_t>;

// The storage of `t` as T: `data` when T is float (kF32), `wide` when T is double (kF64, kI32).
template <typename T>
const std::vector<T>& Values(const HostTensor& t) {
  if constexpr (std::is_same_v<T, float>) {
    return t.data;
  } else {
    static_assert(std::is_same_v<T, double>);
    return t.wide;
  }
}
template <typename T>
std::vector<T>& Values(HostTensor& t) {
  if constexpr (std::is_same_v<T, float>) {
    return t.data;
  } else {
    static_assert(std::is_same_v<T, double>);
    return t.wide;
  }
}

// A tensor of `shape` and `dtype` with no elements stored yet.
inline HostTensor Result(Dims shape, ir::DType dtype) {
  HostTensor t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

// fn(float{}) for a kF32 tensor, fn(double{}) for the dtypes stored in `wide`: the loop's
// storage type, chosen once per op.
template <typename Fn>
auto ByStorage(ir::DType dtype, Fn&& fn) {
  if (dtype == ir::DType::kF32) return fn(float{});
  return fn(double{});
}

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
// numpy broadcasting of x to out_shape.
HostTensor BroadcastTo(const HostTensor& x, const Dims& out_shape);
HostTensor Transpose(const HostTensor& x, const Dims& perm, const Dims& out_shape);
HostTensor Concat(std::span<const HostTensor* const> inputs, int64_t axis, const Dims& out_shape);
HostTensor Slice(const HostTensor& x, int64_t axis, int64_t start, int64_t step,
                 const Dims& out_shape);
// numpy's take along `axis` (indices i32, any shape); an index outside [0, n) reads NaN.
HostTensor Gather(const HostTensor& x, const HostTensor& indices, int64_t axis,
                  const Dims& out_shape);
// Zeros of out_shape plus each update row added at its index along `axis`, in the order of the
// index positions; out-of-range indices are dropped.
HostTensor ScatterAdd(const HostTensor& updates, const HostTensor& indices, int64_t axis,
                      const Dims& out_shape);

// Comparisons (f32 1/0), where, iota (i32), one_hot (f32), cast to or from i32 (f32 -> i32
// truncates toward zero and saturates, NaN -> 0), and i32 arithmetic (wrapping): the ops
// IsIndexingOp names, given their inputs and result dtype.
bool IsIndexingOp(ir::OpKind op, std::span<const HostTensor* const> inputs, ir::DType out);
HostTensor IndexingOp(ir::OpKind op, const ir::Attrs& attrs,
                      std::span<const HostTensor* const> inputs, const Dims& out_shape,
                      ir::DType out);
// f32 -> i32 as the kernels cast: toward zero, clamped to the i32 range, NaN -> 0.
int32_t SaturatingI32(double x);

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
