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

llvm::Constant* BoundsChecks::Name(int slot) const {
  if (slot == kScratch) return String("pto.bounds.scratch", "the scratch");
  return String(absl::StrCat("pto.bounds.buffer", slot),
                absl::StrCat("buffer ", slot, " (", ec_.kernel.buffer_extents[slot].name, ")"));
}

void BoundsChecks::Check(int slot, llvm::Value* first, llvm::Value* stride, int width,
                         llvm::Value* mask, bool store) {
  llvm::IRBuilder<>& b = ec_.b;
  llvm::Value* extent = Extent(slot);
  // Frozen: ScalarEvolution does not analyse the tests (most of the extra compile time of a
  // checked matmul went there; a test it could prove is rare, extents being runtime values).
  first = b.CreateFreeze(first);
  if (width > 1 && mask != nullptr && ec_.LaneCount(mask) != nullptr) {
    // The lanes of LaneMask(count): [0, min(count, width)), lane 0 always.
    llvm::Value* lanes =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, ec_.LaneCount(mask), ec_.I64Const(width));
    llvm::Value* last = b.CreateAdd(first, b.CreateMul(stride == nullptr ? ec_.I64Const(1) : stride,
                                                       b.CreateSub(lanes, ec_.I64Const(1))));
    Add({.bad = b.CreateOr(b.CreateICmpUGE(first, extent), b.CreateICmpUGE(last, extent)),
         .slot = slot,
         .first = first,
         .last = last,
         .store = store});
    return;
  }
  if (width > 1 && mask != nullptr) {
    if (stride == nullptr) stride = ec_.I64Const(1);
    llvm::Value* lanes =
        b.CreateAdd(b.CreateVectorSplat(width, first),
                    b.CreateMul(ec_.LaneIndices(width), b.CreateVectorSplat(width, stride)));
    llvm::Value* outside =
        b.CreateAnd(b.CreateICmpUGE(lanes, b.CreateVectorSplat(width, extent)), mask);
    Add({.bad = b.CreateOrReduce(outside),
         .slot = slot,
         .lane_indices = lanes,
         .lane_outside = outside,
         .store = store});
    return;
  }
  // Unsigned: a negative index is outside too. Every element between first and last lies
  // inside when both do.
  llvm::Value* last = first;
  if (width > 1) {
    last = b.CreateAdd(first, stride == nullptr ? ec_.I64Const(width - 1)
                                                : b.CreateMul(stride, ec_.I64Const(width - 1)));
  }
  llvm::Value* bad = b.CreateICmpUGE(first, extent);
  if (last != first) bad = b.CreateOr(bad, b.CreateICmpUGE(last, extent));
  Add({.bad = bad, .slot = slot, .first = first, .last = last, .store = store});
}

void BoundsChecks::CheckCount(int slot, llvm::Value* first, llvm::Value* count, bool store) {
  llvm::IRBuilder<>& b = ec_.b;
  llvm::Value* extent = Extent(slot);
  llvm::Value* last = b.CreateSub(b.CreateAdd(first, count), ec_.I64Const(1));
  llvm::Value* outside = b.CreateOr(b.CreateICmpUGE(first, extent), b.CreateICmpUGE(last, extent));
  Add({.bad = b.CreateAnd(b.CreateICmpSGT(count, ec_.I64Const(0)), outside),
       .slot = slot,
       .first = first,
       .last = last,
       .store = store});
}

void BoundsChecks::Add(Test test) {
  if (grouping_) {
    group_.push_back(test);
  } else {
    Branch({test});
  }
}

void BoundsChecks::EndGroup() {
  grouping_ = false;
  if (!group_.empty()) Branch(group_);
  group_.clear();
}

void BoundsChecks::Branch(const std::vector<Test>& tests) {
  llvm::IRBuilder<>& b = ec_.b;
  llvm::Value* bad = tests[0].bad;
  for (size_t i = 1; i < tests.size(); ++i) bad = b.CreateOr(bad, tests[i].bad);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ec_.ctx, "bounds.ok", ec_.fn);
  llvm::MDNode* unlikely = llvm::MDBuilder(ec_.ctx).createUnlikelyBranchWeights();
  llvm::BasicBlock* from = b.GetInsertBlock();
  const bool direct = tests.size() == 1 && tests[0].lane_indices == nullptr;
  llvm::BasicBlock* which = nullptr;
  if (!direct) which = llvm::BasicBlock::Create(ec_.ctx, "bounds.which", ec_.fn);
  b.CreateCondBr(bad, direct ? Fault() : which, ok, unlikely);
  if (which != nullptr) {
    // The first failed test's report: selects from the last test back to the first.
    b.SetInsertPoint(which);
    llvm::Value *buffer = nullptr, *first = nullptr, *last = nullptr, *extent = nullptr,
                *store = nullptr;
    for (size_t i = tests.size(); i-- > 0;) {
      const Test& t = tests[i];
      llvm::Value* t_first = t.first;
      llvm::Value* t_last = t.last;
      if (t.lane_indices != nullptr) {
        const unsigned width =
            llvm::cast<llvm::FixedVectorType>(t.lane_outside->getType())->getNumElements();
        llvm::Value* bits = b.CreateBitCast(t.lane_outside, b.getIntNTy(width));
        // cttz of 0 (this lane test passed) is poison: then its values are never selected
        // (freeze keeps the selects well defined).
        llvm::Value* lane =
            b.CreateFreeze(b.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, bits, b.getTrue()));
        lane = b.CreateSelect(b.CreateICmpULT(lane, b.getIntN(width, width)), lane,
                              b.getIntN(width, 0));
        t_first = t_last = b.CreateExtractElement(t.lane_indices, lane);
      }
      if (buffer == nullptr) {
        buffer = Name(t.slot);
        first = t_first;
        last = t_last;
        extent = Extent(t.slot);
        store = b.getInt32(t.store ? 1 : 0);
        continue;
      }
      buffer = b.CreateSelect(t.bad, Name(t.slot), buffer);
      first = b.CreateSelect(t.bad, t_first, first);
      last = b.CreateSelect(t.bad, t_last, last);
      extent = b.CreateSelect(t.bad, Extent(t.slot), extent);
      store = b.CreateSelect(t.bad, b.getInt32(t.store ? 1 : 0), store);
    }
    b.CreateBr(Fault());
    from = which;
    fault_buffer_->addIncoming(buffer, from);
    fault_first_->addIncoming(first, from);
    fault_last_->addIncoming(last, from);
    fault_extent_->addIncoming(extent, from);
    fault_store_->addIncoming(store, from);
  } else {
    const Test& t = tests[0];
    fault_buffer_->addIncoming(Name(t.slot), from);
    fault_first_->addIncoming(t.first, from);
    fault_last_->addIncoming(t.last, from);
    fault_extent_->addIncoming(Extent(t.slot), from);
    fault_store_->addIncoming(b.getInt32(t.store ? 1 : 0), from);
  }
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
  llvm::FunctionType* type =
      llvm::FunctionType::get(fb.getVoidTy(),
                              {fb.getPtrTy(), fb.getPtrTy(), fb.getInt64Ty(), fb.getInt64Ty(),
                               fb.getInt64Ty(), fb.getInt32Ty()},
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

}  // namespace pto::jit
