// Shared rewriting helpers for the tensor-graph passes.
#ifndef PTO_JIT_PASSES_GRAPH_REWRITE_H_
#define PTO_JIT_PASSES_GRAPH_REWRITE_H_

#include <vector>

#include "jit/ir/graph.h"

namespace pto::jit {

// Points every use of node i (inputs and graph outputs) at replacement[i]. Replacements must
// come earlier in topological order than their users. Dead nodes stay until DCE.
void ApplyReplacements(ir::Graph& graph, const std::vector<int>& replacement);

// Number of uses of each node: one per input slot that names it, plus one per graph output.
std::vector<int> CountUses(const ir::Graph& graph);

// Each node's consumers: one entry per input slot that names it (x * x lists its node twice).
std::vector<std::vector<int>> Consumers(const ir::Graph& graph);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_GRAPH_REWRITE_H_
