#include "ops/shape_rules.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/shape_rules_internal.h"

namespace pto::ops {
namespace {

using internal::RuleContext;

bool IsReduce(ir::OpKind op) {
  return op == ir::OpKind::kReduceSum || op == ir::OpKind::kReduceMax ||
         op == ir::OpKind::kReduceMean || op == ir::OpKind::kLogSumExp;
}

// {min, max} inputs; max < 0 means unbounded. {-1, -1} for an unknown op kind.
std::pair<int, int> Arity(ir::OpKind op) {
  if (ir::IsBinaryElementwise(op) || ir::IsComparison(op)) return {2, 2};
  if (ir::IsUnaryElementwise(op) || IsReduce(op)) return {1, 1};
  switch (op) {
    case ir::OpKind::kInput:
    case ir::OpKind::kConstant:
      return {0, 0};
    case ir::OpKind::kSoftmax:
    case ir::OpKind::kLogSoftmax:
    case ir::OpKind::kTranspose:
    case ir::OpKind::kReshape:
    case ir::OpKind::kSlice:
    case ir::OpKind::kIota:
    case ir::OpKind::kOneHot:
    case ir::OpKind::kBroadcastTo:
      return {1, 1};
    case ir::OpKind::kWhere:
    case ir::OpKind::kScatterAdd:
      return {3, 3};
    case ir::OpKind::kRmsNorm:
    case ir::OpKind::kMatMul:
    case ir::OpKind::kSoftmaxGrad:
    case ir::OpKind::kLogSoftmaxGrad:
    case ir::OpKind::kGather:
      return {2, 2};
    case ir::OpKind::kLayerNorm:
    case ir::OpKind::kLayerNormGrad:
    case ir::OpKind::kRmsNormGrad:
      return {3, 3};
    case ir::OpKind::kConcat:
      return {1, -1};
    default:
      return {-1, -1};
  }
}

absl::StatusOr<ir::Shape> ReduceShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      const ir::Shape& x) {
  absl::StatusOr<int64_t> axis = internal::NormalizeAxis(ctx, attrs.axis, 0, x);
  if (!axis.ok()) return axis.status();
  ir::Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (static_cast<int64_t>(i) != *axis) {
      out.push_back(x[i]);
    } else if (attrs.keepdims) {
      out.push_back(ir::SymExpr(1));
    }
  }
  return out;
}

absl::Status RequireRank(const RuleContext& ctx, const ir::Shape& x, int input, size_t rank) {
  if (x.size() >= rank) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ctx.op, ": input ", input, " shape ", ctx.Shape(x),
                                                 " has rank ", x.size(),
                                                 "; expected rank >= ", rank));
}

absl::StatusOr<ir::Shape> NormShape(const RuleContext& ctx, std::span<const ir::Shape> in) {
  const ir::Shape& x = in[0];
  if (absl::Status s = RequireRank(ctx, x, 0, 1); !s.ok()) return s;
  const ir::Shape expected = {x.back()};
  static constexpr const char* kRoles[] = {"x", "weight", "bias"};
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i] != expected) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx.op, ": input ", i, " (", kRoles[i], ") shape ", ctx.Shape(in[i]),
                       " does not match the last dim of input 0 shape ", ctx.Shape(x),
                       " (expected ", ctx.Shape(expected), ")"));
    }
  }
  return x;
}

// softmax_grad(y, dy), log_softmax_grad(y, dy): dy has y's shape.
absl::StatusOr<ir::Shape> RowGradShape(const RuleContext& ctx, std::span<const ir::Shape> in) {
  const ir::Shape& y = in[0];
  if (absl::Status s = RequireRank(ctx, y, 0, 1); !s.ok()) return s;
  if (in[1] != y) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.op, ": input 1 (dy) shape ",
                                                   ctx.Shape(in[1]), " does not match input 0 (y)",
                                                   " shape ", ctx.Shape(y)));
  }
  return y;
}

// layer_norm_grad(x, weight, dy), rms_norm_grad(x, weight, dy): weight is [x's last dim], dy
// has x's shape.
absl::StatusOr<ir::Shape> NormGradShape(const RuleContext& ctx, std::span<const ir::Shape> in) {
  absl::StatusOr<ir::Shape> x = NormShape(ctx, in.first(2));
  if (!x.ok()) return x.status();
  if (in[2] != *x) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.op, ": input 2 (dy) shape ",
                                                   ctx.Shape(in[2]), " does not match input 0 (x)",
                                                   " shape ", ctx.Shape(*x)));
  }
  return x;
}

}  // namespace

