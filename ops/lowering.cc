#include "ops/lowering.h"

#include <optional>

namespace pto::ops {

std::optional<ir::ExprOp> ElementwiseExprOp(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::kAdd:
      return ir::ExprOp::kAdd;
    case ir::OpKind::kSub:
      return ir::ExprOp::kSub;
    case ir::OpKind::kMul:
      return ir::ExprOp::kMul;
    case ir::OpKind::kDiv:
      return ir::ExprOp::kDiv;
    case ir::OpKind::kMax:
      return ir::ExprOp::kMax;
    case ir::OpKind::kMin:
      return ir::ExprOp::kMin;
    case ir::OpKind::kNeg:
      return ir::ExprOp::kNeg;
    case ir::OpKind::kAbs:
      return ir::ExprOp::kAbs;
    case ir::OpKind::kExp:
      return ir::ExprOp::kExp;
    case ir::OpKind::kLog:
      return ir::ExprOp::kLog;
    case ir::OpKind::kSqrt:
      return ir::ExprOp::kSqrt;
    case ir::OpKind::kRsqrt:
      return ir::ExprOp::kRsqrt;
    case ir::OpKind::kTanh:
      return ir::ExprOp::kTanh;
    case ir::OpKind::kSigmoid:
      return ir::ExprOp::kSigmoid;
    case ir::OpKind::kRelu:
      return ir::ExprOp::kRelu;
    case ir::OpKind::kGeluTanh:
      return ir::ExprOp::kGeluTanh;
    case ir::OpKind::kGeluErf:
      return ir::ExprOp::kGeluErf;
    case ir::OpKind::kSilu:
      return ir::ExprOp::kSilu;
    case ir::OpKind::kErf:
      return ir::ExprOp::kErf;
    case ir::OpKind::kGeluErfGrad:
      return ir::ExprOp::kGeluErfGrad;
    case ir::OpKind::kEq:
      return ir::ExprOp::kEq;
    case ir::OpKind::kNe:
      return ir::ExprOp::kNe;
    case ir::OpKind::kLt:
      return ir::ExprOp::kLt;
    case ir::OpKind::kLe:
      return ir::ExprOp::kLe;
    case ir::OpKind::kGt:
      return ir::ExprOp::kGt;
    case ir::OpKind::kGe:
      return ir::ExprOp::kGe;
    case ir::OpKind::kWhere:
      return ir::ExprOp::kSelect;
    case ir::OpKind::kCast:
      return ir::ExprOp::kCast;
    default:
      return std::nullopt;
  }
}

std::optional<ir::ReduceKind> ReduceKindOf(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::kReduceSum:
      return ir::ReduceKind::kSum;
    case ir::OpKind::kReduceMax:
      return ir::ReduceKind::kMax;
    case ir::OpKind::kReduceMean:
      return ir::ReduceKind::kMean;
    case ir::OpKind::kLogSumExp:
      return ir::ReduceKind::kLogSumExp;
    default:
      return std::nullopt;
  }
}

std::optional<ir::RowOpKind> RowOpKindOf(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::kSoftmax:
      return ir::RowOpKind::kSoftmax;
    case ir::OpKind::kLogSoftmax:
      return ir::RowOpKind::kLogSoftmax;
    case ir::OpKind::kLayerNorm:
      return ir::RowOpKind::kLayerNorm;
    case ir::OpKind::kRmsNorm:
      return ir::RowOpKind::kRmsNorm;
    case ir::OpKind::kSoftmaxGrad:
      return ir::RowOpKind::kSoftmaxGrad;
    case ir::OpKind::kLogSoftmaxGrad:
      return ir::RowOpKind::kLogSoftmaxGrad;
    case ir::OpKind::kLayerNormGrad:
      return ir::RowOpKind::kLayerNormGrad;
    case ir::OpKind::kRmsNormGrad:
      return ir::RowOpKind::kRmsNormGrad;
    default:
      return std::nullopt;
  }
}

}  // namespace pto::ops
