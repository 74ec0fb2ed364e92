// The inputs of the pass tests in a few lines: tensor graphs traced from a lambda over inputs
// of named shapes, and tile graphs of hand-made kernels over buffers of given sizes.
// Row-op and reduce kernels: tests/jit/codegen/kernel_builders.h; a device to schedule for:
// tests/jit/e2e/test_util.h (Avx512Device).
#ifndef PTO_TESTS_JIT_PASSES_BUILDERS_H_
#define PTO_TESTS_JIT_PASSES_BUILDERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "jit/ir/graph.h"
#include "jit/ir/tile_graph.h"
#include "pto/runtime.h"

namespace pto::jit::testing {

// A dim of a traced input: a constant, or the name of one of TraceGraph's symbols.
class Dim {
 public:
  Dim(int value) : value_(value) {}             // NOLINT(google-explicit-constructor)
  Dim(int64_t value) : value_(value) {}         // NOLINT(google-explicit-constructor)
  Dim(const char* symbol) : symbol_(symbol) {}  // NOLINT(google-explicit-constructor)
  ir::SymExpr Resolve(const std::vector<ir::SymbolInfo>& symbols) const;

 private:
  int64_t value_ = 0;
  std::string symbol_;
};

// The tensor graph of `fn` traced over inputs of `shapes` with `symbols`, e.g.
//   TraceGraph([](std::span<const Value> v) { return std::vector{exp(v[0])}; },
//              {{"batch", 8}}, {{"batch", 1, 64}})
// A trace that fails fails the test (and gives an empty graph).
ir::Graph TraceGraph(const TraceFn& fn, const std::vector<std::vector<Dim>>& shapes,
                     std::vector<ir::SymbolInfo> symbols = {});

// The text (ir::Graph::ToString) of `graph` after `pass`, e.g. TextAfter(EliminateDeadCode, g).
std::string TextAfter(void (*pass)(ir::Graph&), ir::Graph graph);

// A tile graph stated buffer by buffer and call by call:
//   TileGraphBuilder t;
//   const int x = t.Input(0, 64), a = t.Temp(64), y = t.Output(0, 64);
//   t.Call(Elementwise({8, 8}, ir::ExprOp::kExp), {x, a});
//   t.Call(Elementwise({8, 8}, ir::ExprOp::kNeg), {a, y});
class TileGraphBuilder {
 public:
  explicit TileGraphBuilder(std::vector<ir::SymbolInfo> symbols = {});
  // Buffers of `elements` f32 elements; each returns the buffer's id.
  int Input(int index, ir::SymExpr elements);
  int Output(int index, ir::SymExpr elements);
  int Temp(ir::SymExpr elements);
  // Appends a call of `kernel` with kernel slot s bound to buffer buffers[s]; returns its index.
  int Call(ir::Kernel kernel, std::vector<int> buffers);
  ir::TileGraph& graph() { return tiles_; }

 private:
  int Add(ir::BufferKind kind, int index, ir::SymExpr elements);
  ir::TileGraph tiles_;
};

// out = op(in) (unary op) or op(in0, in1) (binary op) at every point of `domain`, every access
// dense row-major over it. Slots: the inputs, then out.
ir::Kernel Elementwise(ir::Shape domain, ir::ExprOp op);

// C = A · B with no epilogue, over slots A, B, C (dense, row-major). A is [batch.., M, K], C
// [batch.., M, N]; B is [K, N] (N stride 1: the broadcast form) or, with b_transposed, [N, K]
// (K stride 1: the dot-product form), and has a batch dim of its own unless b_shared.
struct MatMulDims {
  ir::SymExpr m, n, k;
  ir::SymExpr batch = 0;  // 0: no batch dim
  bool b_transposed = false;
  bool b_shared = false;
};
ir::Kernel MatMul(const MatMulDims& dims);

}  // namespace pto::jit::testing

#endif  // PTO_TESTS_JIT_PASSES_BUILDERS_H_
