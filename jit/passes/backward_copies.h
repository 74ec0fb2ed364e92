// The machinery the recomputation passes share (recompute_cheap_values, recompute_checkpoints):
// backward nodes read copies of chosen forward values instead of the values themselves, so
// those values need not stay alive from the forward pass to the backward one.
#ifndef PTO_JIT_PASSES_BACKWARD_COPIES_H_
#define PTO_JIT_PASSES_BACKWARD_COPIES_H_

#include <functional>
#include <vector>

#include "jit/ir/graph.h"

namespace pto::jit {

// `graph`'s nodes [0, forward_nodes) are the forward program, the rest the backward one. Each
// backward node that reads a forward node v with recompute[v] reads instead a copy of v, made
// once, just before the first backward node that needs it. A copy's inputs are copies too where
// copied(input, node) holds (input among node's inputs), and the original values elsewhere
// (the values kept). Copies are marked ir::Node::recomputed. Returns how many forward values
// the backward nodes read are recomputed (not counting the copies those need in turn).
int CopyForBackward(ir::Graph& graph, int forward_nodes, const std::vector<bool>& recompute,
                    const std::function<bool(int input, int node)>& copied);

// Per forward node: some backward node reads it (the values saved for the backward pass).
std::vector<bool> ReadByBackward(const ir::Graph& graph, int forward_nodes);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_BACKWARD_COPIES_H_
