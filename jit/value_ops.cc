// The public op functions of pto/value.h: each records one node in the running trace.
#include <cmath>
#include <initializer_list>
#include <memory>
#include <span>

#include "absl/status/status.h"
#include "jit/trace.h"
#include "pto/value.h"

namespace pto {
namespace {

using ir::OpKind;

// The trace to record into: that of the first input whose trace still runs, else the one
// running on this thread (an input of an ended trace is then refused by AddNode).
std::shared_ptr<detail::TraceState> StateOf(std::span<const Value> values) {
  for (const Value& v : values) {
    if (std::shared_ptr<detail::TraceState> state = v.state()) return state;
  }
  detail::TraceState* current = detail::TraceState::Current();
  return current != nullptr ? current->shared_from_this() : nullptr;
}

Value RecordSpan(OpKind op, ir::Attrs attrs, std::span<const Value> inputs) {
  std::shared_ptr<detail::TraceState> state = StateOf(inputs);
  if (state == nullptr) return Value();  // not tracing: nothing to record into
  return state->AddNode(op, std::move(attrs), inputs);
}

Value Record(OpKind op, ir::Attrs attrs, std::initializer_list<Value> inputs) {
  return RecordSpan(op, std::move(attrs), std::span<const Value>(inputs.begin(), inputs.size()));
}

Value Unary(OpKind op, Value x) { return Record(op, {}, {x}); }
Value Binary(OpKind op, Value a, Value b) { return Record(op, {}, {a, b}); }

// A constant to combine with `like`: i32 when `like` is i32 and the value an integer in its
// range (labels + 1, eq(labels, 3)), else f32.
Value Scalar(Value like, float value) {
  std::shared_ptr<detail::TraceState> state = StateOf({&like, 1});
  if (state == nullptr) return Value();
  const bool i32_like = like.state() == state && like.id() >= 0 &&
                        state->graph().nodes[like.id()].dtype == ir::DType::kI32;
  const bool integral =
      std::trunc(value) == value && value >= -2147483648.0f && value < 2147483648.0f;
  return state->AddConstant(value, i32_like && integral ? ir::DType::kI32 : ir::DType::kF32);
}

ir::DType ToIr(DType d) { return static_cast<ir::DType>(d); }

}  // namespace

int Value::rank() const {
  const std::shared_ptr<detail::TraceState> state = state_.lock();
  if (state == nullptr || id_ < 0) return -1;
  return static_cast<int>(state->graph().nodes[id_].shape.size());
}

int64_t Value::static_dim(int axis) const {
  const std::shared_ptr<detail::TraceState> state = state_.lock();
  if (state == nullptr || id_ < 0) return -1;
  const ir::Shape& shape = state->graph().nodes[id_].shape;
  if (axis < 0 || axis >= static_cast<int>(shape.size())) return -1;
  return shape[axis].AsConstant().value_or(-1);
}

Value operator+(Value a, Value b) { return Binary(OpKind::kAdd, a, b); }
Value operator-(Value a, Value b) { return Binary(OpKind::kSub, a, b); }
Value operator*(Value a, Value b) { return Binary(OpKind::kMul, a, b); }
Value operator/(Value a, Value b) { return Binary(OpKind::kDiv, a, b); }
Value operator+(Value a, float b) { return a + Scalar(a, b); }
Value operator-(Value a, float b) { return a - Scalar(a, b); }
Value operator*(Value a, float b) { return a * Scalar(a, b); }
Value operator/(Value a, float b) { return a / Scalar(a, b); }
Value operator+(float a, Value b) { return Scalar(b, a) + b; }
Value operator-(float a, Value b) { return Scalar(b, a) - b; }
Value operator*(float a, Value b) { return Scalar(b, a) * b; }
Value operator/(float a, Value b) { return Scalar(b, a) / b; }
Value operator-(Value a) { return Unary(OpKind::kNeg, a); }
Value constant(float value) { return Scalar(Value(), value); }
Value maximum(Value a, Value b) { return Binary(OpKind::kMax, a, b); }
Value minimum(Value a, Value b) { return Binary(OpKind::kMin, a, b); }
Value abs(Value x) { return Unary(OpKind::kAbs, x); }
Value exp(Value x) { return Unary(OpKind::kExp, x); }
Value log(Value x) { return Unary(OpKind::kLog, x); }
Value sqrt(Value x) { return Unary(OpKind::kSqrt, x); }
Value rsqrt(Value x) { return Unary(OpKind::kRsqrt, x); }
Value tanh(Value x) { return Unary(OpKind::kTanh, x); }
Value sigmoid(Value x) { return Unary(OpKind::kSigmoid, x); }
Value relu(Value x) { return Unary(OpKind::kRelu, x); }
Value gelu(Value x, GeluApproximation approximation) {
  return Unary(approximation == GeluApproximation::kTanh ? OpKind::kGeluTanh : OpKind::kGeluErf, x);
}
Value silu(Value x) { return Unary(OpKind::kSilu, x); }
Value erf(Value x) { return Unary(OpKind::kErf, x); }

Value cast(Value x, DType dtype) {
  ir::Attrs attrs;
  attrs.dtype = ToIr(dtype);
  return Record(OpKind::kCast, attrs, {x});
}

Value eq(Value a, Value b) { return Binary(OpKind::kEq, a, b); }
Value ne(Value a, Value b) { return Binary(OpKind::kNe, a, b); }
Value lt(Value a, Value b) { return Binary(OpKind::kLt, a, b); }
Value le(Value a, Value b) { return Binary(OpKind::kLe, a, b); }
Value gt(Value a, Value b) { return Binary(OpKind::kGt, a, b); }
Value ge(Value a, Value b) { return Binary(OpKind::kGe, a, b); }
Value eq(Value a, float b) { return eq(a, Scalar(a, b)); }
Value ne(Value a, float b) { return ne(a, Scalar(a, b)); }
Value lt(Value a, float b) { return lt(a, Scalar(a, b)); }
Value le(Value a, float b) { return le(a, Scalar(a, b)); }
Value gt(Value a, float b) { return gt(a, Scalar(a, b)); }
Value ge(Value a, float b) { return ge(a, Scalar(a, b)); }

Value where(Value cond, Value a, Value b) { return Record(OpKind::kWhere, {}, {cond, a, b}); }

Value iota(Value like, int axis) {
  ir::Attrs attrs;
  attrs.axis = axis;
  return Record(OpKind::kIota, attrs, {like});
}

Value gather(Value x, Value indices, int axis) {
  ir::Attrs attrs;
  attrs.axis = axis;
  return Record(OpKind::kGather, attrs, {x, indices});
}

Value one_hot(Value indices, int64_t depth) {
  ir::Attrs attrs;
  attrs.ints = {depth};
  return Record(OpKind::kOneHot, attrs, {indices});
}

namespace {
Value Reduce(OpKind op, Value x, int axis, bool keepdims) {
  ir::Attrs attrs;
  attrs.axis = axis;
  attrs.keepdims = keepdims;
  return Record(op, attrs, {x});
}
}  // namespace

Value reduce_sum(Value x, int axis, bool keepdims) {
  return Reduce(OpKind::kReduceSum, x, axis, keepdims);
}
Value reduce_max(Value x, int axis, bool keepdims) {
  return Reduce(OpKind::kReduceMax, x, axis, keepdims);
}
Value reduce_mean(Value x, int axis, bool keepdims) {
  return Reduce(OpKind::kReduceMean, x, axis, keepdims);
}
Value logsumexp(Value x, int axis, bool keepdims) {
  return Reduce(OpKind::kLogSumExp, x, axis, keepdims);
}
Value softmax(Value x) { return Unary(OpKind::kSoftmax, x); }
Value log_softmax(Value x) { return Unary(OpKind::kLogSoftmax, x); }

Value layer_norm(Value x, Value weight, Value bias, float eps) {
  ir::Attrs attrs;
  attrs.eps = eps;
  return Record(OpKind::kLayerNorm, attrs, {x, weight, bias});
}

Value rms_norm(Value x, Value weight, float eps) {
  ir::Attrs attrs;
  attrs.eps = eps;
  return Record(OpKind::kRmsNorm, attrs, {x, weight});
}

Value matmul(Value a, Value b, MatMulOptions options) {
  ir::Attrs attrs;
  attrs.transpose_a = options.transpose_a;
  attrs.transpose_b = options.transpose_b;
  return Record(OpKind::kMatMul, attrs, {a, b});
}

Value linear(Value x, Value weight, Value bias) {
  return matmul(x, weight, {.transpose_b = true}) + bias;
}

Value transpose(Value x, std::vector<int64_t> permutation) {
  ir::Attrs attrs;
  attrs.ints = std::move(permutation);
  return Record(OpKind::kTranspose, attrs, {x});
}

Value transpose(Value x, int axis_a, int axis_b) {
  int rank = x.rank();
  if (rank < 0) return Record(OpKind::kTranspose, {}, {x});
  if (axis_a < 0) axis_a += rank;
  if (axis_b < 0) axis_b += rank;
  std::vector<int64_t> perm(rank);
  for (int i = 0; i < rank; ++i) perm[i] = i;
  if (axis_a >= 0 && axis_a < rank && axis_b >= 0 && axis_b < rank) {
    std::swap(perm[axis_a], perm[axis_b]);
  } else {
    perm.assign(1, -1);  // rejected by the shape rule with the rank in the message
  }
  return transpose(x, std::move(perm));
}

Value reshape(Value x, std::vector<int64_t> shape) {
  ir::Attrs attrs;
  attrs.ints = std::move(shape);
  return Record(OpKind::kReshape, attrs, {x});
}

Value concat(std::vector<Value> values, int axis) {
  ir::Attrs attrs;
  attrs.axis = axis;
  return RecordSpan(OpKind::kConcat, attrs, values);
}

Value slice(Value x, int axis, int64_t start, int64_t end, int64_t step) {
  ir::Attrs attrs;
  attrs.axis = axis;
  attrs.start = start;
  attrs.end = end;
  attrs.step = step;
  return Record(OpKind::kSlice, attrs, {x});
}

std::vector<Value> checkpoint(
    const std::function<std::vector<Value>(std::span<const Value>)>& segment,
    std::vector<Value> inputs) {
  std::shared_ptr<detail::TraceState> state = StateOf(inputs);
  if (state == nullptr) return segment(inputs);
  const int previous = state->BeginCheckpoint();
  std::vector<Value> out = segment(inputs);
  state->EndCheckpoint(previous);
  return out;
}

}  // namespace pto
