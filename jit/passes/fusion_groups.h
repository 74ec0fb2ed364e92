// Pass (level 1 -> 2): decides which tensor-graph nodes get a buffer and which are computed
// inside another node's kernel.
//   - elementwise ops with one use are recomputed inside their consumer (chains fuse into one
//     pass over memory, and into a reduction's or row op's prologue);
//   - a matmul, reduction or row op absorbs the chain of single-use elementwise consumers of
//     its own shape as its epilogue (bias, activation, residual add);
//   - transposes, slices and reshapes are views: they change how consumers index a buffer;
//   - no kernel's expression costs more than FusionOptions::max_group_cost
//     (jit/passes/fusion_policy.h): where a group would, the largest subexpression it would
//     inline gets a buffer of its own (a long chain becomes several kernels), or its epilogue
//     ends early.
#ifndef PTO_JIT_PASSES_FUSION_GROUPS_H_
#define PTO_JIT_PASSES_FUSION_GROUPS_H_

#include <vector>

#include "jit/ir/graph.h"
#include "jit/passes/fusion_policy.h"

namespace pto::jit {

enum class NodeRole : uint8_t {
  kInput,        // a Function input: the caller's buffer
  kConstant,     // a scalar, folded into expressions
  kInline,       // recomputed inside its consumer's kernel (each one's, if it reads no memory)
  kView,         // transpose, slice or reshape: an index transformation
  kRoot,         // computed by its own kernel into a buffer
  kFusedAnchor,  // a matmul/reduction/row op whose result feeds its epilogue, never stored
  kAbsorbed,     // an epilogue op of the group of `anchor`
  // A Function output computed inline by its one consumer, an elementwise root of its shape,
  // whose kernel also stores it: sibling outputs of one pass over memory (an optimizer's new
  // moments beside its new parameters) in one kernel.
  kStoredInline,
};

struct FusionGroups {
  std::vector<NodeRole> role;
  // For kRoot, kFusedAnchor and kAbsorbed nodes of a group: the group's anchor; else -1.
  std::vector<int> anchor;
  // For kInline nodes and views: what recomputing the node inside its consumer adds to that
  // kernel's expression (the cost units of jit/passes/fusion_policy.h); 1 (a load) for
  // nodes with a buffer, and for constants.
  std::vector<int> inline_cost;
  // For kAbsorbed nodes that kernels after the group read too: the group's kernel stores the
  // value into the node's own buffer beside its root (at most one per group, of a matmul whose
  // K is at most kMaxStoredEpilogueK).
  std::vector<bool> stored;
  // For stored kAbsorbed nodes off the chain: a unary elementwise op of an epilogue value
  // (gelu's derivative beside the gelu) that the group computes too, because it is all the
  // rest of the program reads of that value: the value itself is then not stored.
  std::vector<bool> beside;
  // The cap the groups were formed under (FusionOptions::max_group_cost); the tile-graph
  // builder holds the kernels it groups itself (a concat's copies) to it too.
  int max_group_cost = kMaxFusionGroupCost;
};

struct FusionOptions {
  int max_group_cost = kMaxFusionGroupCost;
  int transcendental_cost = kTranscendentalCost;
};

FusionGroups FormFusionGroups(const ir::Graph& graph, const FusionOptions& options = {});
bool IsAnchorOp(ir::OpKind op);  // matmul, reductions, row ops
// Transpose and slice: index transformations, read where their consumers read them.
bool IsIndexView(ir::OpKind op);
// Node `consumer`'s kernel reads its input `input` from a buffer, never computing it inline: a
// matmul's operands, a reshape's input, a gather's x, a scatter_add's updates and indices.
bool ReadsFromMemory(const ir::Graph& graph, int consumer, int input);
// What computing `op` itself adds to a kernel's expression, in FusionOptions' units: a
// transcendental costs transcendental_cost, a norm also its weight and bias ops, any other 1.
int OpCost(ir::OpKind op, const FusionOptions& options);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_FUSION_GROUPS_H_
