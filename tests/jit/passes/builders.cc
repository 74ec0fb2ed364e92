#include "tests/jit/passes/builders.h"

#include <utility>

#include "gtest/gtest.h"
#include "jit/trace.h"
#include "tests/jit/ir/tile_ir_builders.h"

namespace pto::jit::testing {

using ir::SymExpr;

SymExpr Dim::Resolve(const std::vector<ir::SymbolInfo>& symbols) const {
  if (symbol_.empty()) return SymExpr(value_);
  for (size_t s = 0; s < symbols.size(); ++s) {
    if (symbols[s].name == symbol_) return SymExpr::Symbol(static_cast<int>(s));
  }
  ADD_FAILURE() << "no symbol named " << symbol_;
  return SymExpr(1);
}

ir::Graph TraceGraph(const TraceFn& fn, const std::vector<std::vector<Dim>>& shapes,
                     std::vector<ir::SymbolInfo> symbols) {
  std::vector<TraceInput> inputs;
  for (const std::vector<Dim>& shape : shapes) {
    TraceInput in;
    for (const Dim& d : shape) in.shape.push_back(d.Resolve(symbols));
    inputs.push_back(std::move(in));
  }
  absl::StatusOr<ir::Graph> graph = Trace(fn, inputs, std::move(symbols));
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : ir::Graph{};
}

std::string TextAfter(void (*pass)(ir::Graph&), ir::Graph graph) {
  pass(graph);
  return graph.ToString();
}

TileGraphBuilder::TileGraphBuilder(std::vector<ir::SymbolInfo> symbols) {
  tiles_.symbols = std::move(symbols);
}

int TileGraphBuilder::Add(ir::BufferKind kind, int index, SymExpr elements) {
  ir::Buffer b;
  b.kind = kind;
  b.index = index;
  b.elements = std::move(elements);
  tiles_.buffers.push_back(std::move(b));
  return static_cast<int>(tiles_.buffers.size()) - 1;
}

int TileGraphBuilder::Input(int index, SymExpr elements) {
  return Add(ir::BufferKind::kInput, index, std::move(elements));
}
int TileGraphBuilder::Output(int index, SymExpr elements) {
  return Add(ir::BufferKind::kOutput, index, std::move(elements));
}
int TileGraphBuilder::Temp(SymExpr elements) {
  return Add(ir::BufferKind::kTemp, 0, std::move(elements));
}

int TileGraphBuilder::Call(ir::Kernel kernel, std::vector<int> buffers) {
  ir::KernelCall call;
  call.kernel = std::move(kernel);
  call.buffers = std::move(buffers);
  tiles_.calls.push_back(std::move(call));
  return static_cast<int>(tiles_.calls.size()) - 1;
}

ir::Kernel Elementwise(ir::Shape domain, ir::ExprOp op) {
  const int inputs = ir::IsBinary(op) ? 2 : 1;
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = std::string("elementwise_") + ir::ExprOpName(op);
  k.num_buffers = inputs + 1;
  const std::vector<SymExpr> dense = ir::ContiguousStrides(domain);
  k.domain = std::move(domain);
  for (int s = 0; s <= inputs; ++s) k.accesses.push_back(MakeAccess(s, dense));
  Program p;
  const int v = inputs == 2 ? p.Bin(op, p.Load(0), p.Load(1)) : p.Un(op, p.Load(0));
  k.output = p.nodes();
  k.stores = {{inputs, v}};
  return k;
}

ir::Kernel MatMul(const MatMulDims& d) {
  const bool batched = d.batch != SymExpr(0);
  ir::Kernel k;
  k.kind = ir::KernelKind::kMatMul;
  k.name = "matmul";
  k.num_buffers = 3;
  k.domain = {d.m, d.n};
  if (batched) k.domain.insert(k.domain.begin(), d.batch);
  k.k = d.k;
  // Strides over the extended domain [batch.., M, N, K].
  std::vector<SymExpr> a = {d.k, 0, 1}, b, c = {d.n, 1};
  b = d.b_transposed ? std::vector<SymExpr>{0, d.k, 1} : std::vector<SymExpr>{0, 1, d.n};
  if (batched) {
    a.insert(a.begin(), d.m * d.k);
    b.insert(b.begin(), d.b_shared ? SymExpr(0) : d.k * d.n);
    c.insert(c.begin(), d.m * d.n);
  }
  k.accesses = {MakeAccess(0, a), MakeAccess(1, b), MakeAccess(2, c)};
  k.a = 0;
  k.b = 1;
  Program p;
  k.stores = {{2, p.Acc()}};
  k.output = p.nodes();
  return k;
}

}  // namespace pto::jit::testing
