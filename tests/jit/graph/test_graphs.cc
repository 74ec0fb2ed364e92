#include "tests/jit/graph/test_graphs.h"

#include <bit>
#include <cstdint>
#include <utility>

namespace pto::graph::testing {
namespace {

using ir::OpKind;
using ir::SymExpr;

int Add(ir::Graph& g, OpKind op, std::vector<int> inputs, ir::Shape shape, std::string name,
        ir::Attrs attrs = {}) {
  ir::Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.shape = std::move(shape);
  n.name = std::move(name);
  n.attrs = std::move(attrs);
  g.nodes.push_back(std::move(n));
  return static_cast<int>(g.nodes.size()) - 1;
}

int Input(ir::Graph& g, int index, ir::Shape shape, std::string name) {
  ir::Attrs a;
  a.index = index;
  return Add(g, OpKind::kInput, {}, std::move(shape), std::move(name), a);
}

}  // namespace

ir::Graph MakeMlp() {
  ir::Graph g;
  g.symbols.push_back({"batch", 1, 4096});
  g.num_inputs = 4;
  const SymExpr batch = SymExpr::Symbol(0);
  int x = Input(g, 0, {batch, 768}, "x");
  int w1 = Input(g, 1, {768, 3072}, "w1");
  int b1 = Input(g, 2, {3072}, "b1");
  int w2 = Input(g, 3, {3072, 768}, "w2");
  int h = Add(g, OpKind::kMatMul, {x, w1}, {batch, 3072}, "h");
  int hb = Add(g, OpKind::kAdd, {h, b1}, {batch, 3072}, "hb");
  int act = Add(g, OpKind::kGeluErf, {hb}, {batch, 3072}, "act");
  int y = Add(g, OpKind::kMatMul, {act, w2}, {batch, 768}, "y");
  int out = Add(g, OpKind::kAdd, {y, x}, {batch, 768}, "out");
  g.outputs = {out};
  return g;
}

ir::Graph MakeBranches() {
  ir::Graph g;
  g.symbols.push_back({"n", 1, 64});
  g.symbols.push_back({"m", 8, 8192});
  g.num_inputs = 2;
  const SymExpr n = SymExpr::Symbol(0), m = SymExpr::Symbol(1);
  int a = Input(g, 0, {n, m}, "a");
  int b = Input(g, 1, {m}, "b");
  int e = Add(g, OpKind::kExp, {a}, {n, m}, "e");
  ir::Attrs two;
  two.scalar = 2.0;
  int c = Add(g, OpKind::kConstant, {}, {}, "two", two);
  int p = Add(g, OpKind::kMul, {e, c}, {n, m}, "p");
  ir::Attrs sum;
  sum.axis = 1;
  sum.keepdims = true;
  int r = Add(g, OpKind::kReduceSum, {p}, {n, 1}, "r", sum);
  int t = Add(g, OpKind::kTanh, {b}, {m}, "t");
  g.outputs = {r, t};
  return g;
}

ir::Graph Reorder(const ir::Graph& graph, const std::vector<int>& new_order) {
  std::vector<int> new_id(graph.nodes.size(), -1);
  for (size_t k = 0; k < new_order.size(); ++k) new_id[new_order[k]] = static_cast<int>(k);
  ir::Graph out = graph;
  out.nodes.clear();
  for (int old : new_order) {
    ir::Node n = graph.nodes[old];
    for (int& in : n.inputs) in = new_id[in];
    out.nodes.push_back(std::move(n));
  }
  for (int& o : out.outputs) o = new_id[o];
  return out;
}

std::string Difference(const ir::Graph& a, const ir::Graph& b) {
  if (a.ToString() != b.ToString()) {
    return "ToString differs:\n" + a.ToString() + "vs\n" + b.ToString();
  }
  if (a.num_inputs != b.num_inputs) return "num_inputs differs";
  if (a.symbols.size() != b.symbols.size()) return "symbol count differs";
  for (size_t i = 0; i < a.symbols.size(); ++i) {
    const ir::SymbolInfo &s = a.symbols[i], &t = b.symbols[i];
    if (s.name != t.name || s.min != t.min || s.max != t.max || s.derived != t.derived) {
      return "symbol " + std::to_string(i) + " differs";
    }
  }
  if (a.nodes.size() != b.nodes.size()) return "node count differs";
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const ir::Node &n = a.nodes[i], &m = b.nodes[i];
    if (n.op != m.op || n.inputs != m.inputs || n.dtype != m.dtype || n.shape != m.shape ||
        n.name != m.name) {
      return "node " + std::to_string(i) + " differs";
    }
    // Bitwise for the floats: -0.0 and NaN must survive.
    ir::Attrs x = n.attrs, y = m.attrs;
    if (std::bit_cast<uint64_t>(x.scalar) != std::bit_cast<uint64_t>(y.scalar) ||
        std::bit_cast<uint32_t>(x.eps) != std::bit_cast<uint32_t>(y.eps)) {
      return "node " + std::to_string(i) + " float attrs differ";
    }
    x.scalar = y.scalar = 0;
    x.eps = y.eps = 0;
    if (!(x == y)) return "node " + std::to_string(i) + " attrs differ";
  }
  if (a.outputs != b.outputs) return "outputs differ";
  return "";
}

}  // namespace pto::graph::testing
