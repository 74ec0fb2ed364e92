// Pass: after differentiation, the backward pass computes cheap forward values again instead of
// reading the originals, so those need not stay alive from the forward pass to the backward
// one (AOTAutograd's min-cut partitioner is the model; this is its greedy form). A forward value
// the backward reads is "saved". A saved elementwise value whose elementwise cone (its
// elementwise ancestors, up to values that are saved anyway, inputs and constants) has at most
// kMaxRecomputedOps ops is replaced, for its backward readers, by a copy of that cone placed
// before its first backward reader: recomputing a gelu from its saved input is cheaper than
// keeping both alive. Copies are marked ir::Node::recomputed so CSE does not merge them back;
// fusion then inlines them into the backward kernels that read them.
#ifndef PTO_JIT_PASSES_RECOMPUTE_CHEAP_VALUES_H_
#define PTO_JIT_PASSES_RECOMPUTE_CHEAP_VALUES_H_

#include <cstdint>
#include <span>

#include "jit/ir/graph.h"

namespace pto::jit {

inline constexpr int kMaxRecomputedOps = 8;

// `graph`'s nodes [0, forward_nodes) are the forward program, the rest the backward one (as
// jit::Differentiate leaves them). Returns the number of values recomputed.
int RecomputeCheapValues(ir::Graph& graph, int forward_nodes);

// Bytes of the forward values the backward nodes read, inputs and constants left out: the
// activations saved for the backward pass, with the graph's symbols at `symbol_values`.
int64_t SavedBytes(const ir::Graph& graph, int forward_nodes,
                   std::span<const int64_t> symbol_values);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_RECOMPUTE_CHEAP_VALUES_H_
