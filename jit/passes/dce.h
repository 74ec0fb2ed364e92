// Pass: removes nodes no output depends on (inputs are kept: they are the signature) and
// renumbers the rest densely in topological order.
#ifndef PTO_JIT_PASSES_DCE_H_
#define PTO_JIT_PASSES_DCE_H_

#include "jit/ir/graph.h"

namespace pto::jit {

void EliminateDeadCode(ir::Graph& graph);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_DCE_H_
