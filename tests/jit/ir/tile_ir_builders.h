// Pieces of tile IR built by hand (expression programs, accesses), for the tests of codegen and
// of the tile-graph passes. Header only: it needs nothing but jit/ir.
#ifndef PTO_TESTS_JIT_IR_TILE_IR_BUILDERS_H_
#define PTO_TESTS_JIT_IR_TILE_IR_BUILDERS_H_

#include <utility>
#include <vector>

#include "jit/ir/tile_ir.h"

namespace pto::jit::testing {

// Builds an ExprNode program.
class Program {
 public:
  int Load(int access) { return Push({ir::ExprOp::kLoad, -1, -1, access, 0}); }
  int Const(float v) { return Push({ir::ExprOp::kConst, -1, -1, -1, v}); }
  int Acc() { return Push({ir::ExprOp::kAcc, -1, -1, -1, 0}); }
  int Un(ir::ExprOp op, int a) { return Push({op, a, -1, -1, 0}); }
  int Bin(ir::ExprOp op, int a, int b) { return Push({op, a, b, -1, 0}); }
  const std::vector<ir::ExprNode>& nodes() const { return nodes_; }

 private:
  int Push(ir::ExprNode n) {
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  }
  std::vector<ir::ExprNode> nodes_;
};

inline ir::Access MakeAccess(int buffer, std::vector<ir::SymExpr> strides, ir::SymExpr offset = 0) {
  ir::Access a;
  a.buffer = buffer;
  a.strides = std::move(strides);
  a.offset = std::move(offset);
  return a;
}

}  // namespace pto::jit::testing

#endif  // PTO_TESTS_JIT_IR_TILE_IR_BUILDERS_H_
