// Loop skeletons used by every kernel kind (internal to jit/codegen).
#ifndef PTO_JIT_CODEGEN_EMIT_LOOPS_H_
#define PTO_JIT_CODEGEN_EMIT_LOOPS_H_

#include <cstdint>
#include <functional>

#include "jit/codegen/emit_access.h"
#include "jit/codegen/emit_context.h"

namespace pto::jit {

// for (iv = begin; iv < end; ++iv) body(iv). The builder ends in the exit block.
void EmitForLoop(EmitContext& ec, llvm::Value* begin, llvm::Value* end,
                 const std::function<void(llvm::Value* iv)>& body, bool disable_unroll = false);
// The same with the back edge's loop metadata given (e.g. EmitContext::UnrollMetadata).
void EmitForLoop(EmitContext& ec, llvm::Value* begin, llvm::Value* end,
                 const std::function<void(llvm::Value* iv)>& body, llvm::MDNode* loop_metadata);

// if (cond) then(); else otherwise();   (otherwise may be null.) The builder ends after both.
void EmitIfElse(EmitContext& ec, llvm::Value* cond, const std::function<void()>& then,
                const std::function<void()>& otherwise = nullptr);

// while (*pos + chunk <= end) { body(*pos); *pos += chunk; }   (`pos` is an i64 alloca)
void EmitChunkLoop(EmitContext& ec, llvm::AllocaInst* pos, llvm::Value* end, int64_t chunk,
                   const std::function<void(llvm::Value* at)>& body, bool disable_unroll);

// while (*pos < end) body(*pos), where the body stores the next position into `pos` itself (a
// step that varies from one iteration to the next). The builder ends in the exit block.
void EmitWhileLoop(EmitContext& ec, llvm::AllocaInst* pos, llvm::Value* end,
                   const std::function<void(llvm::Value* at)>& body);

// Covers [begin, end) with `unroll` vectors of ec.lanes per iteration (body called once per
// vector with slot = 0..unroll-1), then single vectors (slot 0), then a scalar tail
// (width 1, slot 0). Any extent works, including 0.
// With `masked_tail`, the last elements (fewer than a vector) are one vector instead (width
// ec.lanes, slot 0) with masked_tail->MaskLanes set to their lanes while the body runs: its
// accesses' loads and stores touch only those lanes, and a body that combines lanes reads
// lane_mask() to put identities in the others.
// With `fused`, the unrolled part calls body once per iteration with width = ec.lanes * unroll
// (slot 0): the body is emitted on one wide vector that instruction selection splits into
// `unroll` native vectors op by op, so their independent dependency chains are interleaved in
// the instruction stream (long transcendental chains then overlap in the out-of-order window
// instead of running one vector after another).
using SpanBody = std::function<void(llvm::Value* at, int width, int slot)>;
void EmitVectorSpan(EmitContext& ec, llvm::Value* begin, llvm::Value* end, int unroll,
                    const SpanBody& body, bool fused = false, AccessEmitter* masked_tail = nullptr);

// EmitVectorSpan after a scalar peel that brings `address_at_begin` (the f32 element stored at
// `begin`, 4-byte aligned) to a multiple of ec.lanes * 4 bytes, so every vector store of the
// span is aligned (non-temporal stores need it).
void EmitAlignedVectorSpan(EmitContext& ec, llvm::Value* begin, llvm::Value* end, int unroll,
                           llvm::Value* address_at_begin, const SpanBody& body, bool fused = false,
                           AccessEmitter* masked_tail = nullptr);

// sfence: non-temporal stores are ordered before the kernel returns (and a task's completion
// is seen by another thread).
void EmitStoreFence(EmitContext& ec);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_LOOPS_H_
