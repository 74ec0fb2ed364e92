#include "ops/gradient_rules.h"

#include "ops/gradient_rules_internal.h"

namespace pto::ops {

VjpRule FindVjpRule(ir::OpKind op) {
  using ir::OpKind;
  switch (op) {
    case OpKind::kConstant:
    case OpKind::kEq:
    case OpKind::kNe:
    case OpKind::kLt:
    case OpKind::kLe:
    case OpKind::kGt:
    case OpKind::kGe:
    case OpKind::kIota:
    case OpKind::kOneHot:
      return internal::NoGradient;
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kMax:
    case OpKind::kMin:
      return internal::BinaryVjp;
    case OpKind::kWhere:
      return internal::WhereVjp;
    case OpKind::kBroadcastTo:
      return internal::BroadcastToVjp;
    case OpKind::kNeg:
    case OpKind::kAbs:
    case OpKind::kExp:
    case OpKind::kLog:
    case OpKind::kSqrt:
    case OpKind::kRsqrt:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
    case OpKind::kRelu:
    case OpKind::kGeluTanh:
    case OpKind::kGeluErf:
    case OpKind::kSilu:
    case OpKind::kErf:
    case OpKind::kGeluErfGrad:
    case OpKind::kCast:
      return internal::UnaryVjp;
    case OpKind::kReduceSum:
    case OpKind::kReduceMean:
    case OpKind::kReduceMax:
    case OpKind::kLogSumExp:
      return internal::ReduceVjp;
    case OpKind::kSoftmax:
    case OpKind::kLogSoftmax:
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
      return internal::RowOpVjp;
    case OpKind::kMatMul:
      return internal::MatMulVjp;
    case OpKind::kTranspose:
    case OpKind::kReshape:
    case OpKind::kConcat:
    case OpKind::kSlice:
    case OpKind::kGather:
    case OpKind::kScatterAdd:
      return internal::MovementVjp;
    // Inputs are where gradients arrive; the backward row operators are not differentiated
    // again (no second derivatives).
    case OpKind::kInput:
    case OpKind::kSoftmaxGrad:
    case OpKind::kLogSoftmaxGrad:
    case OpKind::kLayerNormGrad:
    case OpKind::kRmsNormGrad:
      return nullptr;
  }
  return nullptr;
}

}  // namespace pto::ops
