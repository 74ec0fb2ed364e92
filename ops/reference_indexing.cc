// Reference loops of the ops that make or take integers and masks: comparisons, where, cast
// between f32 and i32, iota, one_hot, and the i32 forms of add, sub, mul, max, min, neg, abs
// (wrapping two's complement, as the kernels compute them).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/reference_kernels.h"

namespace pto::ops::internal {
namespace {

bool Compare(ir::OpKind op, double a, double b) {
  switch (op) {
    case ir::OpKind::kEq:
      return a == b;
    case ir::OpKind::kNe:
      return a != b;  // true for NaN, like IEEE
    case ir::OpKind::kLt:
      return a < b;
    case ir::OpKind::kLe:
      return a <= b;
    case ir::OpKind::kGt:
      return a > b;
    default:
      return a >= b;
  }
}

int32_t Wrap(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

int32_t IntegerValue(ir::OpKind op, int64_t a, int64_t b) {
  switch (op) {
    case ir::OpKind::kAdd:
      return Wrap(a + b);
    case ir::OpKind::kSub:
      return Wrap(a - b);
    case ir::OpKind::kMul:
      return Wrap(a * b);  // |a * b| <= 2^62: exact in int64
    case ir::OpKind::kMax:
      return static_cast<int32_t>(a > b ? a : b);
    case ir::OpKind::kMin:
      return static_cast<int32_t>(a < b ? a : b);
    case ir::OpKind::kNeg:
      return Wrap(-a);
    default:
      return Wrap(a < 0 ? -a : a);  // kAbs: abs(INT32_MIN) = INT32_MIN
  }
}

// Calls fn(out_index, offsets) over `out_shape`, operand i broadcast by its shape.
template <typename Fn>
void Broadcast(const Dims& out_shape, std::span<const HostTensor* const> operands, Fn fn) {
  std::vector<Dims> strides;
  for (const HostTensor* t : operands)
    strides.push_back(BroadcastStrides(t->shape, out_shape.size()));
  std::vector<int64_t> offsets;
  int64_t i = 0;
  ForEachIndex(out_shape, strides, offsets, [&](const std::vector<int64_t>& off) { fn(i++, off); });
}

}  // namespace

int32_t SaturatingI32(double x) {
  if (std::isnan(x)) return 0;
  const double t = std::trunc(x);
  if (t <= std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::min();
  if (t >= std::numeric_limits<int32_t>::max()) return std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(t);
}

bool IsIndexingOp(ir::OpKind op, std::span<const HostTensor* const> inputs, ir::DType out) {
  if (ir::IsComparison(op) || op == ir::OpKind::kWhere || op == ir::OpKind::kIota ||
      op == ir::OpKind::kOneHot) {
    return true;
  }
  const bool i32_in = !inputs.empty() && inputs[0]->dtype == ir::DType::kI32;
  if (op == ir::OpKind::kCast) return i32_in || out == ir::DType::kI32;
  return i32_in && (ir::IsBinaryElementwise(op) || ir::IsUnaryElementwise(op));
}

HostTensor IndexingOp(ir::OpKind op, const ir::Attrs& attrs,
                      std::span<const HostTensor* const> inputs, const Dims& out_shape,
                      ir::DType out) {
  HostTensor y = HostTensor::Zeros(out_shape, out);
  const HostTensor& x = *inputs[0];
  if (ir::IsComparison(op)) {
    Broadcast(out_shape, inputs, [&](int64_t i, const std::vector<int64_t>& off) {
      y.Set(i, Compare(op, x.at(off[0]), inputs[1]->at(off[1])) ? 1.0 : 0.0);
    });
  } else if (op == ir::OpKind::kWhere) {
    Broadcast(out_shape, inputs, [&](int64_t i, const std::vector<int64_t>& off) {
      // Nonzero is true, NaN included.
      y.Set(i, x.at(off[0]) != 0 ? inputs[1]->at(off[1]) : inputs[2]->at(off[2]));
    });
  } else if (op == ir::OpKind::kIota) {
    const int64_t axis =
        attrs.axis < 0 ? attrs.axis + static_cast<int64_t>(x.shape.size()) : attrs.axis;
    int64_t inner = 1;
    for (size_t d = axis + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
    for (int64_t i = 0; i < y.size(); ++i) y.Set(i, (i / inner) % out_shape[axis]);
  } else if (op == ir::OpKind::kOneHot) {
    const int64_t depth = attrs.ints[0];
    for (int64_t r = 0; r < x.size(); ++r) {
      const double index = x.at(r);  // outside [0, depth): a row of zeros
      if (index >= 0 && index < static_cast<double>(depth)) {
        y.Set(r * depth + static_cast<int64_t>(index), 1.0);
      }
    }
  } else if (op == ir::OpKind::kCast) {
    for (int64_t i = 0; i < y.size(); ++i) {
      y.Set(i, out == ir::DType::kI32 ? SaturatingI32(x.at(i)) : x.at(i));
    }
  } else if (ir::IsBinaryElementwise(op)) {
    Broadcast(out_shape, inputs, [&](int64_t i, const std::vector<int64_t>& off) {
      y.Set(i, IntegerValue(op, static_cast<int64_t>(x.at(off[0])),
                            static_cast<int64_t>(inputs[1]->at(off[1]))));
    });
  } else {
    for (int64_t i = 0; i < y.size(); ++i) {
      y.Set(i, IntegerValue(op, static_cast<int64_t>(x.at(i)), 0));
    }
  }
  return y;
}

}  // namespace pto::ops::internal
