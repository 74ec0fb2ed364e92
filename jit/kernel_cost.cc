#include "jit/kernel_cost.h"

#include <algorithm>
#include <map>
#include <vector>

namespace pto::jit {
namespace {

double ExpressionFlops(const std::vector<ir::ExprNode>& nodes) {
  double flops = 0;
  for (const ir::ExprNode& n : nodes) flops += FlopsOf(n.op);
  return flops;
}

// The nodes of the input program that compute `input_value` (the reduce's or row op's input)
// and `input_dy` (a backward row op's second row).
double InputFlops(const ir::Kernel& k) {
  if (k.input_value < 0 || k.input.empty()) return 0;
  std::vector<bool> used(k.input.size(), false);
  used[k.input_value] = true;
  if (k.input_dy >= 0 && k.input_dy < static_cast<int>(k.input.size())) used[k.input_dy] = true;
  double flops = 0;
  for (int i = static_cast<int>(k.input.size()) - 1; i >= 0; --i) {
    if (!used[i]) continue;
    const ir::ExprNode& n = k.input[i];
    flops += FlopsOf(n.op);
    if (n.a >= 0) used[n.a] = true;
    if (n.b >= 0) used[n.b] = true;
  }
  return flops;
}

int DTypeBytes(ir::DType t) {
  switch (t) {
    case ir::DType::kF32:
    case ir::DType::kI32:
      return 4;
    case ir::DType::kF16:
    case ir::DType::kBF16:
      return 2;
    case ir::DType::kI8:
      return 1;
    case ir::DType::kF64:
      return 8;  // reference only: never compiled
  }
  return 4;
}

}  // namespace

int FlopsOf(ir::ExprOp op) {
  switch (op) {
    case ir::ExprOp::kLoad:
    case ir::ExprOp::kConst:
    case ir::ExprOp::kAcc:
    case ir::ExprOp::kIota:
    case ir::ExprOp::kGather:
      return 0;
    case ir::ExprOp::kEq:
    case ir::ExprOp::kNe:
    case ir::ExprOp::kLt:
    case ir::ExprOp::kLe:
    case ir::ExprOp::kGt:
    case ir::ExprOp::kGe:
    case ir::ExprOp::kSelect:
    case ir::ExprOp::kCast:
    case ir::ExprOp::kAdd:
    case ir::ExprOp::kSub:
    case ir::ExprOp::kMul:
    case ir::ExprOp::kDiv:
    case ir::ExprOp::kMax:
    case ir::ExprOp::kMin:
    case ir::ExprOp::kNeg:
    case ir::ExprOp::kAbs:
    case ir::ExprOp::kSqrt:
    case ir::ExprOp::kRsqrt:
    case ir::ExprOp::kRelu:
      return 1;
    case ir::ExprOp::kExp:
      return 10;
    case ir::ExprOp::kLog:
      return 12;
    case ir::ExprOp::kTanh:
      return 14;
    case ir::ExprOp::kSigmoid:
      return 12;
    case ir::ExprOp::kSilu:
      return 13;
    case ir::ExprOp::kGeluTanh:
    case ir::ExprOp::kGeluErf:
    case ir::ExprOp::kGeluErfGrad:
      return 20;
    case ir::ExprOp::kErf:
      return 16;
  }
  return 1;
}

int RowOpFlops(ir::RowOpKind kind) {
  switch (kind) {
    case ir::RowOpKind::kSoftmax:
    case ir::RowOpKind::kLogSoftmax:
      return 5;
    case ir::RowOpKind::kLayerNorm:
      return 7;
    case ir::RowOpKind::kRmsNorm:
      return 4;
    case ir::RowOpKind::kSoftmaxGrad:
    case ir::RowOpKind::kLogSoftmaxGrad:
      return 4;
    case ir::RowOpKind::kLayerNormGrad:
      return 13;
    case ir::RowOpKind::kRmsNormGrad:
      return 7;
  }
  return 1;
}

KernelCost CostOf(const ir::Kernel& k, std::span<const int64_t> symbols) {
  std::vector<double> extent;
  for (const ir::SymExpr& d : k.domain) extent.push_back(static_cast<double>(d.Evaluate(symbols)));
  double points = 1;
  for (double e : extent) points *= e;
  KernelCost cost;
  const double output_flops = ExpressionFlops(k.output);
  switch (k.kind) {
    case ir::KernelKind::kElementwise:
      cost.flops = points * output_flops;
      break;
    case ir::KernelKind::kReduce: {
      const double axis = k.axis < static_cast<int>(extent.size()) ? extent[k.axis] : 1;
      const double results = axis > 0 ? points / axis : 0;
      cost.flops = points * (InputFlops(k) + 1) +
                   results * (output_flops + (k.reduce == ir::ReduceKind::kMean ? 1 : 0));
      // logsumexp: a second pass over the axis (subtract, exp counted 1, sum), a log and an add.
      if (k.reduce == ir::ReduceKind::kLogSumExp) {
        cost.flops += points * (InputFlops(k) + 3) + results * 2;
      }
      break;
    }
    case ir::KernelKind::kRowOp:
      cost.flops = points * (InputFlops(k) + RowOpFlops(k.row_op) + output_flops);
      break;
    case ir::KernelKind::kMatMul:
      cost.flops = 2 * points * static_cast<double>(k.k.Evaluate(symbols)) + points * output_flops;
      break;
    case ir::KernelKind::kScatterAdd:  // one add per update element: P x M x Q
      cost.flops = extent.size() == 4 ? extent[0] * extent[2] * extent[3] : 0;
      break;
  }
  // Per slot, the largest footprint of its accesses. A matmul's a and b have one stride more
  // (the contraction, of extent k).
  std::map<int, double> slot_bytes;
  for (size_t i = 0; i < k.accesses.size(); ++i) {
    const ir::Access& a = k.accesses[i];
    double elements = 1;
    for (size_t d = 0; d < a.strides.size(); ++d) {
      const double e = d < extent.size() ? extent[d] : static_cast<double>(k.k.Evaluate(symbols));
      if (a.strides[d].Evaluate(symbols) != 0) elements *= e;
    }
    double& bytes = slot_bytes[a.buffer];
    bytes = std::max(bytes, elements * DTypeBytes(a.dtype));
  }
  for (const auto& [slot, bytes] : slot_bytes) cost.bytes += bytes;
  return cost;
}

}  // namespace pto::jit
