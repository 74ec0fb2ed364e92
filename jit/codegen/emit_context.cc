#include "jit/codegen/emit_context.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "jit/codegen/emit_bounds_check.h"
#include "llvm/IR/MDBuilder.h"

namespace pto::jit {
namespace {

void CollectSymbols(const ir::SymExpr& e, std::set<int>* out) {
  for (int s : e.Symbols()) out->insert(s);
}

}  // namespace

EmitContext::EmitContext(const ir::Kernel& kernel, const CodegenTarget& target,
                         const CodegenOptions& options, int lanes, llvm::Module& module,
                         llvm::Function* fn, llvm::IRBuilder<>& b)
    : kernel(kernel),
      target(target),
      options(options),
      lanes(lanes),
      module(module),
      ctx(module.getContext()),
      fn(fn),
      b(b) {}

EmitContext::~EmitContext() = default;

void EmitContext::Check(int slot, llvm::Value* first, llvm::Value* stride, int width,
                        llvm::Value* mask, bool store) {
  if (checks_ != nullptr) checks_->Check(slot, first, stride, width, mask, store);
}

void EmitContext::CheckCount(int slot, llvm::Value* first, llvm::Value* count, bool store) {
  if (checks_ != nullptr) checks_->CheckCount(slot, first, count, store);
}

void EmitContext::CheckGroup(const std::function<void()>& body) {
  if (checks_ == nullptr) {
    body();
    return;
  }
  checks_->BeginGroup();
  body();
  checks_->EndGroup();
}

llvm::Type* EmitContext::VecType(int width) const {
  if (width == 1) return F32();
  return llvm::FixedVectorType::get(F32(), width);
}

llvm::Value* EmitContext::F32Const(int width, double v) const {
  return llvm::ConstantFP::get(VecType(width), v);
}

llvm::Value* EmitContext::LaneIndices(int width) const {
  std::vector<llvm::Constant*> lanes;
  for (int i = 0; i < width; ++i) lanes.push_back(b.getInt64(static_cast<uint64_t>(i)));
  return llvm::ConstantVector::get(lanes);
}

llvm::Value* EmitContext::LaneMask(llvm::Value* count, int width) const {
  llvm::Value* mask = b.CreateICmpSLT(LaneIndices(width), b.CreateVectorSplat(width, count));
  lane_counts_[mask] = count;
  return mask;
}

llvm::Value* EmitContext::HeldLaneMask(llvm::Value* count, int width) {
  if (target.isa != device::Isa::kAvx512) return LaneMask(count, width);
  // LLVM re-makes a mask wherever it wants it in a mask register: inside a K loop, a move from
  // a general register (a constant mask) or two compares (a variable one) every iteration,
  // which the loop's FMAs wait for. Its bits read from memory once here are a value LLVM keeps
  // in the register instead.
  llvm::Value* lanes = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::umin, b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, count, I64Const(0)),
      I64Const(width));
  llvm::Value* set = b.CreateSub(b.CreateShl(I64Const(1), lanes), I64Const(1));
  llvm::Type* bits = b.getIntNTy(width);
  llvm::AllocaInst* slot = EntryAlloca(bits, "lane_mask");
  b.CreateStore(b.CreateTrunc(set, bits), slot);
  llvm::Value* mask = b.CreateBitCast(b.CreateLoad(bits, slot, /*isVolatile=*/true),
                                      llvm::FixedVectorType::get(b.getInt1Ty(), width));
  lane_counts_[mask] = count;
  return mask;
}

llvm::Value* EmitContext::LaneCount(llvm::Value* mask) const {
  auto it = lane_counts_.find(mask);
  return it == lane_counts_.end() ? nullptr : it->second;
}

llvm::Value* EmitContext::LoadLanes(llvm::Type* type, llvm::Value* ptr, llvm::Value* mask) const {
  if (mask == nullptr) return b.CreateAlignedLoad(type, ptr, llvm::Align(4));
  return b.CreateMaskedLoad(type, ptr, llvm::Align(4), mask, llvm::ConstantFP::get(type, 0.0));
}

void EmitContext::StoreLanes(llvm::Value* value, llvm::Value* ptr, llvm::Value* mask) const {
  if (mask == nullptr) {
    b.CreateAlignedStore(value, ptr, llvm::Align(4));
  } else {
    b.CreateMaskedStore(value, ptr, llvm::Align(4), mask);
  }
}

llvm::Value* EmitContext::Sym(const ir::SymExpr& e) {
  llvm::Value* sum = I64Const(0);
  for (const ir::SymExpr::Term& term : e.terms()) {
    llvm::Value* t = I64Const(term.second);
    for (int s : term.first) {
      auto it = symbols_.find(s);
      llvm::Value* v = nullptr;
      if (it != symbols_.end()) {
        v = it->second;
      } else {  // not hoisted (should not happen): load in place
        llvm::Value* p = b.CreateInBoundsGEP(I64(), symbols_array, I64Const(s));
        v = b.CreateAlignedLoad(I64(), p, llvm::Align(8), "sym");
        symbols_[s] = v;
      }
      t = b.CreateMul(t, v);
    }
    sum = b.CreateAdd(sum, t);
  }
  return sum;
}

