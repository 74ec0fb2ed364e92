// Pass: gradient checkpointing. The forward values a checkpoint segment computed
// (pto::checkpoint marks them: ir::Node::checkpoint) that the backward pass reads are computed
// again in the backward pass from the segment's inputs, which are kept; nothing else of the
// segment stays alive between the two passes. Clears every checkpoint mark.
#ifndef PTO_JIT_PASSES_RECOMPUTE_CHECKPOINTS_H_
#define PTO_JIT_PASSES_RECOMPUTE_CHECKPOINTS_H_

#include "jit/ir/graph.h"

namespace pto::jit {

// `graph`'s nodes [0, forward_nodes) are the forward program, the rest the backward one (as
// jit::Differentiate leaves them). Returns the number of values recomputed.
int RecomputeCheckpoints(ir::Graph& graph, int forward_nodes);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_RECOMPUTE_CHECKPOINTS_H_
