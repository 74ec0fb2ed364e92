#include "jit/codegen/emit_loops.h"

#include "llvm/IR/IntrinsicsX86.h"

namespace pto::jit {

void EmitForLoop(EmitContext& ec, llvm::Value* begin, llvm::Value* end,
                 const std::function<void(llvm::Value* iv)>& body, bool disable_unroll) {
  EmitForLoop(ec, begin, end, body, ec.LoopMetadata(disable_unroll));
}

void EmitForLoop(EmitContext& ec, llvm::Value* begin, llvm::Value* end,
                 const std::function<void(llvm::Value* iv)>& body, llvm::MDNode* loop_metadata) {
  llvm::IRBuilder<>& b = ec.b;
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ec.ctx, "loop", ec.fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ec.ctx, "loop.body", ec.fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ec.ctx, "loop.exit", ec.fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(ec.I64(), 2, "iv");
  iv->addIncoming(begin, pre);
  b.CreateCondBr(b.CreateICmpSLT(iv, end), body_bb, exit);
  b.SetInsertPoint(body_bb);
  body(iv);
  llvm::Value* next = b.CreateAdd(iv, ec.I64Const(1), "iv.next", /*HasNUW=*/true, true);
  llvm::BranchInst* back = b.CreateBr(header);
  back->setMetadata(llvm::LLVMContext::MD_loop, loop_metadata);
  iv->addIncoming(next, b.GetInsertBlock());
  b.SetInsertPoint(exit);
}

void EmitIfElse(EmitContext& ec, llvm::Value* cond, const std::function<void()>& then,
                const std::function<void()>& otherwise) {
  llvm::IRBuilder<>& b = ec.b;
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ec.ctx, "if.then", ec.fn);
  llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ec.ctx, "if.else", ec.fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ec.ctx, "if.done", ec.fn);
  b.CreateCondBr(cond, then_bb, else_bb);
  b.SetInsertPoint(then_bb);
  then();
  b.CreateBr(done);
  b.SetInsertPoint(else_bb);
  if (otherwise) otherwise();
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

void EmitChunkLoop(EmitContext& ec, llvm::AllocaInst* pos, llvm::Value* end, int64_t chunk,
                   const std::function<void(llvm::Value* at)>& body, bool disable_unroll) {
  llvm::IRBuilder<>& b = ec.b;
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ec.ctx, "chunk", ec.fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ec.ctx, "chunk.body", ec.fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ec.ctx, "chunk.exit", ec.fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::Value* at = b.CreateLoad(ec.I64(), pos, "at");
  llvm::Value* last = b.CreateAdd(at, ec.I64Const(chunk), "", true, true);
  b.CreateCondBr(b.CreateICmpSLE(last, end), body_bb, exit);
  b.SetInsertPoint(body_bb);
  body(at);
  b.CreateStore(last, pos);
  llvm::BranchInst* back = b.CreateBr(header);
  back->setMetadata(llvm::LLVMContext::MD_loop, ec.LoopMetadata(disable_unroll));
  b.SetInsertPoint(exit);
}

void EmitWhileLoop(EmitContext& ec, llvm::AllocaInst* pos, llvm::Value* end,
                   const std::function<void(llvm::Value* at)>& body) {
  llvm::IRBuilder<>& b = ec.b;
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ec.ctx, "while", ec.fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ec.ctx, "while.body", ec.fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ec.ctx, "while.exit", ec.fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::Value* at = b.CreateLoad(ec.I64(), pos, "at");
  b.CreateCondBr(b.CreateICmpSLT(at, end), body_bb, exit);
  b.SetInsertPoint(body_bb);
  body(at);
  llvm::BranchInst* back = b.CreateBr(header);
  back->setMetadata(llvm::LLVMContext::MD_loop, ec.LoopMetadata(true));
  b.SetInsertPoint(exit);
}

void EmitVectorSpan(EmitContext& ec, llvm::Value* begin, llvm::Value* end, int unroll,
                    const SpanBody& body, bool fused, AccessEmitter* masked_tail) {
  llvm::IRBuilder<>& b = ec.b;
  const int lanes = ec.lanes;
  llvm::AllocaInst* pos = ec.EntryAlloca(ec.I64(), "pos");
  b.CreateStore(begin, pos);
  if (lanes > 1 && unroll > 1) {
    EmitChunkLoop(
        ec, pos, end, static_cast<int64_t>(lanes) * unroll,
        [&](llvm::Value* at) {
          if (fused) {
            body(at, lanes * unroll, 0);
            return;
          }
          for (int u = 0; u < unroll; ++u) {
            body(b.CreateAdd(at, ec.I64Const(static_cast<int64_t>(u) * lanes)), lanes, u);
          }
        },
        /*disable_unroll=*/true);
  }
  EmitChunkLoop(
      ec, pos, end, lanes, [&](llvm::Value* at) { body(at, lanes, 0); },
      /*disable_unroll=*/lanes > 1);
  if (lanes > 1 && masked_tail != nullptr) {
    llvm::Value* at = b.CreateLoad(ec.I64(), pos);
    llvm::Value* count = b.CreateSub(end, at);
    llvm::BasicBlock* tail = llvm::BasicBlock::Create(ec.ctx, "span.masked", ec.fn);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ec.ctx, "span.done", ec.fn);
    b.CreateCondBr(b.CreateICmpSGT(count, ec.I64Const(0)), tail, done);
    b.SetInsertPoint(tail);
    masked_tail->MaskLanes(ec.LaneMask(count, lanes));
    body(at, lanes, 0);
    masked_tail->MaskLanes(nullptr);
    b.CreateBr(done);
    b.SetInsertPoint(done);
  } else if (lanes > 1) {
    EmitChunkLoop(
        ec, pos, end, 1, [&](llvm::Value* at) { body(at, 1, 0); }, /*disable_unroll=*/true);
  }
}

void EmitAlignedVectorSpan(EmitContext& ec, llvm::Value* begin, llvm::Value* end, int unroll,
                           llvm::Value* address_at_begin, const SpanBody& body, bool fused,
                           AccessEmitter* masked_tail) {
  llvm::IRBuilder<>& b = ec.b;
  const int64_t lanes = ec.lanes;
  if (lanes <= 1) {
    EmitVectorSpan(ec, begin, end, unroll, body, fused, masked_tail);
    return;
  }
  // Elements before the next multiple of lanes * 4 bytes (0 when aligned), at most the extent.
  llvm::Value* element = b.CreateLShr(b.CreatePtrToInt(address_at_begin, ec.I64()), 2);
  llvm::Value* peel = b.CreateAnd(b.CreateSub(ec.I64Const(0), element), ec.I64Const(lanes - 1));
  llvm::Value* extent = b.CreateSub(end, begin);
  peel = b.CreateSelect(b.CreateICmpSLT(peel, extent), peel, extent);
  llvm::Value* aligned = b.CreateAdd(begin, peel);
  EmitForLoop(
      ec, begin, aligned, [&](llvm::Value* at) { body(at, 1, 0); }, /*disable_unroll=*/true);
  EmitVectorSpan(ec, aligned, end, unroll, body, fused, masked_tail);
}

void EmitStoreFence(EmitContext& ec) {
  ec.b.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
}

}  // namespace pto::jit
