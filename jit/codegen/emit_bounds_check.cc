#include "jit/codegen/emit_bounds_check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/codegen/bounds_fault.h"
#include "jit/codegen/emit_context.h"
#include "jit/codegen/emit_kernel.h"
#include "llvm/IR/MDBuilder.h"

namespace pto::jit {

BoundsChecks::BoundsChecks(EmitContext& ec) : ec_(ec) {
  for (const ir::BufferExtent& e : ec.kernel.buffer_extents) extents_.push_back(ec.Sym(e.elements));
  scratch_extent_ = ec.I64Const(KernelScratchBytes(ec.kernel) / 4);
}

llvm::Value* BoundsChecks::Extent(int slot) const {
  return slot == kScratch ? scratch_extent_ : extents_[slot];
}

llvm::Constant* BoundsChecks::String(const std::string& global, const std::string& text) const {
  if (llvm::GlobalVariable* g = ec_.module.getNamedGlobal(global)) return g;
  return ec_.b.CreateGlobalString(text, global, 0, &ec_.module);
}

void BoundsChecks::Check(int slot, llvm::Value* first, llvm::Value* stride, int width,
                         llvm::Value* mask, bool store) {
  llvm::IRBuilder<>& b = ec_.b;
  if (width <= 1) {
    CheckRange(slot, first, first, store);
    return;
  }
  if (stride == nullptr) stride = ec_.I64Const(1);
  if (mask == nullptr) {
    CheckRange(slot, first, b.CreateAdd(first, b.CreateMul(stride, ec_.I64Const(width - 1))),
               store);
    return;
  }
  llvm::Value* lanes =
      b.CreateAdd(b.CreateVectorSplat(width, first),
                  b.CreateMul(ec_.LaneIndices(width), b.CreateVectorSplat(width, stride)));
  CheckLanes(slot, lanes, mask, store);
}

void BoundsChecks::CheckCount(int slot, llvm::Value* first, llvm::Value* count, bool store) {
  llvm::IRBuilder<>& b = ec_.b;
  llvm::Value* extent = Extent(slot);
  llvm::Value* last = b.CreateSub(b.CreateAdd(first, count), ec_.I64Const(1));
  llvm::Value* outside = b.CreateOr(b.CreateICmpUGE(first, extent), b.CreateICmpUGE(last, extent));
  BranchToFault(b.CreateAnd(b.CreateICmpSGT(count, ec_.I64Const(0)), outside), slot, first, last,
                store);
}

void BoundsChecks::CheckRange(int slot, llvm::Value* first, llvm::Value* last, bool store) {
  llvm::IRBuilder<>& b = ec_.b;
  // Unsigned: a negative index is outside too.
  llvm::Value* extent = Extent(slot);
  llvm::Value* bad = b.CreateICmpUGE(first, extent);
  if (last != first) bad = b.CreateOr(bad, b.CreateICmpUGE(last, extent));
  BranchToFault(bad, slot, first, last, store);
}

void BoundsChecks::CheckLanes(int slot, llvm::Value* indices, llvm::Value* mask, bool store) {
  llvm::IRBuilder<>& b = ec_.b;
  const int width = static_cast<int>(llvm::cast<llvm::FixedVectorType>(indices->getType())
                                         ->getNumElements());
  llvm::Value* outside =
      b.CreateAnd(b.CreateICmpUGE(indices, b.CreateVectorSplat(width, Extent(slot))), mask);
  llvm::Value* bad = b.CreateOrReduce(outside);
  // The first lane outside, found on the way to the fault only.
  llvm::BasicBlock* lane_bb = llvm::BasicBlock::Create(ec_.ctx, "bounds.lane", ec_.fn);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ec_.ctx, "bounds.ok", ec_.fn);
  b.CreateCondBr(bad, lane_bb, ok, llvm::MDBuilder(ec_.ctx).createUnlikelyBranchWeights());
  b.SetInsertPoint(lane_bb);
  llvm::Value* bits = b.CreateBitCast(outside, b.getIntNTy(static_cast<unsigned>(width)));
  llvm::Value* lane = b.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, bits, b.getTrue());
  llvm::Value* index = b.CreateExtractElement(indices, lane);
  b.CreateBr(Fault());
  AddFaultEdge(lane_bb, slot, index, index, store);
  b.SetInsertPoint(ok);
}

llvm::BasicBlock* BoundsChecks::Fault() {
  if (fault_ != nullptr) return fault_;
  fault_ = llvm::BasicBlock::Create(ec_.ctx, "bounds.fault", ec_.fn);
  llvm::IRBuilder<> fb(fault_);
  fault_buffer_ = fb.CreatePHI(fb.getPtrTy(), 4, "buffer");
  fault_first_ = fb.CreatePHI(fb.getInt64Ty(), 4, "first");
  fault_last_ = fb.CreatePHI(fb.getInt64Ty(), 4, "last");
  fault_extent_ = fb.CreatePHI(fb.getInt64Ty(), 4, "extent");
  fault_store_ = fb.CreatePHI(fb.getInt32Ty(), 4, "store");
  llvm::FunctionType* type = llvm::FunctionType::get(
      fb.getVoidTy(),
      {fb.getPtrTy(), fb.getPtrTy(), fb.getInt64Ty(), fb.getInt64Ty(), fb.getInt64Ty(),
       fb.getInt32Ty()},
      false);
  llvm::FunctionCallee handler = ec_.module.getOrInsertFunction(kBoundsFaultSymbol, type);
  if (auto* f = llvm::dyn_cast<llvm::Function>(handler.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoReturn);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::Cold);
  }
  llvm::CallInst* call =
      fb.CreateCall(handler, {String("pto.bounds.kernel", ec_.kernel.name), fault_buffer_,
                              fault_first_, fault_last_, fault_extent_, fault_store_});
  call->setDoesNotReturn();
  fb.CreateUnreachable();
  return fault_;
}

void BoundsChecks::AddFaultEdge(llvm::BasicBlock* from, int slot, llvm::Value* first,
                                llvm::Value* last, bool store) {
  const std::string name =
      slot == kScratch
          ? std::string("the scratch")
          : absl::StrCat("buffer ", slot, " (", ec_.kernel.buffer_extents[slot].name, ")");
  fault_buffer_->addIncoming(
      String(slot == kScratch ? "pto.bounds.scratch" : absl::StrCat("pto.bounds.buffer", slot),
             name),
      from);
  fault_first_->addIncoming(first, from);
  fault_last_->addIncoming(last, from);
  fault_extent_->addIncoming(Extent(slot), from);
  fault_store_->addIncoming(ec_.b.getInt32(store ? 1 : 0), from);
}

void BoundsChecks::BranchToFault(llvm::Value* bad, int slot, llvm::Value* first,
                                 llvm::Value* last, bool store) {
  llvm::IRBuilder<>& b = ec_.b;
  llvm::BasicBlock* from = b.GetInsertBlock();
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ec_.ctx, "bounds.ok", ec_.fn);
  b.CreateCondBr(bad, Fault(), ok, llvm::MDBuilder(ec_.ctx).createUnlikelyBranchWeights());
  AddFaultEdge(from, slot, first, last, store);
  b.SetInsertPoint(ok);
}

}  // namespace pto::jit
