// Pass (level 1 -> 2): decides which tensor-graph nodes get a buffer and which are computed
// inside another node's kernel.
//   - elementwise ops with one use are recomputed inside their consumer (chains fuse into one
//     pass over memory, and into a reduction's or row op's prologue);
//   - a matmul, reduction or row op absorbs the chain of single-use elementwise consumers of
//     its own shape as its epilogue (bias, activation, residual add);
//   - transposes, slices and reshapes are views: they change how consumers index a buffer.
#ifndef PTO_JIT_PASSES_FUSION_GROUPS_H_
#define PTO_JIT_PASSES_FUSION_GROUPS_H_

#include <vector>

#include "jit/ir/graph.h"

namespace pto::jit {

enum class NodeRole : uint8_t {
  kInput,        // a Function input: the caller's buffer
  kConstant,     // a scalar, folded into expressions
  kInline,       // recomputed inside its (single) consumer's kernel
  kView,         // transpose, slice or reshape: an index transformation
  kRoot,         // computed by its own kernel into a buffer
  kFusedAnchor,  // a matmul/reduction/row op whose result feeds its epilogue, never stored
  kAbsorbed,     // an epilogue op of the group of `anchor`
};

struct FusionGroups {
  std::vector<NodeRole> role;
  // For kRoot, kFusedAnchor and kAbsorbed nodes of a group: the group's anchor; else -1.
  std::vector<int> anchor;
};

FusionGroups FormFusionGroups(const ir::Graph& graph);
bool IsAnchorOp(ir::OpKind op);  // matmul, reductions, row ops

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_FUSION_GROUPS_H_