void EmitContext::LoadSymbols() {
  std::set<int> ids;
  for (const ir::SymExpr& d : kernel.domain) CollectSymbols(d, &ids);
  CollectSymbols(kernel.k, &ids);
  for (const ir::Access& a : kernel.accesses) {
    CollectSymbols(a.offset, &ids);
    for (const ir::SymExpr& s : a.strides) CollectSymbols(s, &ids);
  }
  if (options.bounds_checks) {
    for (const ir::BufferExtent& e : kernel.buffer_extents) CollectSymbols(e.elements, &ids);
  }
  for (int id : ids) {
    llvm::Value* p = b.CreateInBoundsGEP(I64(), symbols_array, I64Const(id));
    symbols_[id] = b.CreateAlignedLoad(I64(), p, llvm::Align(8), absl::StrCat("s", id));
  }
}

void EmitContext::LoadBuffers() {
  const int n = kernel.num_buffers;
  llvm::Type* ptr = b.getPtrTy();
  buffers_.assign(n, nullptr);
  std::vector<bool> used(n, false);
  for (const ir::Access& a : kernel.accesses) used[a.buffer] = true;
  if (kernel.b_packed >= 0 && kernel.b_packed < n) used[kernel.b_packed] = true;
  for (int i = 0; i < n; ++i) {
    if (!used[i]) continue;
    llvm::Value* p = b.CreateInBoundsGEP(ptr, buffers_array, I64Const(i));
    buffers_[i] = b.CreateAlignedLoad(ptr, p, llvm::Align(8), absl::StrCat("buf", i));
  }
  llvm::MDBuilder mdb(ctx);
  llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain("pto.buffers");
  std::vector<llvm::Metadata*> scopes;
  for (int i = 0; i < n; ++i) {
    scopes.push_back(mdb.createAnonymousAliasScope(domain, absl::StrCat("buf", i)));
  }
  for (int i = 0; i < n; ++i) {
    scope_lists_.push_back(llvm::MDNode::get(ctx, {scopes[i]}));
    std::vector<llvm::Metadata*> others;
    for (int j = 0; j < n; ++j) {
      if (j != i) others.push_back(scopes[j]);
    }
    noalias_lists_.push_back(llvm::MDNode::get(ctx, others));
  }
}

void EmitContext::LoadEntry(llvm::Value* args) {
  llvm::Type* ptr = b.getPtrTy();
  buffers_array = b.CreateAlignedLoad(ptr, args, llvm::Align(8), "buffers");
  symbols_array = b.CreateAlignedLoad(ptr, b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), args, 8),
                                      llvm::Align(8), "symbols");
  LoadSymbols();
  LoadBuffers();
  if (options.bounds_checks) checks_ = std::make_unique<BoundsChecks>(*this);
}

void EmitContext::AnnotateSlot(llvm::Instruction* inst, int slot) const {
  if (slot < 0 || slot >= static_cast<int>(scope_lists_.size())) return;
  inst->setMetadata(llvm::LLVMContext::MD_alias_scope, scope_lists_[slot]);
  inst->setMetadata(llvm::LLVMContext::MD_noalias, noalias_lists_[slot]);
}

llvm::AllocaInst* EmitContext::EntryAlloca(llvm::Type* type, const char* name) {
  llvm::BasicBlock& entry = fn->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
  return eb.CreateAlloca(type, nullptr, name);
}

llvm::MDNode* EmitContext::LoopMetadata(bool disable_unroll) {
  std::vector<llvm::Metadata*> ops = {nullptr};
  ops.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                        llvm::ConstantAsMetadata::get(b.getFalse())}));
  if (disable_unroll) {
    ops.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")}));
  }
  llvm::MDNode* md = llvm::MDNode::getDistinct(ctx, ops);
  md->replaceOperandWith(0, md);
  return md;
}

llvm::MDNode* EmitContext::UnrollMetadata(int count) {
  if (count <= 1) return LoopMetadata(/*disable_unroll=*/true);
  std::vector<llvm::Metadata*> ops = {nullptr};
  ops.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                        llvm::ConstantAsMetadata::get(b.getFalse())}));
  ops.push_back(llvm::MDNode::get(
      ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.count"),
            llvm::ConstantAsMetadata::get(b.getInt32(static_cast<uint32_t>(count)))}));
  llvm::MDNode* md = llvm::MDNode::getDistinct(ctx, ops);
  md->replaceOperandWith(0, md);
  return md;
}

std::vector<llvm::Value*> EmitContext::Unflatten(llvm::Value* flat,
                                                 const std::vector<llvm::Value*>& dims) {
  std::vector<llvm::Value*> out(dims.size(), nullptr);
  llvm::Value* rest = flat;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    if (i == 0) {
      out[i] = rest;
      break;
    }
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(dims[i]); c != nullptr && c->isOne()) {
      out[i] = I64Const(0);
      continue;
    }
    out[i] = b.CreateURem(rest, dims[i]);
    rest = b.CreateUDiv(rest, dims[i]);
  }
  return out;
}

}  // namespace pto::jit
