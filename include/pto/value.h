// Tensor programs are written over pto::Value: symbolic tensors recorded while pto traces the
// embedder's lambda at the first call. Shape errors are recorded in the trace and reported by
// that call as InvalidArgument (naming the op, the input and both shapes).
#ifndef PTO_VALUE_H_
#define PTO_VALUE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "pto/tensor.h"

namespace pto {

namespace detail {
class TraceState;
}  // namespace detail

// A Value belongs to the trace that made it and is valid only while that trace runs: a Value
// kept past its trace (e.g. in a variable the lambda captures) is refused by the next trace's
// ops with InvalidArgument ("a Value from another trace"), never bound to another node.
class Value {
 public:
  Value() = default;  // invalid until produced by the tracer
  // Made by a trace that is still running.
  bool valid() const { return id_ >= 0 && !state_.expired(); }
  int rank() const;  // -1 when not valid()
  // The dim's value when it is static in this trace, -1 when it is symbolic (or not valid()).
  int64_t static_dim(int axis) const;

  // Internal: used by the tracer.
  Value(std::weak_ptr<detail::TraceState> state, int id) : state_(std::move(state)), id_(id) {}
  // The trace this Value belongs to; null once that trace has ended (or for Value()).
  std::shared_ptr<detail::TraceState> state() const { return state_.lock(); }
  int id() const { return id_; }

 private:
  std::weak_ptr<detail::TraceState> state_;
  int id_ = -1;
};

// Elementwise, numpy broadcasting; floats are scalar constants.
Value operator+(Value a, Value b);
Value operator-(Value a, Value b);
Value operator*(Value a, Value b);
Value operator/(Value a, Value b);
Value operator+(Value a, float b);
Value operator-(Value a, float b);
Value operator*(Value a, float b);
Value operator/(Value a, float b);
Value operator+(float a, Value b);
Value operator-(float a, Value b);
Value operator*(float a, Value b);
Value operator/(float a, Value b);
Value operator-(Value a);
Value constant(float value);  // a scalar constant, shape []
Value maximum(Value a, Value b);
Value minimum(Value a, Value b);
Value abs(Value x);
Value exp(Value x);
Value log(Value x);
Value sqrt(Value x);
Value rsqrt(Value x);
Value tanh(Value x);
Value sigmoid(Value x);
Value relu(Value x);
enum class GeluApproximation { kErf, kTanh };
Value gelu(Value x, GeluApproximation approximation = GeluApproximation::kErf);
Value silu(Value x);
Value erf(Value x);
// f32 <-> i32; f32 -> i32 truncates toward zero, NaN gives 0 and out-of-range values clamp
// to the i32 range.
Value cast(Value x, DType dtype);

// Comparisons, numpy broadcasting, of two f32 or two i32 tensors: f32 1 where true, 0 where
// false (a mask multiplies directly). NaN compares false, except ne (IEEE).
Value eq(Value a, Value b);
Value ne(Value a, Value b);
Value lt(Value a, Value b);
Value le(Value a, Value b);
Value gt(Value a, Value b);
Value ge(Value a, Value b);
Value eq(Value a, float b);
Value ne(Value a, float b);
Value lt(Value a, float b);
Value le(Value a, float b);
Value gt(Value a, float b);
Value ge(Value a, float b);
// a where cond is nonzero, else b; numpy broadcasting of all three. cond is f32 or i32; a and
// b share one dtype, the result's.
Value where(Value cond, Value a, Value b);
// An i32 tensor of like's shape whose element is its index along `axis` (negative counts from
// the end); like's values are never read (jax.lax.broadcasted_iota).
Value iota(Value like, int axis);
// f32 [..., depth]: 1 at the index each element of the i32 `indices` gives, 0 elsewhere; an
// index outside [0, depth) gives a row of zeros. depth >= 1.
Value one_hot(Value indices, int64_t depth);
// numpy's take along `axis` (tf.gather): x f32 [pre..., n, post...] and i32 indices of any shape
// I give [pre..., I..., post...]. An index outside [0, n) (negative ones included: there is no
// wrap-around) gives NaN, as JAX's default "fill" mode does for floats.
Value gather(Value x, Value indices, int axis);

// Reductions over one axis (negative axes count from the end).
Value reduce_sum(Value x, int axis, bool keepdims = false);
Value reduce_max(Value x, int axis, bool keepdims = false);
Value reduce_mean(Value x, int axis, bool keepdims = false);
// log(sum(exp(x))) along the axis, computed as m + log(sum(exp(x - m))) with m the max (no
// overflow for large x; rows of -inf give -inf; NaN propagates).
Value logsumexp(Value x, int axis, bool keepdims = false);

// Row operators over the last axis.
Value softmax(Value x);
Value log_softmax(Value x);
Value layer_norm(Value x, Value weight, Value bias, float eps = 1e-5f);
Value rms_norm(Value x, Value weight, float eps = 1e-6f);

// [..., M, K] x [..., K, N]; batch dims broadcast.
struct MatMulOptions {
  bool transpose_a = false;
  bool transpose_b = false;
};
Value matmul(Value a, Value b, MatMulOptions options = {});
// x · weightᵀ + bias with weight [out, in] (PyTorch's layout).
Value linear(Value x, Value weight, Value bias);

// Data movement.
Value transpose(Value x, std::vector<int64_t> permutation);
Value transpose(Value x, int axis_a, int axis_b);  // swaps two axes
// -1 infers one dim, 0 keeps the input's dim at that position.
Value reshape(Value x, std::vector<int64_t> shape);
Value concat(std::vector<Value> values, int axis);
// Elements [start, end) with `step` along `axis`; end = INT64_MAX means "to the end".
Value slice(Value x, int axis, int64_t start, int64_t end, int64_t step = 1);

// Gradient checkpointing: returns segment(inputs), traced now. In a gradient (JitGrad,
// JitTrainStep) the values the segment computes are not kept for the backward pass: the
// backward pass computes them again from `inputs`, which are kept (docs/training.md,
// "Gradient checkpointing"). Less memory for more compute; no effect outside a gradient.
std::vector<Value> checkpoint(
    const std::function<std::vector<Value>(std::span<const Value>)>& segment,
    std::vector<Value> inputs);

}  // namespace pto

#endif  // PTO_VALUE_H_