absl::Status CheckArity(ir::OpKind op, size_t num_inputs) {
  auto [lo, hi] = Arity(op);
  if (lo < 0) {
    return absl::InvalidArgumentError(absl::StrCat("unknown op kind ", static_cast<int>(op)));
  }
  const int n = static_cast<int>(num_inputs);
  if (n >= lo && (hi < 0 || n <= hi)) return absl::OkStatus();
  std::string expected = hi < 0 ? absl::StrCat("at least ", lo) : absl::StrCat(lo);
  return absl::InvalidArgumentError(absl::StrCat(std::string(ir::OpName(op)), ": expects ",
                                                 expected, " input", lo == 1 && hi == 1 ? "" : "s",
                                                 ", got ", num_inputs));
}

absl::StatusOr<ir::Shape> InferShape(ir::OpKind op, const ir::Attrs& attrs,
                                     std::span<const ir::Shape> inputs,
                                     std::vector<ir::SymbolInfo>* symbols,
                                     std::vector<ir::ShapeGuard>* guards) {
  if (absl::Status s = CheckArity(op, inputs.size()); !s.ok()) return s;
  RuleContext ctx{std::string(ir::OpName(op)), {}, symbols, guards};
  if (symbols != nullptr) {
    for (const ir::SymbolInfo& info : *symbols) ctx.names.push_back(info.name);
  }
  if (ir::IsBinaryElementwise(op) || ir::IsComparison(op)) {
    return internal::Broadcast(ctx, inputs[0], 0, inputs[1], 1, "axis");
  }
  if (ir::IsUnaryElementwise(op)) return inputs[0];  // includes cast
  if (IsReduce(op)) return ReduceShape(ctx, attrs, inputs[0]);
  switch (op) {
    case ir::OpKind::kInput:
      return absl::InvalidArgumentError(
          "input: the shape of an input comes from the function signature, not from a rule");
    case ir::OpKind::kConstant:
      return ir::Shape{};
    case ir::OpKind::kSoftmax:
    case ir::OpKind::kLogSoftmax: {
      if (absl::Status s = RequireRank(ctx, inputs[0], 0, 1); !s.ok()) return s;
      return inputs[0];
    }
    case ir::OpKind::kLayerNorm:
    case ir::OpKind::kRmsNorm:
      return NormShape(ctx, inputs);
    case ir::OpKind::kSoftmaxGrad:
    case ir::OpKind::kLogSoftmaxGrad:
      return RowGradShape(ctx, inputs);
    case ir::OpKind::kLayerNormGrad:
    case ir::OpKind::kRmsNormGrad:
      return NormGradShape(ctx, inputs);
    case ir::OpKind::kMatMul:
      return internal::MatMulShape(ctx, attrs, inputs[0], inputs[1]);
    case ir::OpKind::kTranspose:
      return internal::TransposeShape(ctx, attrs, inputs[0]);
    case ir::OpKind::kReshape:
      return internal::ReshapeShape(ctx, attrs, inputs[0]);
    case ir::OpKind::kBroadcastTo:
      return internal::BroadcastToShape(ctx, attrs, inputs[0]);
    case ir::OpKind::kConcat:
      return internal::ConcatShape(ctx, attrs, inputs);
    case ir::OpKind::kSlice:
      return internal::SliceShape(ctx, attrs, inputs[0]);
    case ir::OpKind::kWhere:
      return internal::WhereShape(ctx, inputs);
    case ir::OpKind::kIota:
      return internal::IotaShape(ctx, attrs, inputs[0]);
    case ir::OpKind::kOneHot:
      return internal::OneHotShape(ctx, attrs, inputs[0]);
    case ir::OpKind::kGather:
      return internal::GatherShape(ctx, attrs, inputs[0], inputs[1]);
    case ir::OpKind::kScatterAdd:
      return internal::ScatterAddShape(ctx, attrs, inputs);
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown op kind ", static_cast<int>(op)));
}

absl::StatusOr<ir::DType> InferDType(ir::OpKind op, const ir::Attrs& attrs,
                                     std::span<const ir::DType> inputs) {
  if (absl::Status s = CheckArity(op, inputs.size()); !s.ok()) return s;
  if (op == ir::OpKind::kInput) {
    return absl::InvalidArgumentError(
        "input: the dtype of an input comes from the function signature, not from a rule");
  }
  return internal::DTypeRule(op, attrs, inputs);
}

}  // namespace pto::ops
