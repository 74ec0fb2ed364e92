#include "kernel_builders.h"

#include <vector>

#include "tests/jit/ir/tile_ir_builders.h"

namespace pto::jit::testing {

using ir::ExprOp;
using ir::SymExpr;

ir::Kernel BroadcastKernel(SymExpr rows, SymExpr cols, const std::string& name) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = name;
  k.num_buffers = 4;
  k.domain = {rows, cols};
  k.accesses = {MakeAccess(0, {cols, 1}), MakeAccess(1, {1, 0}), MakeAccess(2, {0, 1}),
                MakeAccess(3, {cols, 1})};
  Program p;
  int v = p.Bin(ExprOp::kAdd, p.Bin(ExprOp::kMul, p.Load(0), p.Load(1)), p.Load(2));
  k.output = p.nodes();
  k.stores = {{3, v}};
  return k;
}

ir::Kernel ReduceKernel(int axis, ir::ReduceKind kind, int unroll, const std::string& name) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kReduce;
  k.name = name;
  k.num_buffers = 3;
  std::vector<SymExpr> dims = {SymExpr::Symbol(0), SymExpr::Symbol(1), SymExpr::Symbol(2)};
  k.domain = dims;
  k.axis = axis;
  k.reduce = kind;
  k.config.unroll = unroll;
  std::vector<SymExpr> in = {dims[1] * dims[2], dims[2], 1};
  // Output/bias: the input shape with the axis removed, contiguous.
  std::vector<SymExpr> out(3, 0);
  SymExpr stride = 1;
  for (int d = 2; d >= 0; --d) {
    if (d == axis) continue;
    out[d] = stride;
    stride = stride * dims[d];
  }
  k.accesses = {MakeAccess(0, in), MakeAccess(1, out), MakeAccess(2, out)};
  Program ip;
  k.input_value = ip.Bin(ExprOp::kMul, ip.Load(0), ip.Const(2.f));
  k.input = ip.nodes();
  Program op;
  int v = op.Bin(ExprOp::kAdd, op.Acc(), op.Load(1));
  k.output = op.nodes();
  k.stores = {{2, v}};
  return k;
}

ir::Kernel RowKernel(ir::RowOpKind op, int unroll, const std::string& name) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kRowOp;
  k.name = name;
  k.row_op = op;
  k.eps = 1e-5f;
  k.num_buffers = 4;
  std::vector<SymExpr> d = {SymExpr::Symbol(0), SymExpr::Symbol(1), SymExpr::Symbol(2)};
  k.domain = d;
  k.config.unroll = unroll;
  std::vector<SymExpr> st = {d[1] * d[2], d[2], 1};
  k.accesses = {MakeAccess(0, st), MakeAccess(1, {0, 0, 1}), MakeAccess(2, {0, 0, 1}),
                MakeAccess(3, st)};
  Program ip;
  k.input_value = ip.Bin(ExprOp::kMul, ip.Load(0), ip.Const(1.5f));
  k.input = ip.nodes();
  Program op_;
  int v = op_.Bin(ExprOp::kAdd, op_.Bin(ExprOp::kMul, op_.Acc(), op_.Load(1)), op_.Load(2));
  k.output = op_.nodes();
  k.stores = {{3, v}};
  return k;
}

}  // namespace pto::jit::testing
