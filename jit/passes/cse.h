// Pass: common-subexpression elimination (same op, attrs and inputs; constants by value).
#ifndef PTO_JIT_PASSES_CSE_H_
#define PTO_JIT_PASSES_CSE_H_

#include "jit/ir/graph.h"

namespace pto::jit {

void EliminateCommonSubexpressions(ir::Graph& graph);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_CSE_H_
