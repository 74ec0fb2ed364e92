// EvaluateOp: validates concrete inputs, derives the output shape from the shape rules and
// dispatches to the reference loops.
#include "ops/reference.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jit/ir/sym_expr.h"
#include "ops/reference_kernels.h"
#include "ops/shape_rules.h"

namespace pto::ops {
namespace {

using internal::Dims;

absl::Status CheckInputs(ir::OpKind op, std::span<const HostTensor* const> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor* t = inputs[i];
    if (t == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(ir::OpName(op)), ": input ", i, " is null"));
    }
    for (int64_t d : t->shape) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(std::string(ir::OpName(op)), ": input ", i,
                                                       " shape ", t->ShapeString(),
                                                       " has a negative dim"));
      }
    }
    if (!IsHostDType(t->dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          std::string(ir::OpName(op)), ": input ", i, " has dtype ",
          std::string(ir::DTypeName(t->dtype)), "; a host tensor holds f32, f64 or i32"));
    }
    if (t->size() != t->NumElements()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(ir::OpName(op)), ": input ", i, " shape ", t->ShapeString(),
                       " needs ", t->NumElements(), " values but has ", t->size()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Dims> OutputShape(ir::OpKind op, const ir::Attrs& attrs,
                                 std::span<const HostTensor* const> inputs) {
  std::vector<ir::Shape> shapes;
  for (const HostTensor* t : inputs) shapes.emplace_back(t->shape.begin(), t->shape.end());
  absl::StatusOr<ir::Shape> shape = InferShape(op, attrs, shapes);
  if (!shape.ok()) return shape.status();
  Dims out;
  for (const ir::SymExpr& d : *shape) out.push_back(d.constant());  // constant in, constant out
  return out;
}

bool IsDataMovement(ir::OpKind op) {
  return op == ir::OpKind::kTranspose || op == ir::OpKind::kReshape || op == ir::OpKind::kConcat ||
         op == ir::OpKind::kSlice || op == ir::OpKind::kBroadcastTo;
}

// The result dtype. InferDType knows no f64 (it is the reference's wide type, never traced), so
// f64 inputs are asked about as the f32 they stand for; the result of a float op is then f64
// when any input is. Data movement carries any dtype its inputs share, i32 included.
absl::StatusOr<ir::DType> ResultDType(ir::OpKind op, const ir::Attrs& attrs,
                                      std::span<const HostTensor* const> inputs) {
  std::vector<ir::DType> dtypes;
  bool any_f64 = false;
  for (const HostTensor* t : inputs) {
    any_f64 = any_f64 || t->dtype == ir::DType::kF64;
    dtypes.push_back(t->dtype == ir::DType::kF64 ? ir::DType::kF32 : t->dtype);
  }
  absl::StatusOr<ir::DType> d = InferDType(op, attrs, dtypes);
  if (!d.ok() && IsDataMovement(op) && !dtypes.empty() &&
      std::all_of(dtypes.begin(), dtypes.end(), [&](ir::DType t) { return t == dtypes[0]; })) {
    d = dtypes[0];
  }
  if (!d.ok()) return d.status();
  return *d == ir::DType::kF32 && any_f64 ? ir::DType::kF64 : *d;
}

}  // namespace

