#include "jit/passes/recompute_checkpoints.h"

#include <vector>

#include "jit/passes/backward_copies.h"

namespace pto::jit {

int RecomputeCheckpoints(ir::Graph& graph, int forward_nodes) {
  const std::vector<bool> saved = ReadByBackward(graph, forward_nodes);
  std::vector<bool> is_output(graph.nodes.size(), false);
  for (int o : graph.outputs) is_output[o] = true;
  auto leaf = [&](int id) {
    const ir::OpKind op = graph.nodes[id].op;
    return op == ir::OpKind::kInput || op == ir::OpKind::kConstant;
  };
  std::vector<bool> recompute(forward_nodes, false);
  int marked = 0;
  for (int v = 0; v < forward_nodes; ++v) {
    if (graph.nodes[v].checkpoint < 0) continue;
    ++marked;
    recompute[v] = saved[v] && !is_output[v] && !leaf(v);
  }
  int recomputed = 0;
  if (marked > 0) {
    // A copy recomputes what its segment computed; values from outside the segment (its
    // inputs) are read as they are.
    recomputed = CopyForBackward(graph, forward_nodes, recompute, [&](int in, int node) {
      return !leaf(in) && graph.nodes[in].checkpoint >= 0 &&
             graph.nodes[in].checkpoint == graph.nodes[node].checkpoint;
    });
  }
  for (ir::Node& n : graph.nodes) n.checkpoint = -1;
  return recomputed;
}

}  // namespace pto::jit
