// A transposing copy (ir::TransposingCopyOf) moves blocks of lanes x lanes elements: `lanes`
// vector loads along the load's unit stride, a transpose in registers (log2(lanes) rounds of
// interleaves), `lanes` vector stores along the store's. An element-by-element copy instead
// reads or writes `lanes` lines per vector, often lines a power-of-two stride apart that share
// a few cache sets. The block sweep runs along the store's unit stride, so each store line
// fills in consecutive blocks. Rows and columns outside full blocks take the element path.
#ifndef PTO_JIT_CODEGEN_EMIT_TRANSPOSING_COPY_H_
#define PTO_JIT_CODEGEN_EMIT_TRANSPOSING_COPY_H_

#include <functional>

#include "jit/codegen/emit_access.h"
#include "jit/codegen/emit_context.h"
#include "jit/ir/tile_ir.h"

namespace pto::jit {

// Emits the copy of the task's range; `kind` is not kNone and ec.lanes a power of two above
// 1. `element_row(row, lo, hi)` emits the element path for columns [lo, hi) of grid row `row`.
void EmitTransposingCopy(
    EmitContext& ec, AccessEmitter& access, ir::TransposingCopy kind,
    const std::function<void(llvm::Value* row, llvm::Value* lo, llvm::Value* hi)>& element_row);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_TRANSPOSING_COPY_H_