absl::StatusOr<HostTensor> EvaluateOp(ir::OpKind op, const ir::Attrs& attrs,
                                      std::span<const HostTensor* const> inputs,
                                      const std::function<void()>& yield) {
  if (op == ir::OpKind::kInput) {
    return absl::InvalidArgumentError(
        "input: input nodes have no reference computation; RunReference binds them");
  }
  if (absl::Status s = CheckInputs(op, inputs); !s.ok()) return s;
  absl::StatusOr<Dims> out_shape = OutputShape(op, attrs, inputs);
  if (!out_shape.ok()) return out_shape.status();
  absl::StatusOr<ir::DType> out_dtype = ResultDType(op, attrs, inputs);
  if (!out_dtype.ok()) return out_dtype.status();
  // With any f64 input, the f32 inputs are widened so that a loop reads one storage type.
  std::vector<HostTensor> widened;
  std::vector<const HostTensor*> promoted(inputs.begin(), inputs.end());
  if (std::any_of(inputs.begin(), inputs.end(),
                  [](const HostTensor* t) { return t->dtype == ir::DType::kF64; })) {
    widened.reserve(inputs.size());
    for (const HostTensor*& t : promoted) {
      if (t->dtype == ir::DType::kF32) t = &widened.emplace_back(t->ToF64());
    }
    inputs = promoted;
  }

  if (internal::IsIndexingOp(op, inputs, *out_dtype)) {
    return internal::IndexingOp(op, attrs, inputs, *out_shape, *out_dtype);
  }
  if (ir::IsBinaryElementwise(op)) return internal::Binary(op, *inputs[0], *inputs[1], *out_shape);
  if (ir::IsUnaryElementwise(op)) return internal::Unary(op, *inputs[0]);
  static const HostTensor kNone;
  const HostTensor& x = inputs.empty() ? kNone : *inputs[0];
  switch (op) {
    case ir::OpKind::kConstant:
      if (*out_dtype == ir::DType::kI32) {
        return HostTensor::I32({}, {internal::SaturatingI32(attrs.scalar)});
      }
      return HostTensor{{}, {static_cast<float>(attrs.scalar)}};
    case ir::OpKind::kReduceSum:
    case ir::OpKind::kReduceMax:
    case ir::OpKind::kReduceMean:
      return internal::Reduce(op, x, NormalizedAxis(attrs.axis, x.shape.size()), *out_shape);
    case ir::OpKind::kSoftmax:
    case ir::OpKind::kLogSoftmax:
      return internal::RowOp(op, x, nullptr, nullptr, 0);
    case ir::OpKind::kLayerNorm:
      return internal::RowOp(op, x, inputs[1], inputs[2], attrs.eps);
    case ir::OpKind::kRmsNorm:
      return internal::RowOp(op, x, inputs[1], nullptr, attrs.eps);
    case ir::OpKind::kSoftmaxGrad:
    case ir::OpKind::kLogSoftmaxGrad:
      return internal::RowGrad(op, x, nullptr, *inputs[1], 0);
    case ir::OpKind::kLayerNormGrad:
    case ir::OpKind::kRmsNormGrad:
      return internal::RowGrad(op, x, inputs[1], *inputs[2], attrs.eps);
    case ir::OpKind::kLogSumExp:
      return internal::LogSumExp(x, NormalizedAxis(attrs.axis, x.shape.size()), *out_shape);
    case ir::OpKind::kMatMul:
      return internal::MatMul(x, *inputs[1], attrs.transpose_a, attrs.transpose_b, *out_shape,
                              yield);
    case ir::OpKind::kTranspose:
      return internal::Transpose(x, attrs.ints, *out_shape);
    case ir::OpKind::kReshape: {
      HostTensor r = x;
      r.shape = *out_shape;
      return r;
    }
    case ir::OpKind::kBroadcastTo:
      return internal::BroadcastTo(x, *out_shape);
    case ir::OpKind::kConcat:
      return internal::Concat(inputs, NormalizedAxis(attrs.axis, x.shape.size()), *out_shape);
    case ir::OpKind::kSlice: {
      const int64_t axis = NormalizedAxis(attrs.axis, x.shape.size());
      const SliceBounds b = ResolveSlice(x.shape[axis], attrs.start, attrs.end, attrs.step);
      return internal::Slice(x, axis, b.start, attrs.step, *out_shape);
    }
    case ir::OpKind::kGather:
      return internal::Gather(x, *inputs[1], NormalizedAxis(attrs.axis, x.shape.size()),
                              *out_shape);
    case ir::OpKind::kScatterAdd:  // inputs[0] (`like`) gives only the shape
      return internal::ScatterAdd(*inputs[1], *inputs[2],
                                  NormalizedAxis(attrs.axis, x.shape.size()), *out_shape);
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown op kind ", static_cast<int>(op)));
}

}  // namespace pto::ops
