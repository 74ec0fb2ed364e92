// The dtype rule of every op (InferDType): f32 everywhere, i32 through the ops that move,
// compare, select and do integer arithmetic; comparisons give f32 1/0.
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/shape_rules_internal.h"

namespace pto::ops::internal {
namespace {

using ir::DType;
using ir::OpKind;

std::string Name(DType t) { return std::string(ir::DTypeName(t)); }

// Ops that take i32 operands (and give i32, but for comparisons, where and one_hot).
bool TakesI32(OpKind op) {
  switch (op) {
    case OpKind::kTranspose:
    case OpKind::kReshape:
    case OpKind::kConcat:
    case OpKind::kSlice:
    case OpKind::kBroadcastTo:
    case OpKind::kCast:
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kMax:
    case OpKind::kMin:
    case OpKind::kNeg:
    case OpKind::kAbs:
    case OpKind::kWhere:
    case OpKind::kOneHot:
      return true;
    default:
      return ir::IsComparison(op);
  }
}

// The positions [first, end) whose dtypes must agree: where's condition and iota's `like` are
// apart.
std::pair<size_t, size_t> SharedInputs(OpKind op, size_t n) {
  if (op == OpKind::kWhere) return {1, n};
  if (op == OpKind::kIota) return {n, n};
  if (op == OpKind::kGather || op == OpKind::kScatterAdd) return {n, n};  // checked by IndexedDType
  return {0, n};
}

// gather(x, indices) and scatter_add(like, updates, indices): the indices (the last input) are
// i32, the values f32; scatter_add's `like` gives only the shape (any dtype).
absl::StatusOr<ir::DType> IndexedDType(OpKind op, std::span<const ir::DType> inputs) {
  const std::string name(ir::OpName(op));
  const size_t last = inputs.size() - 1;
  if (inputs[last] != DType::kI32) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": input ", last, " (indices) is ",
                                                   Name(inputs[last]), "; indices are i32"));
  }
  const size_t values = op == OpKind::kGather ? 0 : 1;
  if (inputs[values] != DType::kF32) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": input ", values, op == OpKind::kGather ? "" : " (updates)", " is ",
                     Name(inputs[values]), "; ", name, " takes f32 values"));
  }
  return DType::kF32;
}

}  // namespace

absl::StatusOr<ir::DType> DTypeRule(ir::OpKind op, const ir::Attrs& attrs,
                                    std::span<const ir::DType> inputs) {
  const std::string name(ir::OpName(op));
  const auto [first, end] = SharedInputs(op, inputs.size());
  for (size_t i = first + 1; i < end; ++i) {
    if (inputs[i] != inputs[first]) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": input ", i, " dtype ", Name(inputs[i]), " differs from input ",
                       first, " dtype ", Name(inputs[first]), "; all inputs must share one dtype"));
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] != DType::kF32 && inputs[i] != DType::kI32) {
      return absl::UnimplementedError(absl::StrCat(name, ": input ", i, " dtype ", Name(inputs[i]),
                                                   " is not supported yet (only f32 and i32)"));
    }
  }
  if (op == OpKind::kConstant) return attrs.dtype == DType::kI32 ? DType::kI32 : DType::kF32;
  if (op == OpKind::kIota) return DType::kI32;  // `like` gives only the shape
  if (op == OpKind::kGather || op == OpKind::kScatterAdd) return IndexedDType(op, inputs);
  if (op == OpKind::kOneHot) {
    if (inputs[0] != DType::kI32) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": input 0 is ", Name(inputs[0]), "; one_hot takes i32 indices (cast it first)"));
    }
    return DType::kF32;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == DType::kI32 && !TakesI32(op)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": input ", i, " is i32; ", name, " takes f32 (cast it first)"));
    }
  }
  if (op == OpKind::kCast) {
    if (attrs.dtype != DType::kF32 && attrs.dtype != DType::kI32) {
      return absl::UnimplementedError(absl::StrCat(name, ": target dtype ", Name(attrs.dtype),
                                                   " is not supported yet (only f32 and i32)"));
    }
    return attrs.dtype;
  }
  if (ir::IsComparison(op)) return DType::kF32;
  if (op == OpKind::kWhere) return inputs[1];
  return inputs[0];
}

}  // namespace pto::ops::internal
