// Kernel costs (jit/kernel_cost.h): exact flops and bytes of a matmul and an elementwise
// kernel, at symbol values.
#include "jit/kernel_cost.h"

#include <vector>

#include "gtest/gtest.h"

namespace pto::jit {
namespace {

using ir::ExprNode;
using ir::ExprOp;
using ir::SymExpr;

ir::Access Access(int buffer, std::vector<SymExpr> strides) {
  ir::Access a;
  a.buffer = buffer;
  a.strides = std::move(strides);
  return a;
}

// out[m, n] = sum_k a[m, k] * b[k, n], M a symbol (s0), N 5, K 7.
TEST(KernelCost, MatmulIsTwoMnkFlopsAndEachOperandOnce) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kMatMul;
  const SymExpr m = SymExpr::Symbol(0);
  k.domain = {m, 5};
  k.k = 7;
  k.accesses = {Access(0, {7, 0, 1}), Access(1, {0, 1, 5}), Access(2, {5, 1})};
  k.a = 0;
  k.b = 1;
  k.output = {ExprNode{ExprOp::kAcc}};
  k.stores = {{2, 0}};
  const std::vector<int64_t> symbols = {6};
  const KernelCost cost = CostOf(k, symbols);
  EXPECT_EQ(cost.flops, 2.0 * 6 * 5 * 7);
  EXPECT_EQ(cost.bytes, 4.0 * (6 * 7 + 7 * 5 + 6 * 5));
  // With a bias epilogue (acc + bias[n]): one flop more per output element; the bias is read
  // once per column.
  k.accesses.push_back(Access(3, {0, 1}));
  k.output = {ExprNode{ExprOp::kAcc}, ExprNode{ExprOp::kLoad, -1, -1, 3},
              ExprNode{ExprOp::kAdd, 0, 1}};
  k.stores = {{2, 2}};
  const KernelCost biased = CostOf(k, symbols);
  EXPECT_EQ(biased.flops, 2.0 * 6 * 5 * 7 + 6 * 5);
  EXPECT_EQ(biased.bytes, 4.0 * (6 * 7 + 7 * 5 + 6 * 5 + 5));
}

// out[r, c] = gelu(x[r, c] + bias[c]) * 2 over a [4, 8] domain.
TEST(KernelCost, ElementwiseCountsEachOperationAtEachPoint) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.domain = {4, 8};
  k.accesses = {Access(0, {8, 1}), Access(1, {0, 1}), Access(2, {8, 1})};
  k.output = {ExprNode{ExprOp::kLoad, -1, -1, 0},
              ExprNode{ExprOp::kLoad, -1, -1, 1},
              ExprNode{ExprOp::kAdd, 0, 1},
              ExprNode{ExprOp::kGeluTanh, 2},
              ExprNode{ExprOp::kConst, -1, -1, -1, 2.0f},
              ExprNode{ExprOp::kMul, 3, 4}};
  k.stores = {{2, 5}};
  const KernelCost cost = CostOf(k, {});
  EXPECT_EQ(FlopsOf(ExprOp::kGeluTanh), 20);
  EXPECT_EQ(cost.flops, 32.0 * (1 + 20 + 1));
  EXPECT_EQ(cost.bytes, 4.0 * (32 + 8 + 32));
}

TEST(KernelCost, RowOpCountsItsInputItsRowOperationAndItsOutput) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kRowOp;
  k.row_op = ir::RowOpKind::kSoftmax;
  k.domain = {3, 16};
  k.accesses = {Access(0, {16, 1}), Access(1, {16, 1})};
  k.input = {ExprNode{ExprOp::kLoad, -1, -1, 0}};
  k.input_value = 0;
  k.output = {ExprNode{ExprOp::kAcc}};
  k.stores = {{1, 0}};
  const KernelCost cost = CostOf(k, {});
  EXPECT_EQ(cost.flops, 48.0 * RowOpFlops(ir::RowOpKind::kSoftmax));
  EXPECT_EQ(cost.bytes, 4.0 * (48 + 48));
}

// A backward row op's input program computes both of its rows: x, and dy * weight.
TEST(KernelCost, BackwardRowOpCountsBothInputRows) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kRowOp;
  k.row_op = ir::RowOpKind::kLayerNormGrad;
  k.domain = {3, 16};
  k.accesses = {Access(0, {16, 1}), Access(1, {0, 1}), Access(2, {16, 1}), Access(3, {16, 1})};
  k.input = {ExprNode{ExprOp::kLoad, -1, -1, 0}, ExprNode{ExprOp::kLoad, -1, -1, 2},
             ExprNode{ExprOp::kLoad, -1, -1, 1}, ExprNode{ExprOp::kMul, 1, 2}};
  k.input_value = 0;
  k.input_dy = 3;
  k.output = {ExprNode{ExprOp::kAcc}};
  k.stores = {{3, 0}};
  const KernelCost cost = CostOf(k, {});
  EXPECT_EQ(RowOpFlops(ir::RowOpKind::kLayerNormGrad), 13);
  EXPECT_EQ(cost.flops, 48.0 * (1 + 13));
  EXPECT_EQ(cost.bytes, 4.0 * (48 + 16 + 48 + 48));
}

// logsumexp: the max pass (1 per point), then a second pass (3 per point: subtract, exp
// counted 1, sum) and the log and the shift's add per result.
TEST(KernelCost, LogSumExpCountsItsTwoPasses) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kReduce;
  k.reduce = ir::ReduceKind::kLogSumExp;
  k.axis = 1;
  k.domain = {3, 16};
  k.accesses = {Access(0, {16, 1}), Access(1, {1, 0})};
  k.input = {ExprNode{ExprOp::kLoad, -1, -1, 0}};
  k.input_value = 0;
  k.output = {ExprNode{ExprOp::kAcc}};
  k.stores = {{1, 0}};
  EXPECT_EQ(CostOf(k, {}).flops, 48.0 * 1 + 48.0 * 3 + 3.0 * 2);
}

}  // namespace
}  // namespace pto::jit
