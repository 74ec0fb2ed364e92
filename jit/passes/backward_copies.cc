#include "jit/passes/backward_copies.h"

namespace pto::jit {

std::vector<bool> ReadByBackward(const ir::Graph& graph, int forward_nodes) {
  std::vector<bool> saved(forward_nodes, false);
  for (size_t id = forward_nodes; id < graph.nodes.size(); ++id) {
    for (int in : graph.nodes[id].inputs) {
      if (in < forward_nodes) saved[in] = true;
    }
  }
  return saved;
}

int CopyForBackward(ir::Graph& graph, int forward_nodes, const std::vector<bool>& recompute,
                    const std::function<bool(int input, int node)>& copied) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<ir::Node> nodes(graph.nodes.begin(), graph.nodes.begin() + forward_nodes);
  std::vector<int> remap(n, -1), copy(forward_nodes, -1);
  std::vector<bool> counted(forward_nodes, false);
  for (int id = 0; id < forward_nodes; ++id) remap[id] = id;
  int copies = 0, recomputed_values = 0;
  std::function<int(int)> copy_of = [&](int v) -> int {
    if (copy[v] >= 0) return copy[v];
    ir::Node c = graph.nodes[v];
    for (int& in : c.inputs) {
      if (copied(in, v)) in = copy_of(in);
    }
    c.recomputed = true;
    c.name.clear();
    nodes.push_back(std::move(c));
    ++copies;
    return copy[v] = static_cast<int>(nodes.size()) - 1;
  };
  for (int id = forward_nodes; id < n; ++id) {
    ir::Node b = graph.nodes[id];
    for (int& in : b.inputs) {
      if (in < forward_nodes && recompute[in]) {
        if (!counted[in]) ++recomputed_values;
        counted[in] = true;
        in = copy_of(in);
      } else {
        in = remap[in];
      }
    }
    nodes.push_back(std::move(b));
    remap[id] = static_cast<int>(nodes.size()) - 1;
  }
  if (copies == 0) return 0;
  for (int& o : graph.outputs) o = remap[o];
  graph.nodes = std::move(nodes);
  return recomputed_values;
}

}  // namespace pto::jit
