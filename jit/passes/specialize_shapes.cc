#include "jit/passes/specialize_shapes.h"

namespace pto::jit {

void SpecializeShapes(ir::Graph& graph,
                      const std::vector<std::optional<ir::SymExpr>>& replacement) {
  for (ir::Node& node : graph.nodes) {
    for (ir::SymExpr& dim : node.shape) dim = dim.Substitute(replacement);
    for (ir::SymExpr& dim : node.attrs.shape) dim = dim.Substitute(replacement);
  }
}

}  // namespace pto::jit
