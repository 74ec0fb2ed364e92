// One emitter per kernel kind; each emits the loop nest over the tile range into ec.fn at the
// builder's position (after the entry loads) and leaves the builder in the final block.
#ifndef PTO_JIT_CODEGEN_EMIT_KINDS_H_
#define PTO_JIT_CODEGEN_EMIT_KINDS_H_

#include "absl/status/status.h"
#include "jit/codegen/emit_access.h"
#include "jit/codegen/emit_context.h"

namespace pto::jit {

absl::Status EmitElementwise(EmitContext& ec, AccessEmitter& access);  // emit_elementwise.cc
absl::Status EmitReduce(EmitContext& ec, AccessEmitter& access);       // emit_reduce.cc
absl::Status EmitRowOp(EmitContext& ec, AccessEmitter& access);        // emit_row_op.cc
absl::Status EmitMatMul(EmitContext& ec, AccessEmitter& access);       // emit_matmul.cc
absl::Status EmitScatterAdd(EmitContext& ec, AccessEmitter& access);   // emit_scatter_add.cc

// Per-thread scratch a row op needs (the plan provides it): softmax with streaming stores keeps
// its exp row there, so the output is written once. 0 otherwise, and for a symbolic row length
// (which then keeps the row in the output, as without streaming).
int64_t RowOpScratchBytes(const ir::Kernel& kernel);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_KINDS_H_
