#include "jit/passes/dce.h"

namespace pto::jit {

void EliminateDeadCode(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<bool> live(n, false);
  for (int out : graph.outputs) live[out] = true;
  for (int i = n - 1; i >= 0; --i) {
    if (graph.nodes[i].op == ir::OpKind::kInput) live[i] = true;
    if (!live[i]) continue;
    for (int in : graph.nodes[i].inputs) live[in] = true;
  }
  std::vector<int> new_id(n, -1);
  std::vector<ir::Node> kept;
  for (int i = 0; i < n; ++i) {
    if (!live[i]) continue;
    new_id[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(graph.nodes[i]));
    for (int& in : kept.back().inputs) in = new_id[in];
  }
  graph.nodes = std::move(kept);
  for (int& out : graph.outputs) out = new_id[out];
}

}  // namespace pto::jit
