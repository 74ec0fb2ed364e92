#include "jit/passes/graph_rewrite.h"

namespace pto::jit {

void ApplyReplacements(ir::Graph& graph, const std::vector<int>& replacement) {
  auto resolve = [&](int id) {
    while (replacement[id] != id) id = replacement[id];
    return id;
  };
  for (ir::Node& node : graph.nodes) {
    for (int& in : node.inputs) in = resolve(in);
  }
  for (int& out : graph.outputs) out = resolve(out);
}

std::vector<int> CountUses(const ir::Graph& graph) {
  std::vector<int> uses(graph.nodes.size(), 0);
  for (const ir::Node& node : graph.nodes) {
    for (int in : node.inputs) ++uses[in];
  }
  for (int out : graph.outputs) ++uses[out];
  return uses;
}

std::vector<std::vector<int>> Consumers(const ir::Graph& graph) {
  std::vector<std::vector<int>> consumers(graph.nodes.size());
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    for (int in : graph.nodes[i].inputs) consumers[in].push_back(i);
  }
  return consumers;
}

}  // namespace pto::jit
