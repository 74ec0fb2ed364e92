#include "jit/passes/recompute_cheap_values.h"

#include <vector>

#include "jit/passes/backward_copies.h"

namespace pto::jit {
namespace {

bool Elementwise(ir::OpKind op) {
  return ir::IsElementwise(op) || op == ir::OpKind::kBroadcastTo || op == ir::OpKind::kWhere;
}

bool Leaf(const ir::Node& n) { return n.op == ir::OpKind::kInput || n.op == ir::OpKind::kConstant; }

}  // namespace

int RecomputeCheapValues(ir::Graph& graph, int forward_nodes) {
  const int n = static_cast<int>(graph.nodes.size());
  const std::vector<bool> saved = ReadByBackward(graph, forward_nodes);
  std::vector<bool> is_output(n, false);
  for (int o : graph.outputs) is_output[o] = true;

  // In forward order, so each cone sees the final decision of every value below it: a value
  // that stays saved ends a cone; a recomputed one is part of it.
  std::vector<bool> recompute(forward_nodes, false);
  for (int v = 0; v < forward_nodes; ++v) {
    const ir::Node& node = graph.nodes[v];
    if (!saved[v] || is_output[v] || Leaf(node) || !Elementwise(node.op)) continue;
    std::vector<int> stack = {v};
    std::vector<bool> in_cone(forward_nodes, false);
    in_cone[v] = true;
    int ops = 0;
    bool ok = true;
    while (!stack.empty() && ok) {
      const int c = stack.back();
      stack.pop_back();
      ++ops;
      for (int in : graph.nodes[c].inputs) {
        const ir::Node& m = graph.nodes[in];
        if (in_cone[in] || Leaf(m) || (saved[in] && !recompute[in])) continue;
        // Another value would have to be kept instead, or the cone is not elementwise.
        if (!Elementwise(m.op)) ok = false;
        in_cone[in] = true;
        stack.push_back(in);
      }
      if (ops > kMaxRecomputedOps) ok = false;
    }
    recompute[v] = ok;
  }

  // The backward nodes read copies of the recomputed values, each cone copied once.
  return CopyForBackward(graph, forward_nodes, recompute, [&](int in, int /*node*/) {
    return !Leaf(graph.nodes[in]) && (!saved[in] || recompute[in]);
  });
}

int64_t SavedBytes(const ir::Graph& graph, int forward_nodes,
                   std::span<const int64_t> symbol_values) {
  const std::vector<bool> saved = ReadByBackward(graph, forward_nodes);
  int64_t bytes = 0;
  for (int v = 0; v < forward_nodes; ++v) {
    const ir::Node& node = graph.nodes[v];
    if (!saved[v] || Leaf(node)) continue;
    int64_t elements = 1;
    for (const ir::SymExpr& d : node.shape) elements *= d.Evaluate(symbol_values);
    bytes += elements * 4;  // f32 and i32
  }
  return bytes;
}

}  // namespace pto::jit
