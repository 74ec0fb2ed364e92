// Pass: after differentiation, the backward pass computes cheap forward values again instead of
// reading the originals, so those need not stay alive from the forward pass to the backward
// one. This is AOTAutograd's min-cut partitioner: which forward values to keep for the backward
// pass is a minimum cut, weighted by bytes, between what the forward pass must compute
// (inputs, constants, outputs, every op that is not elementwise, and every value a backward
// matmul or reshape reads from memory: rebuilt for such a reader, a value would take a kernel of
// its own, so recomputing it is not free) and what the backward pass reads. Values the cut keeps
// are saved; the backward readers of the rest read copies of their elementwise cones, rebuilt
// from saved values. Recomputing a gelu from its saved input, for an elementwise reader, is
// cheaper than keeping both alive; keeping one input of two elementwise results is cheaper than
// keeping both results. Copies are marked ir::Node::recomputed so CSE does not merge them back;
// fusion then inlines them into the backward kernels that read them.
#ifndef PTO_JIT_PASSES_RECOMPUTE_CHEAP_VALUES_H_
#define PTO_JIT_PASSES_RECOMPUTE_CHEAP_VALUES_H_

#include <cstdint>
#include <span>

#include "jit/ir/graph.h"

namespace pto::jit {

// An elementwise value more than this many elementwise ops above the nearest value that is
// not elementwise (or an input) is never recomputed: a backward kernel repeats at most this
// deep a chain.
inline constexpr int kMaxRecomputedDepth = 8;

// A value's weight in the cut is its bytes with each symbol at this value (its range allowing),
// since the pass runs on the symbolic graph, before any call binds the symbols.
inline constexpr int64_t kNominalSymbolValue = 64;

// `graph`'s nodes [0, forward_nodes) are the forward program, the rest the backward one (as
// jit::Differentiate leaves them). Returns the number of values the backward nodes read that
// are now recomputed.
int RecomputeCheapValues(ir::Graph& graph, int forward_nodes);

// Bytes of the forward values the backward nodes read, inputs and constants left out: the
// activations saved for the backward pass, with the graph's symbols at `symbol_values`.
int64_t SavedBytes(const ir::Graph& graph, int forward_nodes,
                   std::span<const int64_t> symbol_values);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_RECOMPUTE_CHEAP_VALUES_H_
