#include "jit/passes/cse.h"

#include <map>
#include <numeric>
#include <string>
#include <tuple>

#include "jit/passes/graph_rewrite.h"

namespace pto::jit {
namespace {

// Everything that makes two nodes compute the same value. Inputs never merge (kInput keys
// include their index).
// A recomputed copy (ir::Node::recomputed) stays apart from the value it copies.
using Key = std::tuple<int, std::vector<int>, int64_t, double, int64_t, bool, bool, bool, float,
                       int64_t, int64_t, int64_t, int, std::vector<int64_t>, std::string, bool>;

Key KeyOf(const ir::Node& n) {
  const ir::Attrs& a = n.attrs;
  return {static_cast<int>(n.op),
          n.inputs,
          a.index,
          a.scalar,
          a.axis,
          a.keepdims,
          a.transpose_a,
          a.transpose_b,
          a.eps,
          a.start,
          a.end,
          a.step,
          static_cast<int>(a.dtype),
          a.ints,
          ir::ShapeToString(a.shape),
          n.recomputed};
}

}  // namespace

void EliminateCommonSubexpressions(ir::Graph& graph) {
  std::vector<int> replacement(graph.nodes.size());
  std::iota(replacement.begin(), replacement.end(), 0);
  std::map<Key, int> seen;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::Node& n = graph.nodes[i];
    for (int& in : n.inputs) in = replacement[in];
    auto [it, inserted] = seen.emplace(KeyOf(n), static_cast<int>(i));
    if (!inserted) replacement[i] = it->second;
  }
  ApplyReplacements(graph, replacement);
}

}  // namespace pto::jit
