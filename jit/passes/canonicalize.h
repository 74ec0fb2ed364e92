// Pass: algebraic identities (x*1, x+0, x-0, x/1, --x), no-op transposes, reshapes, broadcasts
// and casts, and folding of scalar-constant arithmetic.
#ifndef PTO_JIT_PASSES_CANONICALIZE_H_
#define PTO_JIT_PASSES_CANONICALIZE_H_

#include "jit/ir/graph.h"

namespace pto::jit {

void Canonicalize(ir::Graph& graph);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_CANONICALIZE_H_
