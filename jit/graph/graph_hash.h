// The canonical hash of a tensor graph: the graph part of kernel, plan and tuning cache keys.
//
// It is a persistent format: a hash written into a cache by one build must be computed the
// same way by every later build on every host. Any change to what is hashed, or how, must
// bump kGraphHashVersion (which is itself hashed); tests/jit/graph checks a golden value.
//
// Algorithm (version 1)
//
// 1. Canonical node order. Depth-first from the outputs in output order, visiting a node's
//    inputs in input order, numbering nodes in post-order (a node after all its inputs); then,
//    the same from every input node not yet reached, in ascending input index. This order
//    depends only on the graph's structure, not on node ids, node names or the order in which
//    independent ops were traced. Nodes that are neither inputs nor reach an output (dead code)
//    are not part of the hash: they do not change what the graph computes.
// 2. Canonical symbols. Symbols are renumbered 0, 1, ... in order of first use, scanning the
//    nodes in canonical order and each node's dims in order. Symbols first used together in
//    one dim are numbered by ascending (min, max), then by their original id. Names are not
//    hashed; which dims share a symbol, and each symbol's range, are.
//    (Two graphs that differ only in the ids of symbols first used together in one dim with
//    equal ranges may hash differently: a cache miss, never a wrong hit.)
// 3. Canonical bytes, all integers little-endian: the 8 bytes "ptograph", u32
//    kGraphHashVersion, u32 node count, then one record per node in canonical order:
//      u8 op, u8 dtype,
//      attrs in ir::Attrs field order: i64 index, u64 bits of scalar (double), i64 axis,
//        u8 keepdims, u8 transpose_a, u8 transpose_b, u32 bits of eps (float), i64 start,
//        i64 end, i64 step, u8 dtype, u32 count + i64 each of ints,
//      u32 rank, per dim: u32 term count, per term (ir::SymExpr order after renumbering):
//        i64 coeff, u32 degree + u32 each canonical symbol id (ascending),
//      u32 input count + u32 canonical position of each input, in input order.
//    Then: u32 count + u32 canonical position of each output, in output order; i64 num_inputs;
//    u32 count of used symbols + (i64 min, i64 max) of each in canonical order.
//    Inputs are referenced by position, not by content, so sharing is hashed: add(e, e) and
//    add(e, e') with e' a copy of e differ. Floats are hashed by bit pattern (-0.0 != 0.0).
// 4. Hash: SipHash-2-4 with 128-bit output over those bytes, keyed with the 16 ASCII bytes
//    "pto-graph-hash-1". lo is output bytes 0..7, hi bytes 8..15, each little-endian.
#ifndef PTO_JIT_GRAPH_GRAPH_HASH_H_
#define PTO_JIT_GRAPH_GRAPH_HASH_H_

#include <cstdint>
#include <string>

#include "jit/ir/graph.h"

namespace pto::graph {

inline constexpr uint32_t kGraphHashVersion = 1;

struct GraphHash {
  uint64_t hi = 0;
  uint64_t lo = 0;

  // 32 lowercase hex digits: hi then lo, most significant digit first.
  std::string Hex() const;

  friend bool operator==(const GraphHash&, const GraphHash&) = default;
};

// The canonical hash of `graph` (algorithm above). `graph` must be structurally valid, as
// FromGraphDef guarantees: node and symbol ids in range, inputs before users.
GraphHash CanonicalGraphHash(const ir::Graph& graph);

}  // namespace pto::graph

#endif  // PTO_JIT_GRAPH_GRAPH_HASH_H_
