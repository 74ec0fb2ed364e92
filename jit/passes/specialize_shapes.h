// Pass: binds the graph's symbols for one shape class (a symbol whose class is one value
// becomes that constant), rewriting every shape.
#ifndef PTO_JIT_PASSES_SPECIALIZE_SHAPES_H_
#define PTO_JIT_PASSES_SPECIALIZE_SHAPES_H_

#include <optional>
#include <vector>

#include "jit/ir/graph.h"

namespace pto::jit {

// replacement[s] replaces symbol s where it has a value.
void SpecializeShapes(ir::Graph& graph, const std::vector<std::optional<ir::SymExpr>>& replacement);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_SPECIALIZE_SHAPES_H_
